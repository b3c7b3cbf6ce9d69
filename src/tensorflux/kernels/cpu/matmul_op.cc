// MatMul, _FusedMatMul and BatchMatMulV2 on the CPU (TensorFlow's ops):
//   MatMul:        product[M, N] = op(a) x op(b), a and b matrices, op = transpose_a/_b.
//   _FusedMatMul:  MatMul's product, then its fused_ops (BiasAdd [+ activation]) applied in one
//                  pass over the product (fused_epilogue.h); made by passes/remapper.cc.
//   BatchMatMulV2: output[..., M, N] = op(x[..., :, :]) x op(y[..., :, :]), op = adj_x/adj_y
//                  (the adjoint is the transpose for these real types); rank >= 2 each; the
//                  batch dims (all but the last two) broadcast by NumPy rules.
//
// Shapes and the batch plan: kernels/shared/matmul_shape.h (shared with the GPU kernels).
// Both kernels run one batched product (MatMul is a batch of one) over the shared GEMM of
// gemm.h/gemm.cc: float32 through oneDNN's dnnl_sgemm (or OpenBLAS), chosen by measurement
// (bench/matmul_bench.cc); float64 through cblas_dgemm; small products through single-threaded
// Eigen; int32, int64 through Eigen with rows split over the intra-op pool. half, bfloat16: the
// operands are converted to float32, multiplied with the float32 path, and the product rounded
// back once.
// Batches: products big enough for the libraries' own threads run one after another; smaller
// ones run in parallel over the batch on the intra-op pool, each single-threaded. When y is one
// matrix shared by the whole batch and x is not transposed, the batch folds into one
// [B*M, K] x [K, N] product.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "tensorflux/core/threadpool.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/fused_epilogue.h"
#include "tensorflux/kernels/cpu/gemm.h"
#include "tensorflux/kernels/shared/matmul_shape.h"

namespace tensorflux {
namespace {

using gemm::GemmDims;

GemmDims DimsOf(const MatMulPlan& p) {
  GemmDims d;
  d.m = p.m;
  d.n = p.n;
  d.k = p.k;
  d.ta = p.ta;
  d.tb = p.tb;
  return d;
}

template <typename T>
void RunBatch(const MatMulPlan& p, const T* x, const T* y, T* out, ThreadPool* pool) {
  const GemmDims d = DimsOf(p);
  const int64_t xs = d.m * d.k, ys = d.k * d.n, os = d.m * d.n;
  auto one = [&](int64_t b, bool single_threaded) {
    int64_t xi = b, yi = b;
    if (p.Broadcasts()) p.Operands(b, &xi, &yi);
    if (single_threaded) {
      gemm::GemmSingleThreaded<T>(d, x + xi * xs, y + yi * ys, out + b * os);
    } else {
      gemm::Gemm<T>(d, x + xi * xs, y + yi * ys, out + b * os, pool);
    }
  };
  if (p.batch == 1 || !d.IsSmall() || pool == nullptr) {
    for (int64_t b = 0; b < p.batch; ++b) one(b, false);
    return;
  }
  pool->ParallelFor(p.batch, d.m * d.n * d.k, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) one(b, true);
  });
}

// Widens n half/bfloat16 values to float.
template <typename T>
void Widen(const T* in, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
}

// out = the batched product of x and y (shapes already validated, out allocated, non-empty).
template <typename T>
Status ComputeProduct(OpKernelContext* ctx, const MatMulPlan& p, const Tensor& x, const Tensor& y,
                      Tensor* out) {
  T* c = out->data<T>();
  if (p.k == 0) {  // an empty sum: zeros
    std::fill_n(c, out->NumElements(), T());
    return OkStatus();
  }
  ThreadPool* pool = ctx->intra_op_thread_pool();
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    Tensor fx, fy, fc;
    TX_RETURN_IF_ERROR(ctx->allocate_temp(DT_FLOAT, TensorShape({x.NumElements()}), &fx));
    TX_RETURN_IF_ERROR(ctx->allocate_temp(DT_FLOAT, TensorShape({y.NumElements()}), &fy));
    TX_RETURN_IF_ERROR(ctx->allocate_temp(DT_FLOAT, TensorShape({out->NumElements()}), &fc));
    Widen(x.data<T>(), x.NumElements(), fx.data<float>());
    Widen(y.data<T>(), y.NumElements(), fy.data<float>());
    RunBatch<float>(p, fx.data<float>(), fy.data<float>(), fc.data<float>(), pool);
    const float* pc = fc.data<float>();
    for (int64_t i = 0; i < out->NumElements(); ++i) c[i] = T(pc[i]);
  } else {
    RunBatch<T>(p, x.data<T>(), y.data<T>(), c, pool);
  }
  return OkStatus();
}

// MatMul, and _FusedMatMul (kFused) which runs its fused_ops over the product
// (fused_epilogue.h).
template <typename T, bool kFused = false>
class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("transpose_a", &transpose_a_));
    ctx->SetStatus(ctx->GetAttr("transpose_b", &transpose_b_));
    if constexpr (kFused) ctx->SetStatus(epilogue_.Init(ctx));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    MatMulPlan p;
    OP_REQUIRES_OK(ctx, MatMulShape(a.shape(), b.shape(), transpose_a_, transpose_b_, &p));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, p.out_shape, &out));
    if (out->NumElements() > 0) OP_REQUIRES_OK(ctx, ComputeProduct<T>(ctx, p, a, b, out));
    if constexpr (kFused) {
      OP_REQUIRES_OK(ctx, epilogue_.Apply<T>(*this, ctx, ctx->input(2), out));
    }
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
  fused::Epilogue epilogue_;  // kFused only
};

template <typename T>
class BatchMatMulV2Op : public OpKernel {
 public:
  explicit BatchMatMulV2Op(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("adj_x", &adj_x_));
    ctx->SetStatus(ctx->GetAttr("adj_y", &adj_y_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    MatMulPlan p;
    OP_REQUIRES_OK(ctx, BatchMatMulShape(*this, x.shape(), y.shape(), adj_x_, adj_y_, &p));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, p.out_shape, &out));
    if (out->NumElements() == 0) return;
    if (p.CanFoldBatchIntoRows()) p.FoldBatchIntoRows();
    OP_REQUIRES_OK(ctx, ComputeProduct<T>(ctx, p, x, y, out));
  }

 private:
  bool adj_x_ = false;
  bool adj_y_ = false;
};

#define TX_REGISTER_MATMUL(T)                                                                 \
  REGISTER_KERNEL_BUILDER(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<T>("T"),           \
                          MatMulOp<T>);                                                       \
  REGISTER_KERNEL_BUILDER(Name("BatchMatMulV2").Device(DEVICE_CPU).TypeConstraint<T>("T"),    \
                          BatchMatMulV2Op<T>)
TX_REGISTER_MATMUL(float);
TX_REGISTER_MATMUL(double);
TX_REGISTER_MATMUL(Half);
TX_REGISTER_MATMUL(BFloat16);
TX_REGISTER_MATMUL(int32_t);
TX_REGISTER_MATMUL(int64_t);
#undef TX_REGISTER_MATMUL

#define TX_REGISTER_FUSED_MATMUL(T)                                                           \
  REGISTER_KERNEL_BUILDER(Name("_FusedMatMul").Device(DEVICE_CPU).TypeConstraint<T>("T"),     \
                          MatMulOp<T, true>)
TX_REGISTER_FUSED_MATMUL(float);
TX_REGISTER_FUSED_MATMUL(double);
TX_REGISTER_FUSED_MATMUL(Half);
TX_REGISTER_FUSED_MATMUL(BFloat16);
#undef TX_REGISTER_FUSED_MATMUL

}  // namespace
}  // namespace tensorflux
