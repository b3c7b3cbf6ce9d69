// GPU kernels of MatMul and BatchMatMulV2 (shapes: kernels/shared/matmul_shape.h) through
// cuBLAS's cublasGemmStridedBatchedEx, for float, double, half and bfloat16. The row-major
// product C[m, n] = op(A) op(B) is computed as the column-major C^T = op(B)^T op(A)^T, so no
// operand is transposed in memory. float32 accumulates in float32 (CUBLAS_COMPUTE_32F: no TF32,
// so results match the CPU to float32 rounding), half and bfloat16 in float32, double in double.
// Batches: one strided-batched call when no batch dim broadcasts; a batch that shares one y
// matrix (x not transposed) folds into one [batch*m, k] x [k, n] product; other broadcasts run
// one product per output matrix. k == 0 gives zeros.
#include "tensorflux/kernels/cuda/gpu_kernel_util.h"
#include "tensorflux/kernels/shared/matmul_shape.h"

#include <cstdint>

#include <cublas_v2.h>

namespace tensorflux {
namespace {

struct GemmTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
  bool double_scalars;  // alpha/beta are double (CUDA_R_64F) or float
};

bool TypesFor(DataType dt, GemmTypes* t) {
  switch (dt) {
    case DT_FLOAT: *t = {CUDA_R_32F, CUBLAS_COMPUTE_32F, false}; return true;
    case DT_DOUBLE: *t = {CUDA_R_64F, CUBLAS_COMPUTE_64F, true}; return true;
    case DT_HALF: *t = {CUDA_R_16F, CUBLAS_COMPUTE_32F, false}; return true;
    case DT_BFLOAT16: *t = {CUDA_R_16BF, CUBLAS_COMPUTE_32F, false}; return true;
    default: return false;
  }
}

class GpuMatMulOp : public OpKernel {
 public:
  explicit GpuMatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    batched_ = type_string() == "BatchMatMulV2";
    c->SetStatus(c->GetAttr(batched_ ? "adj_x" : "transpose_a", &ta_));
    c->SetStatus(c->GetAttr(batched_ ? "adj_y" : "transpose_b", &tb_));
    dtype_ = BaseType(c->output_types()[0]);
    if (!TypesFor(dtype_, &types_)) {
      c->SetStatus(errors::InvalidArgument(type_string(), ": no GPU kernel for ",
                                           DataTypeString(dtype_)));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    MatMulPlan p;
    if (batched_) {
      OP_REQUIRES_OK(ctx, BatchMatMulShape(*this, x.shape(), y.shape(), ta_, tb_, &p));
    } else {
      OP_REQUIRES_OK(ctx, MatMulShape(x.shape(), y.shape(), ta_, tb_, &p));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, p.out_shape, &out));
    if (out->NumElements() == 0) return;
    auto gc = GpuContextOf(ctx);
    OP_REQUIRES_OK(ctx, gc.status());
    if (p.k == 0) {  // an empty sum: zeros (all-zero bits in every float type)
      OP_REQUIRES_OK(ctx, CudaStatus(cudaMemsetAsync(out->raw_data(), 0, out->TotalBytes(),
                                                     (*gc)->compute_stream()),
                                     "cudaMemsetAsync"));
      return;
    }
    if (p.CanFoldBatchIntoRows()) p.FoldBatchIntoRows();
    const size_t elem = DataTypeSize(dtype_);
    const char* xp = static_cast<const char*>(x.raw_data());
    const char* yp = static_cast<const char*>(y.raw_data());
    char* op = static_cast<char*>(out->raw_data());
    const int64_t xs = p.m * p.k, ys = p.k * p.n, os = p.m * p.n;  // matrix strides (elements)
    absl::MutexLock l((*gc)->library_mu());
    if (!p.Broadcasts()) {
      OP_REQUIRES_OK(ctx, Gemm(*gc, p, xp, xs, yp, ys, op, os, p.batch));
      return;
    }
    for (int64_t b = 0; b < p.batch; ++b) {
      int64_t xi, yi;
      p.Operands(b, &xi, &yi);
      OP_REQUIRES_OK(ctx, Gemm(*gc, p, xp + xi * xs * elem, xs, yp + yi * ys * elem, ys,
                               op + b * os * elem, os, 1));
    }
  }

 private:
  // `count` products out[i] = op(x[i]) op(y[i]) with the given element strides between them.
  Status Gemm(CudaContext* gc, const MatMulPlan& p, const void* x, int64_t x_stride,
              const void* y, int64_t y_stride, void* out, int64_t out_stride,
              int64_t count) const {
    const float f_one = 1, f_zero = 0;
    const double d_one = 1, d_zero = 0;
    const void* alpha = types_.double_scalars ? static_cast<const void*>(&d_one) : &f_one;
    const void* beta = types_.double_scalars ? static_cast<const void*>(&d_zero) : &f_zero;
    // Column-major C^T [n, m] = op(y)^T [n, k] x op(x)^T [k, m].
    const cublasOperation_t op_y = p.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_x = p.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int64_t ld_y = p.tb ? p.k : p.n;
    const int64_t ld_x = p.ta ? p.m : p.k;
    if (p.m > INT32_MAX || p.n > INT32_MAX || p.k > INT32_MAX || ld_x > INT32_MAX ||
        ld_y > INT32_MAX || count > INT32_MAX) {
      return errors::Unimplemented(type_string(), " node '", name(), "': matrix dims above ",
                                   INT32_MAX, " are not supported by cuBLAS");
    }
    TX_RETURN_IF_CUDA_ERROR(cublasGemmStridedBatchedEx(
        gc->blas(), op_y, op_x, static_cast<int>(p.n), static_cast<int>(p.m),
        static_cast<int>(p.k), alpha, y, types_.data, static_cast<int>(ld_y), y_stride, x,
        types_.data, static_cast<int>(ld_x), x_stride, beta, out, types_.data,
        static_cast<int>(p.n), out_stride, static_cast<int>(count), types_.compute,
        CUBLAS_GEMM_DEFAULT));
    return OkStatus();
  }

  bool batched_ = false;
  bool ta_ = false, tb_ = false;
  DataType dtype_ = DT_INVALID;
  GemmTypes types_{};
};

[[maybe_unused]] const bool kRegistered = [] {
  for (const char* op : {"MatMul", "BatchMatMulV2"}) {
    gpu::RegisterGpuKernel(op, "T", {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16},
                           [](OpKernelConstruction* c) { return new GpuMatMulOp(c); });
  }
  return true;
}();

}  // namespace
}  // namespace tensorflux
