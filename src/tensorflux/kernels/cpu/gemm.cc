// Row-major GEMM for MatMul and BatchMatMulV2 (see gemm.h).
//
// float32: oneDNN's dnnl_sgemm when built with it (TX_HAVE_DNNL), else OpenBLAS cblas_sgemm.
// oneDNN was chosen by measurement (bench/matmul_bench.cc): on this 2-core AVX-512 machine
// OpenBLAS is pinned to its Haswell (AVX2) kernels by OPENBLAS_CORETYPE and reaches about
// 190 GFLOP/s at N = 1024, while oneDNN's AVX-512 JIT reaches about 380 (the FMA peak is about
// 415). Both libraries parallelize internally over all cores (oneDNN through an OpenMP team per
// calling thread, OpenBLAS through its pthread pool), so no threads are added to that path.
// Products below kSmallGemmFlops multiply-adds take the single-threaded Eigen path, where the
// libraries' fork/join would cost more than the arithmetic.
#include "tensorflux/kernels/cpu/gemm.h"

#include <cstdint>
#include <limits>

// GCC 12 reports false "(may be) used uninitialized" warnings inside its AVX-512 intrinsics when
// Eigen's products are instantiated with -march=native.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#include <cblas.h>
#ifdef TX_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

#include "tensorflux/core/openmp_team.h"
#include "tensorflux/core/threadpool.h"

namespace tensorflux::gemm {
namespace {

template <typename T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Leading dimensions (row strides) of the stored a and b.
int64_t Lda(const GemmDims& d) { return d.ta ? d.m : d.k; }
int64_t Ldb(const GemmDims& d) { return d.tb ? d.k : d.n; }

// True when the product is small, or has a dimension that BLAS's 32-bit int arguments cannot
// hold (Eigen indexes with 64 bits).
bool UseEigen(const GemmDims& d) {
  constexpr int64_t kMaxBlasInt = std::numeric_limits<int32_t>::max();
  return d.IsSmall() || d.m > kMaxBlasInt || d.n > kMaxBlasInt || d.k > kMaxBlasInt;
}

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

}  // namespace

template <typename T>
void GemmSingleThreaded(const GemmDims& d, const T* a, const T* b, T* c) {
  EigenGemmRows<T>(d, a, b, c, 0, d.m);
}

template <>
void Gemm<float>(const GemmDims& d, const float* a, const float* b, float* c, ThreadPool* pool) {
  if (UseEigen(d)) {
    EigenGemmRows<float>(d, a, b, c, 0, d.m);
    return;
  }
#ifdef TX_HAVE_DNNL
  // dnnl_sgemm is row-major, like our tensors. It cannot fail for these arguments (positive
  // sizes, leading dimensions >= the row lengths). It runs on an OpenMP team led by this thread,
  // which this thread's ParallelFor calls use from now on (core/openmp_team.h), of the intra-op
  // pool's size (the session's intra_op_parallelism_threads; no pool: 1 thread).
  ScopedOpenMpThreads threads(pool);
  NoteOpenMpTeam();
  dnnl_sgemm(d.ta ? 'T' : 'N', d.tb ? 'T' : 'N', d.m, d.n, d.k, 1.0f, a, Lda(d), b, Ldb(d), 0.0f,
             c, d.n);
#else
  cblas_sgemm(CblasRowMajor, d.ta ? CblasTrans : CblasNoTrans, d.tb ? CblasTrans : CblasNoTrans,
              d.m, d.n, d.k, 1.0f, a, Lda(d), b, Ldb(d), 0.0f, c, d.n);
#endif
}

template <>
void Gemm<double>(const GemmDims& d, const double* a, const double* b, double* c, ThreadPool*) {
  if (UseEigen(d)) {
    EigenGemmRows<double>(d, a, b, c, 0, d.m);
    return;
  }
  cblas_dgemm(CblasRowMajor, d.ta ? CblasTrans : CblasNoTrans, d.tb ? CblasTrans : CblasNoTrans,
              d.m, d.n, d.k, 1.0, a, Lda(d), b, Ldb(d), 0.0, c, d.n);
}

// Integer types: Eigen's product, rows of c split over the intra-op pool.
template <typename T>
void IntegerGemm(const GemmDims& d, const T* a, const T* b, T* c, ThreadPool* pool) {
  if (pool == nullptr || d.IsSmall()) {
    EigenGemmRows<T>(d, a, b, c, 0, d.m);
    return;
  }
  pool->ParallelFor(d.m, d.n * d.k, [&](int64_t r0, int64_t r1) {
    EigenGemmRows<T>(d, a, b, c, r0, r1);
  });
}
template <>
void Gemm<int32_t>(const GemmDims& d, const int32_t* a, const int32_t* b, int32_t* c,
                   ThreadPool* pool) {
  IntegerGemm(d, a, b, c, pool);
}
template <>
void Gemm<int64_t>(const GemmDims& d, const int64_t* a, const int64_t* b, int64_t* c,
                   ThreadPool* pool) {
  IntegerGemm(d, a, b, c, pool);
}

template void GemmSingleThreaded<float>(const GemmDims&, const float*, const float*, float*);
template void GemmSingleThreaded<double>(const GemmDims&, const double*, const double*, double*);
template void GemmSingleThreaded<int32_t>(const GemmDims&, const int32_t*, const int32_t*,
                                          int32_t*);
template void GemmSingleThreaded<int64_t>(const GemmDims&, const int64_t*, const int64_t*,
                                          int64_t*);

}  // namespace tensorflux::gemm
