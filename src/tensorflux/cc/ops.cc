#include "tensorflux/cc/ops.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux {

std::string Operation::name() const { return node_ ? node_->name() : std::string(); }
std::string Operation::op_type() const { return node_ ? node_->type_string() : std::string(); }
int Operation::num_inputs() const { return node_ ? node_->num_inputs() : 0; }
int Operation::num_outputs() const { return node_ ? node_->num_outputs() : 0; }
DataType Operation::input_type(int i) const {
  return node_ && i >= 0 && i < node_->num_inputs() ? node_->input_type(i) : DT_INVALID;
}
DataType Operation::output_type(int i) const {
  return node_ && i >= 0 && i < node_->num_outputs() ? node_->output_type(i) : DT_INVALID;
}
Output Operation::input(int i) const {
  if (node_ == nullptr) return Output();
  for (const Edge* e : node_->in_edges())
    if (!e->IsControlEdge() && e->dst_input() == i) return Output(e->src(), e->src_output());
  return Output();
}
Output Operation::output(int i) const { return Output(*this, i); }

DataType Output::type() const { return op_.output_type(index_); }
std::string Output::name() const {
  return node() ? absl::StrCat(node()->name(), ":", index_) : std::string();
}

Input::Initializer::Initializer(const std::initializer_list<Initializer>& v) {
  if (v.size() == 0) {
    tensor = Tensor(DT_FLOAT, TensorShape({0}));
    return;
  }
  const Initializer& first = *v.begin();
  for (const Initializer& e : v) {
    if (!e.status.ok()) {
      status = e.status;
      return;
    }
  }
  const DataType dtype = first.tensor.dtype();
  const TensorShape& inner = first.tensor.shape();
  for (const Initializer& e : v) {
    if (e.tensor.dtype() != dtype) {
      status = errors::InvalidArgument("initializer mixes element types ", DataTypeString(dtype),
                                       " and ", DataTypeString(e.tensor.dtype()));
      return;
    }
    if (e.tensor.shape() != inner) {
      status = errors::InvalidArgument("initializer is ragged: rows of shape ",
                                       inner.DebugString(), " and ",
                                       e.tensor.shape().DebugString());
      return;
    }
  }
  std::vector<int64_t> dims = {static_cast<int64_t>(v.size())};
  for (int64_t d : inner.dim_sizes()) dims.push_back(d);
  auto shape = TensorShape::Make(dims);
  if (!shape.ok()) {
    status = shape.status();
    return;
  }
  auto t = Tensor::Allocate(dtype, *shape);
  if (!t.ok()) {
    status = t.status();
    return;
  }
  tensor = *t;
  const int64_t n = inner.num_elements();
  int64_t row = 0;
  for (const Initializer& e : v) {
    if (dtype == DT_STRING) {
      for (int64_t i = 0; i < n; ++i)
        tensor.data<std::string>()[row * n + i] = e.tensor.data<std::string>()[i];
    } else if (e.tensor.TotalBytes() > 0) {
      std::memcpy(static_cast<char*>(tensor.raw_data()) + row * e.tensor.TotalBytes(),
                  e.tensor.raw_data(), e.tensor.TotalBytes());
    }
    ++row;
  }
}

}  // namespace tensorflux
