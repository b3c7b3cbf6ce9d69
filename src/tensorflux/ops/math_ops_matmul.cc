// MatMul and BatchMatMulV2: TensorFlow's ops.
//   MatMul(a, b; transpose_a, transpose_b, T):
//     a: [M, K] (or [K, M] with transpose_a), b: [K, N] (or [N, K] with transpose_b) -> [M, N].
//   BatchMatMulV2(x, y; adj_x, adj_y, T):
//     x: [..., M, K] (or [..., K, M] with adj_x), y: [..., K, N] (or [..., N, K] with adj_y),
//     rank >= 2 each; the batch dims "..." broadcast by NumPy rules -> [broadcast..., M, N].
//   _FusedMatMul(a, b, args; transpose_a, transpose_b, T, num_args, fused_ops, epsilon,
//     leakyrelu_alpha): TF's op made by the remapper (passes/remapper.cc): MatMul's product
//     followed by fused_ops (ops/fused_ops_spec.h: BiasAdd with args = [bias [N]], optionally
//     Relu/Relu6/Elu/LeakyRelu). T: bfloat16, half, float (TF's) and double.
// T: bfloat16, half, float, double, int32, int64. Errors (INVALID_ARGUMENT naming the node): a
// rank below 2, unequal inner dims, batch dims that do not broadcast.
// CPU kernels: kernels/cpu/matmul_op.cc; gradients: gradients/math_grad.cc (MatMul),
// gradients/batch_matmul_grad.cc (BatchMatMulV2).
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"
#include "tensorflux/ops/fused_ops_spec.h"

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

Status BatchMatMulV2Shape(InferenceContext* c) {
  bool adj_x = false, adj_y = false;
  TX_RETURN_IF_ERROR(c->GetAttr("adj_x", &adj_x));
  TX_RETURN_IF_ERROR(c->GetAttr("adj_y", &adj_y));
  const PartialTensorShape& x = c->input(0);
  const PartialTensorShape& y = c->input(1);
  for (int i = 0; i < 2; ++i) {
    const PartialTensorShape& s = c->input(i);
    if (!s.unknown_rank() && s.dims() < 2) {
      return errors::InvalidArgument("Shape must be at least rank 2 but is rank ", s.dims(),
                                     " for '", c->node_def().name(),
                                     "' (op: 'BatchMatMulV2') input ", i, " with shape ",
                                     s.DebugString());
    }
  }
  if (x.unknown_rank() || y.unknown_rank()) {
    c->set_output(0, PartialTensorShape::UnknownRank());
    return OkStatus();
  }
  const int rx = x.dims(), ry = y.dims();
  const int64_t m = x.dim_size(rx - (adj_x ? 1 : 2));
  const int64_t kx = x.dim_size(rx - (adj_x ? 2 : 1));
  const int64_t ky = y.dim_size(ry - (adj_y ? 1 : 2));
  const int64_t n = y.dim_size(ry - (adj_y ? 2 : 1));
  if (kx >= 0 && ky >= 0 && kx != ky) {
    return errors::InvalidArgument("Dimensions must be equal, but are ", kx, " and ", ky,
                                   " for '", c->node_def().name(),
                                   "' (op: 'BatchMatMulV2') with input shapes: ",
                                   x.DebugString(), ", ", y.DebugString(), ".");
  }
  const PartialTensorShape bx(x.dim_sizes().subspan(0, rx - 2));
  const PartialTensorShape by(y.dim_sizes().subspan(0, ry - 2));
  auto batch = shape_inference::BroadcastShapes(bx, by);
  if (!batch.ok()) {
    return errors::InvalidArgument("In[0] and In[1] must have compatible batch dimensions: ",
                                   x.DebugString(), " vs. ", y.DebugString(), " for '",
                                   c->node_def().name(), "' (op: 'BatchMatMulV2')");
  }
  std::vector<int64_t> dims(batch->dim_sizes().begin(), batch->dim_sizes().end());
  dims.push_back(m);
  dims.push_back(n);
  c->set_output(0, PartialTensorShape(dims));
  return OkStatus();
}

// MatMul's shape, and the bias against its columns.
Status FusedMatMulShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(MatMulShape(c));
  TX_RETURN_IF_ERROR(FusedOpsSpec::FromNodeDef(c->node_def()).status());
  const PartialTensorShape& out = c->output(0);
  return CheckFusedBiasShape(c->node_def(), c->input(2), out.unknown_rank() ? -1 : out.dim_size(1));
}

}  // namespace

REGISTER_OP("BatchMatMulV2")
    .Input("x: T")
    .Input("y: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double, int32, int64}")
    .Attr("adj_x: bool = false")
    .Attr("adj_y: bool = false")
    .SetShapeFn(BatchMatMulV2Shape)
    .Doc("output[..., M, N] = op(x)[..., M, K] x op(y)[..., K, N]; batch dims broadcast.");

REGISTER_OP("MatMul")
    .Input("a: T")
    .Input("b: T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr("T: {bfloat16, half, float, double, int32, int64}")
    .SetShapeFn(MatMulShape)
    .Doc("product = op(a) x op(b), op transposes when the attr says so; [M,K] x [K,N] -> [M,N].");

REGISTER_OP("_FusedMatMul")
    .Input("a: T")
    .Input("b: T")
    .Input("args: num_args * T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr("T: {bfloat16, half, float, double}")
    .Attr("num_args: int >= 0")
    .Attr("fused_ops: list(string) = []")
    .Attr("epsilon: float = 0.0001")
    .Attr("leakyrelu_alpha: float = 0.2")
    .SetShapeFn(FusedMatMulShape)
    .Doc("MatMul followed by fused_ops (BiasAdd, optionally an activation); made by the "
         "remapper pass, not written by hand.");

}  // namespace tensorflux
