// InferenceContext and the common shape functions.
#include "tensorflux/framework/shape_inference.h"

#include <algorithm>

namespace tensorflux {

InferenceContext::InferenceContext(const NodeDef& node_def, const OpDef& op_def,
                                   std::vector<PartialTensorShape> input_shapes,
                                   std::vector<const Tensor*> input_tensors, int num_outputs)
    : node_def_(node_def),
      op_def_(op_def),
      inputs_(std::move(input_shapes)),
      input_tensors_(std::move(input_tensors)),
      outputs_(static_cast<size_t>(std::max(num_outputs, 0))) {}

Status InferenceContext::WithRank(int i, int rank) const {
  if (i < 0 || i >= num_inputs()) {
    return Error("Node '", node_def_.name(), "' (op ", node_def_.op(), ") has no input ", i);
  }
  const PartialTensorShape& s = inputs_[i];
  if (s.unknown_rank() || s.dims() == rank) return OkStatus();
  return Error("Shape must be rank ", rank, " but is rank ", s.dims(), " (shape ", s.DebugString(),
               ") for input ", i, " of node '", node_def_.name(), "' (op ", node_def_.op(), ")");
}

Status InferenceContext::WithRankAtLeast(int i, int rank) const {
  if (i < 0 || i >= num_inputs()) {
    return Error("Node '", node_def_.name(), "' (op ", node_def_.op(), ") has no input ", i);
  }
  const PartialTensorShape& s = inputs_[i];
  if (s.unknown_rank() || s.dims() >= rank) return OkStatus();
  return Error("Shape must be at least rank ", rank, " but is rank ", s.dims(), " (shape ",
               s.DebugString(), ") for input ", i, " of node '", node_def_.name(), "' (op ",
               node_def_.op(), ")");
}

namespace shape_inference {

Status UnknownShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape::UnknownRank());
  return OkStatus();
}

Status ScalarShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape::Scalar());
  return OkStatus();
}

Status UnchangedShape(InferenceContext* c) {
  if (c->num_outputs() == 0) return OkStatus();
  if (c->num_inputs() < 1) {
    return c->Error("Node '", c->node_def().name(), "' (op ", c->node_def().op(),
                    ") has no input to take its output shape from");
  }
  c->set_output(0, c->input(0));
  return OkStatus();
}

StatusOr<PartialTensorShape> BroadcastShapes(const PartialTensorShape& a,
                                             const PartialTensorShape& b) {
  if (a.unknown_rank() || b.unknown_rank()) return PartialTensorShape::UnknownRank();
  const int ra = a.dims(), rb = b.dims();
  const int rank = std::max(ra, rb);
  std::vector<int64_t> dims(rank);
  for (int k = 0; k < rank; ++k) {  // k counts from the innermost dim
    const int ia = ra - 1 - k, ib = rb - 1 - k;
    if (ia < 0) {
      dims[rank - 1 - k] = b.dim_size(ib);
      continue;
    }
    if (ib < 0) {
      dims[rank - 1 - k] = a.dim_size(ia);
      continue;
    }
    const int64_t da = a.dim_size(ia), db = b.dim_size(ib);
    int64_t d;
    if (da >= 0 && db >= 0) {
      if (da == db || db == 1) {
        d = da;
      } else if (da == 1) {
        d = db;
      } else {
        return errors::InvalidArgument("Incompatible shapes: ", a.DebugString(), " vs. ",
                                       b.DebugString());
      }
    } else if (da < 0 && db < 0) {
      d = -1;
    } else {
      // One side unknown: a known n > 1 decides the result (the unknown side must be 1 or n);
      // a known 1 or 0 leaves it unknown.
      const int64_t known = da < 0 ? db : da;
      d = known > 1 ? known : -1;
    }
    dims[rank - 1 - k] = d;
  }
  return PartialTensorShape(absl::Span<const int64_t>(dims));
}

Status BroadcastBinaryOpShape(InferenceContext* c) {
  if (c->num_inputs() < 2) {
    return c->Error("Node '", c->node_def().name(), "' (op ", c->node_def().op(),
                    ") needs two inputs to broadcast, has ", c->num_inputs());
  }
  StatusOr<PartialTensorShape> s = BroadcastShapes(c->input(0), c->input(1));
  if (!s.ok()) {
    return c->Error(s.status().message(), " for node '", c->node_def().name(), "' (op ",
                    c->node_def().op(), ")");
  }
  if (c->num_outputs() > 0) c->set_output(0, *std::move(s));
  return OkStatus();
}

Status MergeAllInputsShape(InferenceContext* c) {
  PartialTensorShape merged;
  for (int i = 0; i < c->num_inputs(); ++i) {
    StatusOr<PartialTensorShape> m = merged.MergeWith(c->input(i));
    if (!m.ok()) {
      return c->Error("Shapes of the inputs of node '", c->node_def().name(), "' (op ",
                      c->node_def().op(), ") must be equal, but input ", i, " is ",
                      c->input(i).DebugString(), " and the ones before merge to ",
                      merged.DebugString());
    }
    merged = *std::move(m);
  }
  if (c->num_outputs() > 0) c->set_output(0, std::move(merged));
  return OkStatus();
}

StatusOr<PartialTensorShape> ShapeFromTensor(const Tensor& t) {
  if (t.dtype() != DT_INT32 && t.dtype() != DT_INT64) {
    return errors::InvalidArgument("A shape tensor must be int32 or int64, got ",
                                   DataTypeString(t.dtype()));
  }
  auto value = [&](int64_t i) -> int64_t {
    return t.dtype() == DT_INT32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
  };
  if (t.dims() == 0) {
    if (value(0) == -1) return PartialTensorShape::UnknownRank();
    return errors::InvalidArgument("A shape tensor must be 1-D (or the scalar -1 for unknown "
                                   "rank), got the scalar ", value(0));
  }
  if (t.dims() != 1) {
    return errors::InvalidArgument("A shape tensor must be 1-D, got shape ",
                                   t.shape().DebugString());
  }
  if (t.NumElements() > TensorShape::kMaxDims) {
    return errors::InvalidArgument("A shape tensor has ", t.NumElements(),
                                   " elements, more than the maximum rank ",
                                   TensorShape::kMaxDims);
  }
  std::vector<int64_t> dims(t.NumElements());
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    dims[i] = value(i);
    if (dims[i] < -1) {
      return errors::InvalidArgument("A shape tensor has dimension ", dims[i],
                                     " at index ", i, "; dimensions must be >= -1");
    }
  }
  return PartialTensorShape(absl::Span<const int64_t>(dims));
}

}  // namespace shape_inference
}  // namespace tensorflux
