// Row-major GEMM shared by the CPU kernels of MatMul and BatchMatMulV2 (internal to kernels/cpu;
// the Eigen/oneDNN/OpenBLAS code lives in gemm.cc, out of this header).
//
//   c[m, n] = op(a) x op(b),  op(a) = a [m, k] or a^T (a stored [k, m] when ta),
//                             op(b) = b [k, n] or b^T (b stored [n, k] when tb).
//
// float: oneDNN's dnnl_sgemm (TX_HAVE_DNNL) or OpenBLAS cblas_sgemm, both threaded internally;
// double: cblas_dgemm; products below kSmallGemmFlops multiply-adds use single-threaded Eigen.
// int32/int64: Eigen, rows of c split over the given pool when the product is not small.
// m, n, k > 0 (callers handle empty products).
#pragma once

#include <cstdint>

namespace tensorflux {

class ThreadPool;

namespace gemm {

// Below this many multiply-adds the single-threaded Eigen product beats the libraries' threaded
// GEMM, whose fork/join costs a few microseconds (measured here: at 64^3 Eigen takes 4.3 us and
// dnnl_sgemm 7.3 us; at 80^3 they tie; at 96^3 dnnl_sgemm wins, 9.9 us against 13.1 us).
constexpr int64_t kSmallGemmFlops = int64_t{80} * 80 * 80;

struct GemmDims {
  int64_t m = 0, n = 0, k = 0;
  bool ta = false, tb = false;
  // True for products small enough for the single-threaded path (computed in double:
  // m * n * k can exceed int64 for absurd shapes).
  bool IsSmall() const {
    return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) <
           static_cast<double>(kSmallGemmFlops);
  }
};

// c = op(a) x op(b) with the fastest path for the size (see above). `pool` (may be null) splits
// the integer path's rows and sizes oneDNN's OpenMP team for float (its thread count; 1 when
// null); OpenBLAS (double, float without oneDNN) brings its own threads.
// T is float, double, int32_t or int64_t (explicitly instantiated in gemm.cc).
template <typename T>
void Gemm(const GemmDims& d, const T* a, const T* b, T* c, ThreadPool* pool);
template <>
void Gemm<float>(const GemmDims& d, const float* a, const float* b, float* c, ThreadPool* pool);
template <>
void Gemm<double>(const GemmDims& d, const double* a, const double* b, double* c,
                  ThreadPool* pool);
template <>
void Gemm<int32_t>(const GemmDims& d, const int32_t* a, const int32_t* b, int32_t* c,
                   ThreadPool* pool);
template <>
void Gemm<int64_t>(const GemmDims& d, const int64_t* a, const int64_t* b, int64_t* c,
                   ThreadPool* pool);

// c = op(a) x op(b) on the calling thread only (Eigen), for callers that run many small products
// in parallel themselves. Same T as Gemm.
template <typename T>
void GemmSingleThreaded(const GemmDims& d, const T* a, const T* b, T* c);

}  // namespace gemm
}  // namespace tensorflux
