// Qr on the CPU (TensorFlow's op; definition and shapes in ops/linalg_ops.cc): every inner
// [M, N] matrix of the input is factored by Eigen's HouseholderQR; q is the first P (or, with
// full_matrices, all M) columns of the product of the Householder reflections, r the top P (or
// M) rows of the upper triangle. Signs follow the Householder convention (LAPACK's geqrf), so r's
// diagonal may be negative; the factors are deterministic for a given input. Matrices of the
// batch run in parallel on the intra-op pool.
#include <algorithm>
#include <cstdint>

#include <Eigen/Core>
#include <Eigen/QR>

#include "tensorflux/core/threadpool.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <typename T>
class QrOp : public OpKernel {
 public:
  explicit QrOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("full_matrices", &full_matrices_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    OP_REQUIRES(ctx, in.dims() >= 2,
                errors::InvalidArgument("Input tensor 0 must have rank >= 2, got shape ",
                                        in.shape().DebugString()));
    const int rank = in.dims();
    const int64_t m = in.dim_size(rank - 2), n = in.dim_size(rank - 1);
    const int64_t p = std::min(m, n);
    const int64_t q_cols = full_matrices_ ? m : p, r_rows = full_matrices_ ? m : p;
    TensorShape q_shape, r_shape;
    for (int i = 0; i < rank - 2; ++i) {
      OP_REQUIRES_OK(ctx, q_shape.AddDimWithStatus(in.dim_size(i)));
      OP_REQUIRES_OK(ctx, r_shape.AddDimWithStatus(in.dim_size(i)));
    }
    OP_REQUIRES_OK(ctx, q_shape.AddDimWithStatus(m));
    OP_REQUIRES_OK(ctx, q_shape.AddDimWithStatus(q_cols));
    OP_REQUIRES_OK(ctx, r_shape.AddDimWithStatus(r_rows));
    OP_REQUIRES_OK(ctx, r_shape.AddDimWithStatus(n));
    Tensor* q = nullptr;
    Tensor* r = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, q_shape, &q));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, r_shape, &r));
    int64_t batch = 1;
    for (int i = 0; i < rank - 2; ++i) batch *= in.dim_size(i);
    if (q->NumElements() == 0 && r->NumElements() == 0) return;
    const T* src = in.data<T>();
    T* q_out = q->data<T>();
    T* r_out = r->data<T>();
    auto one = [&](int64_t b) {
      Eigen::Map<RowMatrix<T>> qb(q_out + b * m * q_cols, m, q_cols);
      Eigen::Map<RowMatrix<T>> rb(r_out + b * r_rows * n, r_rows, n);
      if (n == 0 || m == 0) {  // nothing to factor: q is the identity's first columns
        qb.setIdentity();
        return;
      }
      Eigen::Map<const RowMatrix<T>> a(src + b * m * n, m, n);
      const Eigen::HouseholderQR<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>> qr(a);
      rb = qr.matrixQR().topRows(r_rows).template triangularView<Eigen::Upper>();
      qb = qr.householderQ() * Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>::Identity(
                                   m, q_cols);
    };
    ThreadPool* pool = ctx->intra_op_thread_pool();
    if (pool == nullptr || batch == 1) {
      for (int64_t b = 0; b < batch; ++b) one(b);
      return;
    }
    // ~4 m n min(m, n) flops per matrix; m * n fits (the input exists), the factor is capped.
    const int64_t cost = m * n * std::min<int64_t>(std::min(m, n), int64_t{1} << 20) * 4;
    pool->ParallelFor(batch, cost, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) one(b);
    });
  }

 private:
  bool full_matrices_ = false;
};

REGISTER_KERNEL_BUILDER(Name("Qr").Device(DEVICE_CPU).TypeConstraint<float>("T"), QrOp<float>);
REGISTER_KERNEL_BUILDER(Name("Qr").Device(DEVICE_CPU).TypeConstraint<double>("T"), QrOp<double>);

}  // namespace
}  // namespace tensorflux
