// Linear-algebra ops (TensorFlow's names, attrs and input order).
//   Qr(input; full_matrices = false, T): input [..., M, N] (rank >= 2), P = min(M, N) ->
//     q [..., M, P] and r [..., P, N]; with full_matrices, q [..., M, M] and r [..., M, N].
//     input = q x r for every matrix of the batch, q's columns orthonormal, r upper triangular.
//     T: float, double (TF also lists half and the complex types; not supported here).
//     Errors (INVALID_ARGUMENT naming the node): rank below 2. A NaN or Inf input gives NaNs, as
//     in TF (no run-time check). Signs: Householder's, as TF's (Eigen) — the conformance cases
//     (tests/conformance/cases/linalg_ops.py) compare q and r with TF's as computed.
// CPU kernel: kernels/cpu/qr_op.cc (Householder QR). No gradient registered yet.
#include <algorithm>
#include <vector>

#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

Status QrShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2));
  const PartialTensorShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, PartialTensorShape::UnknownRank());
    c->set_output(1, PartialTensorShape::UnknownRank());
    return OkStatus();
  }
  bool full_matrices = false;
  TX_RETURN_IF_ERROR(c->GetAttr("full_matrices", &full_matrices));
  const int rank = in.dims();
  const int64_t m = in.dim_size(rank - 2), n = in.dim_size(rank - 1);
  const int64_t p = (m < 0 || n < 0) ? (m == 0 || n == 0 ? 0 : -1) : std::min(m, n);
  std::vector<int64_t> q(in.dim_sizes().begin(), in.dim_sizes().end() - 1);
  std::vector<int64_t> r(in.dim_sizes().begin(), in.dim_sizes().end() - 2);
  q.push_back(full_matrices ? m : p);
  r.push_back(full_matrices ? m : p);
  r.push_back(n);
  c->set_output(0, PartialTensorShape(q));
  c->set_output(1, PartialTensorShape(r));
  return OkStatus();
}

}  // namespace

REGISTER_OP("Qr")
    .Input("input: T")
    .Output("q: T")
    .Output("r: T")
    .Attr("full_matrices: bool = false")
    .Attr("T: {float, double}")
    .SetShapeFn(QrShape)
    .Doc("QR decomposition of each inner matrix: input[..., M, N] = q x r.");

}  // namespace tensorflux
