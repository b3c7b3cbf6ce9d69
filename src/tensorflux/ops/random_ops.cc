// Random ops (TensorFlow's stateful ones): RandomStandardNormal, TruncatedNormal, RandomUniform,
// RandomUniformInt, RandomShuffle. Names, input order, attrs and defaults follow TF's
// registrations (spec/tf-wire.md §3.1). All take (seed, seed2): both 0 means nondeterministic;
// otherwise the op draws from a Philox4x32-10 stream keyed by them (core/philox.h), so the same
// seeds give the same bits on every run and any thread count. They are stateful: each run of a
// node continues its stream, so two runs give different values.
//
//   RandomStandardNormal  shape: T (1-D int32/int64) -> output: dtype, N(0, 1)
//   TruncatedNormal       shape: T -> output: dtype, N(0, 1) redrawn outside (-2, 2)
//   RandomUniform         shape: T -> output: dtype, uniform in [0, 1)
//   RandomUniformInt      shape: T, minval: Tout (scalar), maxval: Tout (scalar) -> output: Tout,
//                         uniform in [minval, maxval); minval < maxval (INVALID_ARGUMENT else)
//   RandomShuffle         value: T -> output: T, `value` with its dim-0 slices permuted
#include <vector>

#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

// Output 0 has the shape held by input 0 (a 1-D shape tensor): exact when input 0 is a constant;
// rank only when input 0's length is known; unknown rank otherwise.
Status RandomShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRank(0, 1));
  if (const Tensor* shape = c->input_tensor(0)) {
    TX_ASSIGN_OR_RETURN(PartialTensorShape s, shape_inference::ShapeFromTensor(*shape));
    c->set_output(0, std::move(s));
    return OkStatus();
  }
  const PartialTensorShape& in = c->input(0);
  if (!in.unknown_rank() && in.dim_size(0) >= 0) {
    if (in.dim_size(0) > TensorShape::kMaxDims) {
      return c->Error("Node '", c->node_def().name(), "' (op ", c->node_def().op(),
                      "): shape has ", in.dim_size(0), " elements, more than the maximum rank ",
                      TensorShape::kMaxDims);
    }
    c->set_output(0, PartialTensorShape(std::vector<int64_t>(in.dim_size(0), -1)));
  } else {
    c->set_output(0, PartialTensorShape::UnknownRank());
  }
  return OkStatus();
}

Status RandomUniformIntShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRank(1, 0));
  TX_RETURN_IF_ERROR(c->WithRank(2, 0));
  return RandomShape(c);
}

}  // namespace

REGISTER_OP("RandomStandardNormal")
    .Input("shape: T")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("dtype: {half, bfloat16, float, double}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomShape)
    .Doc("Standard normal values (Box-Muller on a Philox stream) of the given shape.");

REGISTER_OP("TruncatedNormal")
    .Input("shape: T")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("dtype: {half, bfloat16, float, double}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomShape)
    .Doc("Standard normal values of the given shape, redrawn while |x| >= 2.");

REGISTER_OP("RandomUniform")
    .Input("shape: T")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("dtype: {half, bfloat16, float, double}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomShape)
    .Doc("Uniform values in [0, 1) of the given shape.");

REGISTER_OP("RandomUniformInt")
    .Input("shape: T")
    .Input("minval: Tout")
    .Input("maxval: Tout")
    .Output("output: Tout")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("Tout: {int32, int64}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomUniformIntShape)
    .Doc("Uniform integers in [minval, maxval) of the given shape (minval < maxval).");

REGISTER_OP("RandomShuffle")
    .Input("value: T")
    .Output("output: T")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("T: type")
    .SetIsStateful()
    .SetShapeFn(shape_inference::UnchangedShape)
    .Doc("`value` with its slices along dimension 0 randomly permuted (Fisher-Yates).");

}  // namespace tensorflux
