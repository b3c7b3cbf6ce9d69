// MatMul: TensorFlow's op (inputs a, b; attrs transpose_a, transpose_b, T).
//   a: [M, K] (or [K, M] with transpose_a), b: [K, N] (or [N, K] with transpose_b) -> [M, N].
#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

Status MatMulShape(InferenceContext* c) {
  bool transpose_a = false, transpose_b = false;
  TX_RETURN_IF_ERROR(c->GetAttr("transpose_a", &transpose_a));
  TX_RETURN_IF_ERROR(c->GetAttr("transpose_b", &transpose_b));
  const PartialTensorShape& a = c->input(0);
  const PartialTensorShape& b = c->input(1);
  for (int i = 0; i < 2; ++i) {
    const PartialTensorShape& s = c->input(i);
    if (!s.unknown_rank() && s.dims() != 2) {
      return errors::InvalidArgument("Shape must be rank 2 but is rank ", s.dims(), " for '",
                                     c->node_def().name(), "' (op: 'MatMul') input ", i,
                                     " with shape ", s.DebugString());
    }
  }
  const int64_t m = a.unknown_rank() ? -1 : a.dim_size(transpose_a ? 1 : 0);
  const int64_t ka = a.unknown_rank() ? -1 : a.dim_size(transpose_a ? 0 : 1);
  const int64_t kb = b.unknown_rank() ? -1 : b.dim_size(transpose_b ? 1 : 0);
  const int64_t n = b.unknown_rank() ? -1 : b.dim_size(transpose_b ? 0 : 1);
  if (ka >= 0 && kb >= 0 && ka != kb) {
    return errors::InvalidArgument("Dimensions must be equal, but are ", ka, " and ", kb,
                                   " for '", c->node_def().name(),
                                   "' (op: 'MatMul') with input shapes: ", a.DebugString(), ", ",
                                   b.DebugString(), ".");
  }
  c->set_output(0, PartialTensorShape({m, n}));
  return OkStatus();
}

}  // namespace

REGISTER_OP("MatMul")
    .Input("a: T")
    .Input("b: T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr("T: {bfloat16, half, float, double, int32, int64}")
    .SetShapeFn(MatMulShape)
    .Doc("product = op(a) x op(b), op transposes when the attr says so; [M,K] x [K,N] -> [M,N].");

}  // namespace tensorflux
