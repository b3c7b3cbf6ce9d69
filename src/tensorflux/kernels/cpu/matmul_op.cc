// MatMul on the CPU (TensorFlow's MatMul op: product[M,N] = op(a) x op(b)).
//
// float32: oneDNN's dnnl_sgemm when built with it (TX_HAVE_DNNL), else OpenBLAS cblas_sgemm.
// oneDNN was chosen by measurement (bench/matmul_bench.cc): on this 2-core AVX-512 machine
// OpenBLAS is pinned to its Haswell (AVX2) kernels by OPENBLAS_CORETYPE and reaches about
// 190 GFLOP/s at N = 1024, while oneDNN's AVX-512 JIT reaches about 380 (the FMA peak is about
// 415). Both libraries parallelize internally over all cores (oneDNN through an OpenMP team per
// calling thread, OpenBLAS through its pthread pool), so this kernel adds no threads of its own
// to that path. Products below kSmallGemmFlops multiply-adds take the single-threaded Eigen path,
// where the libraries' fork/join would cost more than the arithmetic.
// float64: cblas_dgemm. half, bfloat16: converted to float32, multiplied with the float32 path,
// rounded back. int32, int64: Eigen, rows of the product split over the intra-op pool.
#include <cstdint>
#include <limits>
#include <vector>

// GCC 12 reports false "(may be) used uninitialized" warnings inside its AVX-512 intrinsics when
// Eigen's products are instantiated with -march=native.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#include <cblas.h>
#ifdef TX_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

template <typename T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Below this many multiply-adds the single-threaded Eigen product beats the libraries' threaded
// GEMM, whose fork/join costs a few microseconds (measured here: at 64^3 Eigen takes 4.3 us and
// dnnl_sgemm 7.3 us; at 80^3 they tie; at 96^3 dnnl_sgemm wins, 9.9 us against 13.1 us).
constexpr int64_t kSmallGemmFlops = int64_t{80} * 80 * 80;

struct GemmDims {
  int64_t m, n, k;
  bool ta, tb;
  // Leading dimensions (row strides) of the stored a and b.
  int64_t lda() const { return ta ? m : k; }
  int64_t ldb() const { return tb ? k : n; }
  // True when the product is small enough for the single-threaded path, or has a dimension that
  // BLAS's 32-bit int arguments cannot hold (Eigen indexes with 64 bits).
  bool UseEigen() const {
    constexpr int64_t kMaxBlasInt = std::numeric_limits<int32_t>::max();
    return IsSmall() || m > kMaxBlasInt || n > kMaxBlasInt || k > kMaxBlasInt;
  }
  bool IsSmall() const {  // in double: m * n * k can exceed int64 for absurd shapes
    return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) <
           static_cast<double>(kSmallGemmFlops);
  }
};

// c[m, n] = op(a) x op(b) with Eigen, rows [row0, row1) of c only.
template <typename T>
void EigenGemmRows(const GemmDims& d, const T* a, const T* b, T* c, int64_t row0, int64_t row1) {
  using Mat = RowMajor<T>;
  Eigen::Map<const Mat> A(a, d.ta ? d.k : d.m, d.ta ? d.m : d.k);
  Eigen::Map<const Mat> B(b, d.tb ? d.n : d.k, d.tb ? d.k : d.n);
  Eigen::Map<Mat> C(c + row0 * d.n, row1 - row0, d.n);
  const int64_t rows = row1 - row0;
  if (d.ta) {
    auto Ar = A.transpose().middleRows(row0, rows);
    if (d.tb) C.noalias() = Ar * B.transpose(); else C.noalias() = Ar * B;
  } else {
    auto Ar = A.middleRows(row0, rows);
    if (d.tb) C.noalias() = Ar * B.transpose(); else C.noalias() = Ar * B;
  }
}

void FloatGemm(const GemmDims& d, const float* a, const float* b, float* c) {
  if (d.UseEigen()) {
    EigenGemmRows<float>(d, a, b, c, 0, d.m);
    return;
  }
#ifdef TX_HAVE_DNNL
  // dnnl_sgemm is row-major, like our tensors. It cannot fail for these arguments (positive
  // sizes, leading dimensions >= the row lengths).
  dnnl_sgemm(d.ta ? 'T' : 'N', d.tb ? 'T' : 'N', d.m, d.n, d.k, 1.0f, a, d.lda(), b, d.ldb(),
             0.0f, c, d.n);
#else
  cblas_sgemm(CblasRowMajor, d.ta ? CblasTrans : CblasNoTrans, d.tb ? CblasTrans : CblasNoTrans,
              d.m, d.n, d.k, 1.0f, a, d.lda(), b, d.ldb(), 0.0f, c, d.n);
#endif
}

void DoubleGemm(const GemmDims& d, const double* a, const double* b, double* c) {
  if (d.UseEigen()) {
    EigenGemmRows<double>(d, a, b, c, 0, d.m);
    return;
  }
  cblas_dgemm(CblasRowMajor, d.ta ? CblasTrans : CblasNoTrans, d.tb ? CblasTrans : CblasNoTrans,
              d.m, d.n, d.k, 1.0, a, d.lda(), b, d.ldb(), 0.0, c, d.n);
}

// half / bfloat16: widen both operands to float, multiply in float, round the product once.
template <typename T>
Status ReducedPrecisionGemm(OpKernelContext* ctx, const GemmDims& d, const T* a, const T* b,
                            T* c) {
  Tensor fa, fb, fc;
  TX_RETURN_IF_ERROR(ctx->allocate_temp(DT_FLOAT, TensorShape({d.m * d.k}), &fa));
  TX_RETURN_IF_ERROR(ctx->allocate_temp(DT_FLOAT, TensorShape({d.k * d.n}), &fb));
  TX_RETURN_IF_ERROR(ctx->allocate_temp(DT_FLOAT, TensorShape({d.m * d.n}), &fc));
  float* pa = fa.data<float>();
  float* pb = fb.data<float>();
  for (int64_t i = 0; i < d.m * d.k; ++i) pa[i] = static_cast<float>(a[i]);
  for (int64_t i = 0; i < d.k * d.n; ++i) pb[i] = static_cast<float>(b[i]);
  FloatGemm(d, pa, pb, fc.data<float>());
  const float* pc = fc.data<float>();
  for (int64_t i = 0; i < d.m * d.n; ++i) c[i] = T(pc[i]);
  return OkStatus();
}

// Integer types: Eigen's product, rows of c split over the intra-op pool.
template <typename T>
void IntegerGemm(OpKernelContext* ctx, const GemmDims& d, const T* a, const T* b, T* c) {
  ThreadPool* pool = ctx->intra_op_thread_pool();
  if (pool == nullptr || d.IsSmall()) {
    EigenGemmRows<T>(d, a, b, c, 0, d.m);
    return;
  }
  pool->ParallelFor(d.m, d.n * d.k, [&](int64_t r0, int64_t r1) {
    EigenGemmRows<T>(d, a, b, c, r0, r1);
  });
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
    GemmDims d;
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
    T* c = out->data<T>();
    if (d.k == 0) {  // an empty sum: zeros
      std::fill_n(c, out->NumElements(), T());
      return;
    }
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    if constexpr (std::is_same_v<T, float>) {
      FloatGemm(d, pa, pb, c);
    } else if constexpr (std::is_same_v<T, double>) {
      DoubleGemm(d, pa, pb, c);
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      OP_REQUIRES_OK(ctx, ReducedPrecisionGemm<T>(ctx, d, pa, pb, c));
    } else {
      IntegerGemm<T>(ctx, d, pa, pb, c);
    }
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

#define TX_REGISTER_MATMUL(T) \
  REGISTER_KERNEL_BUILDER(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<T>("T"), MatMulOp<T>)
TX_REGISTER_MATMUL(float);
TX_REGISTER_MATMUL(double);
TX_REGISTER_MATMUL(Half);
TX_REGISTER_MATMUL(BFloat16);
TX_REGISTER_MATMUL(int32_t);
TX_REGISTER_MATMUL(int64_t);
#undef TX_REGISTER_MATMUL

}  // namespace
}  // namespace tensorflux
