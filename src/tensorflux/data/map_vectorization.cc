#include "tensorflux/data/map_vectorization.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace tensorflux {
namespace {

// Elementwise ops whose every result is exactly rounded (or exact), so that the kernels' vector
// and scalar paths, and any intra-op split of a batch, agree bit for bit. Binary and ternary ones
// broadcast numpy-style. Not here: transcendental ops (Exp, Log, Tanh, Sigmoid, Pow, Rsqrt...),
// AddN and ClipByValue (no broadcasting), Select (a vector condition picks rows), anything with
// state or randomness, anything that reads a shape.
const absl::flat_hash_set<std::string>& VectorizableOps() {
  static const auto* ops = new absl::flat_hash_set<std::string>{
      "Identity", "Cast", "Neg", "Abs", "Sign", "Square", "Sqrt", "Reciprocal",
      "Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "FloorDiv", "FloorMod",
      "SquaredDifference", "Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual",
      "LogicalAnd", "LogicalOr", "LogicalNot", "SelectV2"};
  return *ops;
}

// The node or arg name a body input ("x", "node:out:0") refers to.
std::string SourceName(const std::string& input) { return input.substr(0, input.find(':')); }

Status NotVectorizable(const std::string& fn, const std::string& why) {
  return errors::FailedPrecondition("map function ", fn, " is not vectorizable: ", why);
}

}  // namespace

Status CheckMapVectorizable(const FunctionDef& fdef,
                            const std::vector<PartialTensorShape>& component_shapes,
                            const std::vector<Tensor>& captured) {
  const OpDef& sig = fdef.signature();
  const std::string& fn = sig.name();
  if (sig.attr_size() > 0) return NotVectorizable(fn, "it has attrs (polymorphic)");
  if (component_shapes.empty() ||
      sig.input_arg_size() != static_cast<int>(component_shapes.size() + captured.size()))
    return NotVectorizable(fn, "its args are not the element's components and captures");
  const PartialTensorShape& s = component_shapes[0];
  if (!s.IsFullyDefined()) return NotVectorizable(fn, "the element shape is not fully defined");
  for (const PartialTensorShape& c : component_shapes) {
    if (!(c == s)) {
      return NotVectorizable(fn, absl::StrCat("components have different shapes ",
                                              s.DebugString(), " and ", c.DebugString()));
    }
  }
  const int rank = s.dims();
  // Whether each arg / node depends on a component.
  absl::flat_hash_map<std::string, bool> per_element;
  for (int i = 0; i < sig.input_arg_size(); ++i) {
    const bool component = i < static_cast<int>(component_shapes.size());
    if (!component && captured[i - component_shapes.size()].dims() > rank)
      return NotVectorizable(fn, absl::StrCat("captured argument ", sig.input_arg(i).name(),
                                              " has a rank above the element's ", rank));
    per_element[sig.input_arg(i).name()] = component;
  }
  for (const NodeDef& n : fdef.node_def()) {
    if (!VectorizableOps().contains(n.op()) && n.op() != "Const")
      return NotVectorizable(fn, absl::StrCat("node ", n.name(), " runs ", n.op()));
    if (n.op() == "Const") {
      auto v = n.attr().find("value");
      if (v == n.attr().end() || v->second.tensor().tensor_shape().unknown_rank() ||
          v->second.tensor().tensor_shape().dim_size() > rank)
        return NotVectorizable(fn, absl::StrCat("constant ", n.name(),
                                                " has a rank above the element's ", rank));
    }
    for (const std::string& in : n.input()) {
      if (!in.empty() && in[0] == '^')
        return NotVectorizable(fn, absl::StrCat("node ", n.name(), " has a control input"));
    }
    per_element.emplace(n.name(), false);
  }
  // Propagate "depends on a component" to a fixed point (node_def need not be in order).
  for (bool changed = true; changed;) {
    changed = false;
    for (const NodeDef& n : fdef.node_def()) {
      bool& mine = per_element[n.name()];
      if (mine) continue;
      for (const std::string& in : n.input()) {
        auto src = per_element.find(SourceName(in));
        if (src != per_element.end() && src->second) {
          mine = changed = true;
          break;
        }
      }
    }
  }
  for (const auto& [out, tensor] : fdef.ret()) {
    auto src = per_element.find(SourceName(tensor));
    if (src == per_element.end() || !src->second)
      return NotVectorizable(fn, absl::StrCat("output ", out, " does not depend on the element"));
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<BatchedMapFunction>> BatchedMapFunction::Make(IteratorContext* ctx,
                                                                       const DatasetBase& map) {
  const DatasetBase::MapFunction* m = map.map_function();
  if (m == nullptr || ctx->function_library == nullptr) return nullptr;
  FunctionDef fdef;
  if (!ctx->function_library->GetFunctionDef(m->function, &fdef).ok()) return nullptr;
  if (!CheckMapVectorizable(fdef, m->input->output_shapes(), m->captured).ok()) return nullptr;
  std::unique_ptr<BatchedMapFunction> f(new BatchedMapFunction());
  f->map_ = &map;
  f->flr_ = ctx->function_library;
  TX_ASSIGN_OR_RETURN(f->handle_, f->flr_->Instantiate(m->function));
  if (f->flr_->RetTypes(f->handle_) != map.output_dtypes()) {
    return errors::InvalidArgument("Function ", m->function, " returns [",
                                   DataTypeVectorString(f->flr_->RetTypes(f->handle_)),
                                   "] but the dataset needs [",
                                   DataTypeVectorString(map.output_dtypes()), "]");
  }
  return f;
}

Status BatchedMapFunction::Run(std::vector<Tensor> batch, int64_t rows,
                               std::vector<Tensor>* out) const {
  const DatasetBase::MapFunction& m = *map_->map_function();
  for (const Tensor& c : m.captured) batch.push_back(c);
  TX_RETURN_IF_ERROR(flr_->Run(handle_, std::move(batch), out));
  const std::string what = absl::StrCat("Function ", m.function, "'s result (on a batch)");
  if (out->size() != map_->output_dtypes().size()) {
    return errors::InvalidArgument(what, " has ", out->size(), " values, expected ",
                                   map_->output_dtypes().size());
  }
  for (size_t i = 0; i < out->size(); ++i) {
    const PartialTensorShape& shape = map_->output_shapes()[i];
    PartialTensorShape batched;
    if (!shape.unknown_rank()) {
      std::vector<int64_t> dims = {rows};
      dims.insert(dims.end(), shape.dim_sizes().begin(), shape.dim_sizes().end());
      batched = PartialTensorShape(dims);
    }
    TX_RETURN_IF_ERROR(CheckElementComponent(what, static_cast<int>(i), (*out)[i],
                                             map_->output_dtypes()[i], batched));
    if ((*out)[i].dims() == 0 || (*out)[i].dim_size(0) != rows) {
      return errors::Internal(what, " component ", i, " has shape ",
                              (*out)[i].shape().DebugString(), ", not ", rows, " rows");
    }
  }
  return OkStatus();
}

}  // namespace tensorflux
