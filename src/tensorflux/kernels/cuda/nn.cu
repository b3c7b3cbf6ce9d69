// Device code of the NN-family GPU kernels (nn_launch.h).
#include <cmath>

#include "tensorflux/kernels/cuda/nn_launch.h"

namespace tensorflux {
namespace gpu {
namespace {

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

template <typename T>
__global__ void BiasAddKernel(const T* x, const T* bias, T* y, int64_t n, int64_t channels,
                              int64_t inner) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    y[i] = x[i] + bias[(i / inner) % channels];
  }
}

// Reduction over the TPR threads of one row (TPR = 32: a warp; TPR = blockDim.x: the block).
// Every thread of the row gets the result. `scratch` holds blockDim.x / 32 values.
template <int TPR, bool kMax, typename A>
__device__ __forceinline__ A RowReduce(A v, A* scratch) {
#pragma unroll
  for (int d = kWarp / 2; d > 0; d /= 2) {
    const A o = __shfl_xor_sync(kFullMask, v, d);
    v = kMax ? (o > v ? o : v) : v + o;
  }
  if constexpr (TPR == kWarp) {
    return v;
  } else {
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = scratch[0];
    for (int w = 1; w < TPR / kWarp; ++w) v = kMax ? (scratch[w] > v ? scratch[w] : v) : v + scratch[w];
    __syncthreads();  // before the scratch is written again
    return v;
  }
}

// Max and log-sum-exp of one row of n elements at x[j * stride], computed by the row's threads.
template <int TPR, typename T>
struct RowStats {
  T max, sum, log_sum;
};
template <int TPR, typename T>
__device__ RowStats<TPR, T> Stats(const T* x, int64_t n, int64_t stride, int lane, T* scratch) {
  T m = -INFINITY;
  for (int64_t j = lane; j < n; j += TPR) {
    const T v = x[j * stride];
    m = v > m ? v : m;
  }
  m = RowReduce<TPR, true>(m, scratch);
  T s = 0;
  for (int64_t j = lane; j < n; j += TPR) s += exp(x[j * stride] - m);
  s = RowReduce<TPR, false>(s, scratch);
  return {m, s, log(s)};
}

// Rows per block and the row of this thread's group.
template <int TPR>
__device__ __forceinline__ int64_t FirstRow() {
  return static_cast<int64_t>(blockIdx.x) * (blockDim.x / TPR) + threadIdx.x / TPR;
}
template <int TPR>
__device__ __forceinline__ int64_t RowStep() {
  return static_cast<int64_t>(gridDim.x) * (blockDim.x / TPR);
}

template <int TPR, bool kLog, typename T>
__global__ void SoftmaxKernel(const T* x, T* y, int64_t rows, int64_t n) {
  __shared__ T scratch[kThreads / kWarp];
  const int lane = threadIdx.x % TPR;
  // Every thread of a block runs the same number of iterations (TPR == blockDim.x when the
  // block syncs), so __syncthreads in RowReduce is reached by all of them.
  for (int64_t r = FirstRow<TPR>(); r < rows; r += RowStep<TPR>()) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    const RowStats<TPR, T> st = Stats<TPR>(xr, n, 1, lane, scratch);
    for (int64_t j = lane; j < n; j += TPR) {
      const T shifted = xr[j] - st.max;
      yr[j] = kLog ? shifted - st.log_sum : exp(shifted) / st.sum;
    }
  }
}

struct DenseLabels {
  const void* labels;
  int64_t row, col;
  template <typename T>
  __device__ T Target(int64_t b, int64_t j) const {
    return static_cast<const T*>(labels)[b * row + j * col];
  }
  __device__ bool Valid(int64_t, int64_t) const { return true; }
};

template <typename L>
struct SparseLabels {
  const L* labels;
  template <typename T>
  __device__ T Target(int64_t b, int64_t j) const {
    return static_cast<int64_t>(labels[b]) == j ? T(1) : T(0);
  }
  __device__ bool Valid(int64_t b, int64_t classes) const {
    return labels[b] >= 0 && static_cast<int64_t>(labels[b]) < classes;
  }
};

template <int TPR, typename T, typename Labels>
__global__ void XentKernel(const T* x, int64_t f_row, int64_t f_col, Labels labels,
                           int64_t batch, int64_t classes, T* loss, T* backprop) {
  __shared__ T scratch[kThreads / kWarp];
  const int lane = threadIdx.x % TPR;
  for (int64_t b = FirstRow<TPR>(); b < batch; b += RowStep<TPR>()) {
    const T* xr = x + b * f_row;
    T* br = backprop + b * classes;
    const RowStats<TPR, T> st = Stats<TPR>(xr, classes, f_col, lane, scratch);
    const bool valid = labels.Valid(b, classes);
    T l = 0;
    for (int64_t j = lane; j < classes; j += TPR) {
      const T shifted = xr[j * f_col] - st.max;
      const T target = labels.template Target<T>(b, j);
      if (target != T(0)) l += target * (st.log_sum - shifted);
      br[j] = valid ? exp(shifted) / st.sum - target : T(NAN);
    }
    l = RowReduce<TPR, false>(l, scratch);
    if (lane == 0) loss[b] = valid ? l : T(NAN);
  }
}

// One warp per row up to this many elements, one block per row above.
constexpr int64_t kWarpRowLimit = 1024;

template <typename Fn>
cudaError_t ByRowWidth(int64_t rows, int64_t n, Fn&& launch) {
  if (n <= kWarpRowLimit) {
    launch(std::integral_constant<int, kWarp>(), BlocksFor(rows * kWarp));
  } else {
    launch(std::integral_constant<int, kThreads>(), BlocksFor(rows * kThreads));
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t Softmax(bool log, const void* xv, void* yv, int64_t rows, int64_t n, cudaStream_t s) {
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  return ByRowWidth(rows, n, [&](auto tpr, unsigned blocks) {
    constexpr int TPR = decltype(tpr)::value;
    if (log) {
      SoftmaxKernel<TPR, true, T><<<blocks, kThreads, 0, s>>>(x, y, rows, n);
    } else {
      SoftmaxKernel<TPR, false, T><<<blocks, kThreads, 0, s>>>(x, y, rows, n);
    }
  });
}

template <typename T, typename Labels>
cudaError_t Xent(const void* features, int64_t f_row, int64_t f_col, Labels labels,
                 int64_t batch, int64_t classes, void* loss, void* backprop, cudaStream_t s) {
  const T* x = static_cast<const T*>(features);
  return ByRowWidth(batch, classes, [&](auto tpr, unsigned blocks) {
    constexpr int TPR = decltype(tpr)::value;
    XentKernel<TPR, T, Labels><<<blocks, kThreads, 0, s>>>(
        x, f_row, f_col, labels, batch, classes, static_cast<T*>(loss), static_cast<T*>(backprop));
  });
}

}  // namespace

cudaError_t LaunchBiasAdd(ElemType t, const void* x, const void* bias, void* y, int64_t n,
                          int64_t channels, int64_t inner, cudaStream_t stream) {
  switch (t) {
    case ElemType::kFloat:
      BiasAddKernel<float><<<BlocksFor(n), kThreads, 0, stream>>>(
          static_cast<const float*>(x), static_cast<const float*>(bias), static_cast<float*>(y),
          n, channels, inner);
      return cudaGetLastError();
    case ElemType::kDouble:
      BiasAddKernel<double><<<BlocksFor(n), kThreads, 0, stream>>>(
          static_cast<const double*>(x), static_cast<const double*>(bias),
          static_cast<double*>(y), n, channels, inner);
      return cudaGetLastError();
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchSoftmax(ElemType t, bool log, const void* x, void* y, int64_t rows, int64_t n,
                          cudaStream_t stream) {
  switch (t) {
    case ElemType::kFloat: return Softmax<float>(log, x, y, rows, n, stream);
    case ElemType::kDouble: return Softmax<double>(log, x, y, rows, n, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchXent(ElemType t, const void* features, const void* labels, const XentArgs& a,
                       void* loss, void* backprop, cudaStream_t stream) {
  const DenseLabels l{labels, a.l_row, a.l_col};
  switch (t) {
    case ElemType::kFloat:
      return Xent<float>(features, a.f_row, a.f_col, l, a.batch, a.classes, loss, backprop,
                         stream);
    case ElemType::kDouble:
      return Xent<double>(features, a.f_row, a.f_col, l, a.batch, a.classes, loss, backprop,
                          stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchSparseXent(ElemType t, bool labels64, const void* features, const void* labels,
                             int64_t batch, int64_t classes, void* loss, void* backprop,
                             cudaStream_t stream) {
  auto run = [&](auto l) -> cudaError_t {
    switch (t) {
      case ElemType::kFloat:
        return Xent<float>(features, classes, 1, l, batch, classes, loss, backprop, stream);
      case ElemType::kDouble:
        return Xent<double>(features, classes, 1, l, batch, classes, loss, backprop, stream);
      default:
        return cudaErrorInvalidValue;
    }
  };
  if (labels64) return run(SparseLabels<int64_t>{static_cast<const int64_t*>(labels)});
  return run(SparseLabels<int32_t>{static_cast<const int32_t*>(labels)});
}

}  // namespace gpu
}  // namespace tensorflux
