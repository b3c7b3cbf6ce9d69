// MatMul and BatchMatMulV2 on the CPU (TensorFlow's ops):
//   MatMul:        product[M, N] = op(a) x op(b), a and b matrices, op = transpose_a/_b.
//   BatchMatMulV2: output[..., M, N] = op(x[..., :, :]) x op(y[..., :, :]), op = adj_x/adj_y
//                  (the adjoint is the transpose for these real types); rank >= 2 each; the
//                  batch dims (all but the last two) broadcast by NumPy rules.
//
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

#include "absl/strings/str_cat.h"
#include "tensorflux/core/threadpool.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/gemm.h"

namespace tensorflux {
namespace {

using gemm::GemmDims;

// Which x and y matrices each output matrix of a broadcast batch multiplies.
struct BatchPlan {
  GemmDims d;
  int64_t batch = 1;  // output matrices
  // Output batch dims and, per dim, the stride (in matrices) of x and y (0 when broadcast).
  std::vector<int64_t> dims, x_stride, y_stride;
  bool Broadcasts() const {
    return std::any_of(x_stride.begin(), x_stride.end(), [](int64_t s) { return s == 0; }) ||
           std::any_of(y_stride.begin(), y_stride.end(), [](int64_t s) { return s == 0; });
  }
  // The x and y matrix indices of output matrix b.
  void Operands(int64_t b, int64_t* xi, int64_t* yi) const {
    *xi = *yi = 0;
    for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
      const int64_t idx = b % dims[i];
      b /= dims[i];
      *xi += idx * x_stride[i];
      *yi += idx * y_stride[i];
    }
  }
};

template <typename T>
void RunBatch(const BatchPlan& p, const T* x, const T* y, T* out, ThreadPool* pool) {
  const GemmDims& d = p.d;
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
Status ComputeProduct(OpKernelContext* ctx, const BatchPlan& p, const Tensor& x, const Tensor& y,
                      Tensor* out) {
  T* c = out->data<T>();
  if (p.d.k == 0) {  // an empty sum: zeros
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

template <typename T>
class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("transpose_a", &transpose_a_));
    ctx->SetStatus(ctx->GetAttr("transpose_b", &transpose_b_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    OP_REQUIRES(ctx, a.dims() == 2,
                errors::InvalidArgument("In[0] is not a matrix. Instead it has shape ",
                                        a.shape().DebugString()));
    OP_REQUIRES(ctx, b.dims() == 2,
                errors::InvalidArgument("In[1] is not a matrix. Instead it has shape ",
                                        b.shape().DebugString()));
    BatchPlan p;
    GemmDims& d = p.d;
    d.ta = transpose_a_;
    d.tb = transpose_b_;
    d.m = a.dim_size(d.ta ? 1 : 0);
    d.k = a.dim_size(d.ta ? 0 : 1);
    d.n = b.dim_size(d.tb ? 0 : 1);
    const int64_t kb = b.dim_size(d.tb ? 1 : 0);
    OP_REQUIRES(ctx, d.k == kb,
                errors::InvalidArgument("Matrix size-incompatible: In[0]: ",
                                        a.shape().DebugString(), ", In[1]: ",
                                        b.shape().DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({d.m, d.n}), &out));
    if (out->NumElements() == 0) return;
    OP_REQUIRES_OK(ctx, ComputeProduct<T>(ctx, p, a, b, out));
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
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
    const std::string where = absl::StrCat(" (BatchMatMulV2 node '", name(), "')");
    OP_REQUIRES(ctx, x.dims() >= 2,
                errors::InvalidArgument("In[0] ndims must be >= 2: ", x.dims(), where));
    OP_REQUIRES(ctx, y.dims() >= 2,
                errors::InvalidArgument("In[1] ndims must be >= 2: ", y.dims(), where));
    BatchPlan p;
    GemmDims& d = p.d;
    d.ta = adj_x_;
    d.tb = adj_y_;
    const int rx = x.dims(), ry = y.dims();
    d.m = x.dim_size(rx - (d.ta ? 1 : 2));
    d.k = x.dim_size(rx - (d.ta ? 2 : 1));
    d.n = y.dim_size(ry - (d.tb ? 2 : 1));
    OP_REQUIRES(ctx, d.k == y.dim_size(ry - (d.tb ? 1 : 2)),
                errors::InvalidArgument("Matrix size-incompatible: In[0]: ",
                                        x.shape().DebugString(), ", In[1]: ",
                                        y.shape().DebugString(), where));
    // Broadcast batch dims, right-aligned; strides in matrices. The running products wrap
    // (unsigned) rather than overflow when x or y is empty; they are only used when the output
    // is not, and then they are at most its batch size.
    const int bx = rx - 2, by = ry - 2, rank = std::max(bx, by);
    p.dims.assign(rank, 1);
    p.x_stride.assign(rank, 0);
    p.y_stride.assign(rank, 0);
    uint64_t sx = 1, sy = 1;
    for (int i = rank - 1; i >= 0; --i) {
      const int ix = i - (rank - bx), iy = i - (rank - by);
      const int64_t dx = ix >= 0 ? x.dim_size(ix) : 1;
      const int64_t dy = iy >= 0 ? y.dim_size(iy) : 1;
      OP_REQUIRES(ctx, dx == dy || dx == 1 || dy == 1,
                  errors::InvalidArgument(
                      "In[0] and In[1] must have compatible batch dimensions: ",
                      x.shape().DebugString(), " vs. ", y.shape().DebugString(), where));
      p.dims[i] = dx == 1 ? dy : dx;
      p.x_stride[i] = dx == 1 ? 0 : static_cast<int64_t>(sx);
      p.y_stride[i] = dy == 1 ? 0 : static_cast<int64_t>(sy);
      sx *= static_cast<uint64_t>(dx);
      sy *= static_cast<uint64_t>(dy);
    }
    std::vector<int64_t> out_dims = p.dims;
    out_dims.push_back(d.m);
    out_dims.push_back(d.n);
    auto out_shape = TensorShape::Make(out_dims);
    OP_REQUIRES(ctx, out_shape.ok(),
                errors::InvalidArgument(out_shape.status().message(), where));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *out_shape, &out));
    if (out->NumElements() == 0) return;
    p.batch = out->NumElements() / (d.m * d.n);
    if (sy == 1 && sx == static_cast<uint64_t>(p.batch) && !d.ta) {
      // One y for every x, x not transposed: x's rows stack into one [B*M, K] matrix.
      d.m *= p.batch;
      p.batch = 1;
      p.dims.clear();
      p.x_stride.clear();
      p.y_stride.clear();
    }
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

}  // namespace
}  // namespace tensorflux
