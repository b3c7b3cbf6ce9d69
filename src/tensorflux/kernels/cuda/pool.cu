// Device code of the GPU pooling kernels (pool_launch.h): one thread per output element
// (forward) or per input element (backward).
#include "tensorflux/kernels/cuda/pool_launch.h"

namespace tensorflux {
namespace gpu {
namespace {

// The valid input range [lo, hi) of output position o along one dimension.
__device__ __forceinline__ void WindowRange(int64_t o, int64_t stride, int64_t pad, int64_t k,
                                            int64_t in, int64_t* lo, int64_t* hi) {
  const int64_t start = o * stride - pad;
  *lo = start > 0 ? start : 0;
  *hi = start + k < in ? start + k : in;
}

// The valid input rows [y0, y1) and columns [x0, x1) of output window (oy, ox).
struct Window2 {
  int64_t y0, y1, x0, x1;
};
__device__ __forceinline__ Window2 WindowOf(const PoolGeometry& g, int64_t oy, int64_t ox) {
  Window2 w;
  WindowRange(oy, g.s_rows, g.pad_top, g.k_rows, g.in_rows, &w.y0, &w.y1);
  WindowRange(ox, g.s_cols, g.pad_left, g.k_cols, g.in_cols, &w.x0, &w.x1);
  return w;
}

// The flat (y * in_cols + x) position of the first maximum of window (oy, ox), channel c.
template <typename T>
__device__ int64_t ArgMax(const PoolGeometry& g, const T* image, int64_t oy, int64_t ox,
                          int64_t c) {
  const Window2 w = WindowOf(g, oy, ox);
  int64_t arg = w.y0 * g.in_cols + w.x0;
  T best = image[arg * g.depth + c];
  for (int64_t y = w.y0; y < w.y1; ++y) {
    for (int64_t x = w.x0; x < w.x1; ++x) {
      const T v = image[(y * g.in_cols + x) * g.depth + c];
      if (v > best) {
        best = v;
        arg = y * g.in_cols + x;
      }
    }
  }
  return arg;
}

template <typename T, bool kMax>
__global__ void PoolForwardKernel(PoolGeometry g, const T* in, T* out, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = i % g.depth;
    int64_t rest = i / g.depth;
    const int64_t ox = rest % g.out_cols;
    rest /= g.out_cols;
    const int64_t oy = rest % g.out_rows;
    const int64_t b = rest / g.out_rows;
    const T* image = in + b * g.in_rows * g.in_cols * g.depth;
    if constexpr (kMax) {
      out[i] = image[ArgMax(g, image, oy, ox, c) * g.depth + c];
    } else {
      const Window2 w = WindowOf(g, oy, ox);
      T sum = 0;
      for (int64_t y = w.y0; y < w.y1; ++y) {
        for (int64_t x = w.x0; x < w.x1; ++x) sum += image[(y * g.in_cols + x) * g.depth + c];
      }
      out[i] = sum / static_cast<T>((w.y1 - w.y0) * (w.x1 - w.x0));
    }
  }
}

// The output positions whose windows contain input position p along one dimension:
// [lo, hi) with o * s - pad <= p < o * s - pad + k.
__device__ __forceinline__ void CoveringRange(int64_t p, int64_t s, int64_t pad, int64_t k,
                                              int64_t out, int64_t* lo, int64_t* hi) {
  const int64_t q = p + pad;  // position in padded coordinates
  const int64_t first = q - k + 1 <= 0 ? 0 : (q - k + 1 + s - 1) / s;
  const int64_t last = q / s;  // floor, q >= 0
  *lo = first;
  *hi = last + 1 < out ? last + 1 : out;
}

template <typename T, bool kMax>
__global__ void PoolBackwardKernel(PoolGeometry g, const T* in, const T* grad, T* in_grad,
                                   int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = i % g.depth;
    int64_t rest = i / g.depth;
    const int64_t x = rest % g.in_cols;
    rest /= g.in_cols;
    const int64_t y = rest % g.in_rows;
    const int64_t b = rest / g.in_rows;
    int64_t oy0, oy1, ox0, ox1;
    CoveringRange(y, g.s_rows, g.pad_top, g.k_rows, g.out_rows, &oy0, &oy1);
    CoveringRange(x, g.s_cols, g.pad_left, g.k_cols, g.out_cols, &ox0, &ox1);
    const T* gb = grad + b * g.out_rows * g.out_cols * g.depth;
    const T* image = in == nullptr ? nullptr : in + b * g.in_rows * g.in_cols * g.depth;
    const int64_t pos = y * g.in_cols + x;
    T sum = 0;
    for (int64_t oy = oy0; oy < oy1; ++oy) {
      for (int64_t ox = ox0; ox < ox1; ++ox) {
        const T gv = gb[(oy * g.out_cols + ox) * g.depth + c];
        if constexpr (kMax) {
          if (ArgMax(g, image, oy, ox, c) == pos) sum += gv;
        } else {
          const Window2 w = WindowOf(g, oy, ox);
          sum += gv / static_cast<T>((w.y1 - w.y0) * (w.x1 - w.x0));
        }
      }
    }
    in_grad[i] = sum;
  }
}

template <typename T>
cudaError_t Forward(bool max, const PoolGeometry& g, const void* in, void* out, cudaStream_t s) {
  const int64_t n = g.batch * g.out_rows * g.out_cols * g.depth;
  if (n == 0) return cudaSuccess;
  const T* x = static_cast<const T*>(in);
  T* y = static_cast<T*>(out);
  if (max) {
    PoolForwardKernel<T, true><<<BlocksFor(n), kThreads, 0, s>>>(g, x, y, n);
  } else {
    PoolForwardKernel<T, false><<<BlocksFor(n), kThreads, 0, s>>>(g, x, y, n);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t Backward(bool max, const PoolGeometry& g, const void* in, const void* grad,
                     void* in_grad, cudaStream_t s) {
  const int64_t n = g.batch * g.in_rows * g.in_cols * g.depth;
  if (n == 0) return cudaSuccess;
  const T* x = static_cast<const T*>(in);
  const T* gy = static_cast<const T*>(grad);
  T* gx = static_cast<T*>(in_grad);
  if (max) {
    PoolBackwardKernel<T, true><<<BlocksFor(n), kThreads, 0, s>>>(g, x, gy, gx, n);
  } else {
    PoolBackwardKernel<T, false><<<BlocksFor(n), kThreads, 0, s>>>(g, nullptr, gy, gx, n);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchPoolForward(ElemType t, bool max, const PoolGeometry& g, const void* in,
                              void* out, cudaStream_t stream) {
  switch (t) {
    case ElemType::kFloat: return Forward<float>(max, g, in, out, stream);
    case ElemType::kDouble: return Forward<double>(max, g, in, out, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchPoolBackward(ElemType t, bool max, const PoolGeometry& g, const void* in,
                               const void* grad, void* in_grad, cudaStream_t stream) {
  switch (t) {
    case ElemType::kFloat: return Backward<float>(max, g, in, grad, in_grad, stream);
    case ElemType::kDouble: return Backward<double>(max, g, in, grad, in_grad, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace gpu
}  // namespace tensorflux
