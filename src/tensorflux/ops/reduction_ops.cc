// Reduction ops with TensorFlow's names, args and attrs: Sum, Mean, Prod, Max, Min (numeric),
// All, Any (bool), and ArgMax, ArgMin (index of the extreme value along one axis).
//
// Reductions take `reduction_indices` (int32/int64, scalar or 1-D; negative axes count from the
// end; a dim given twice is INVALID_ARGUMENT when the kernel runs, as TF; empty = identity copy)
// and drop the reduced dims unless keep_dims.
// An axis outside [-rank, rank) is INVALID_ARGUMENT ("Invalid reduction dimension 5 for input
// with 2 dimensions"). CPU kernels: kernels/cpu/reduction_ops.cc.

#include <vector>

#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

constexpr const char* kReduceNumberTypes =
    "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, "
    "uint64}";

// Reads a constant axes tensor (int32 or int64, any shape) as int64 values.
std::vector<int64_t> ReadAxes(const Tensor& t) {
  std::vector<int64_t> out;
  if (t.dtype() == DT_INT32) {
    for (int64_t i = 0; i < t.NumElements(); ++i) out.push_back(t.data<int32_t>()[i]);
  } else {
    for (int64_t i = 0; i < t.NumElements(); ++i) out.push_back(t.data<int64_t>()[i]);
  }
  return out;
}

Status ReductionShape(InferenceContext* c) {
  bool keep_dims = false;
  TX_RETURN_IF_ERROR(c->GetAttr("keep_dims", &keep_dims));
  const PartialTensorShape& in = c->input(0);
  const PartialTensorShape& axes_shape = c->input(1);
  if (axes_shape.dims() > 1) {
    return c->Error("reduction_indices must be a scalar or 1-D, not ", axes_shape.DebugString(),
                    " for node '", c->node_def().name(), "'");
  }
  const Tensor* axes_t = c->input_tensor(1);
  if (in.unknown_rank() || axes_t == nullptr) {
    if (!in.unknown_rank() && axes_shape.dims() == 1 && axes_shape.dim_size(0) == 0) {
      c->set_output(0, in);  // empty axes: unchanged
    } else if (keep_dims && !in.unknown_rank()) {
      c->set_output(0, PartialTensorShape(std::vector<int64_t>(in.dims(), -1)));
    } else {
      c->set_output(0, PartialTensorShape::UnknownRank());
    }
    return OkStatus();
  }
  const int rank = in.dims();
  std::vector<bool> reduce(rank, false);
  for (int64_t a : ReadAxes(*axes_t)) {
    if (a < -rank || a >= rank) {
      return c->Error("Invalid reduction dimension ", a, " for input with ", rank,
                      " dimensions (node '", c->node_def().name(), "')");
    }
    reduce[a < 0 ? a + rank : a] = true;
  }
  std::vector<int64_t> out;
  for (int d = 0; d < rank; ++d) {
    if (!reduce[d]) {
      out.push_back(in.dim_size(d));
    } else if (keep_dims) {
      out.push_back(1);
    }
  }
  c->set_output(0, PartialTensorShape(out));
  return OkStatus();
}

Status ArgOpShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  const Tensor* dim_t = c->input_tensor(1);
  if (in.unknown_rank()) {
    c->set_output(0, PartialTensorShape::UnknownRank());
    return OkStatus();
  }
  const int rank = in.dims();
  if (rank == 0) {
    return c->Error("Expected input of rank >= 1 for node '", c->node_def().name(), "'");
  }
  if (dim_t == nullptr) {
    c->set_output(0, PartialTensorShape(std::vector<int64_t>(rank - 1, -1)));
    return OkStatus();
  }
  if (dim_t->NumElements() != 1) {
    return c->Error("dimension must be a scalar for node '", c->node_def().name(), "'");
  }
  const int64_t a = ReadAxes(*dim_t)[0];
  if (a < -rank || a >= rank) {
    return c->Error("Expected dimension in the range [", -rank, ", ", rank, "), but got ", a,
                    " (node '", c->node_def().name(), "')");
  }
  const int axis = static_cast<int>(a < 0 ? a + rank : a);
  std::vector<int64_t> out;
  for (int d = 0; d < rank; ++d) {
    if (d != axis) out.push_back(in.dim_size(d));
  }
  c->set_output(0, PartialTensorShape(out));
  return OkStatus();
}

}  // namespace

#define TX_REDUCTION(types)                          \
  Input("input: T")                                  \
      .Input("reduction_indices: Tidx")              \
      .Output("output: T")                           \
      .Attr("keep_dims: bool = false")               \
      .Attr(types)                                   \
      .Attr("Tidx: {int32, int64} = DT_INT32")       \
      .SetShapeFn(ReductionShape)

REGISTER_OP("Sum").TX_REDUCTION(kReduceNumberTypes).Doc("Sum of the elements over the axes (0 when empty); integers wrap in their own type, as TF; half/bfloat16 accumulate in float.");
REGISTER_OP("Mean").TX_REDUCTION(kReduceNumberTypes).Doc("Mean over the axes; integers sum in int64/uint64 (wrapping only there) and divide by the count truncating, as TF; an empty reduction gives NaN for floats and 0 for integers.");
REGISTER_OP("Prod").TX_REDUCTION(kReduceNumberTypes).Doc("Product over the axes (1 when empty).");
REGISTER_OP("Max").TX_REDUCTION(kReduceNumberTypes).Doc("Maximum over the axes; NaN propagates; empty gives -inf (floats) or the lowest value (integers).");
REGISTER_OP("Min").TX_REDUCTION(kReduceNumberTypes).Doc("Minimum over the axes; NaN propagates; empty gives +inf (floats) or the highest value (integers).");

#define TX_BOOL_REDUCTION                       \
  Input("input: bool")                          \
      .Input("reduction_indices: Tidx")         \
      .Output("output: bool")                   \
      .Attr("keep_dims: bool = false")          \
      .Attr("Tidx: {int32, int64} = DT_INT32")  \
      .SetShapeFn(ReductionShape)

REGISTER_OP("All").TX_BOOL_REDUCTION.Doc("Logical and over the axes (true when empty).");
REGISTER_OP("Any").TX_BOOL_REDUCTION.Doc("Logical or over the axes (false when empty).");

#undef TX_BOOL_REDUCTION

#undef TX_REDUCTION

#define TX_ARG_OP                                             \
  Input("input: T")                                           \
      .Input("dimension: Tidx")                               \
      .Output("output: output_type")                          \
      .Attr(kReduceNumberTypes)                               \
      .Attr("Tidx: {int32, int64} = DT_INT32")                \
      .Attr("output_type: {int32, int64} = DT_INT64")         \
      .SetShapeFn(ArgOpShape)

REGISTER_OP("ArgMax").TX_ARG_OP.Doc("Index of the largest value along `dimension` (the first on ties; NaN is never picked, as TF); INVALID_ARGUMENT when that dim is empty.");
REGISTER_OP("ArgMin").TX_ARG_OP.Doc("Index of the smallest value along `dimension` (the first on ties; NaN is never picked, as TF); INVALID_ARGUMENT when that dim is empty.");

#undef TX_ARG_OP

}  // namespace tensorflux
