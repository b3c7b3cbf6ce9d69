// Device code of the GPU reductions (reduce_launch.h).
#include <cmath>
#include <limits>

#include "tensorflux/kernels/cuda/reduce_launch.h"

namespace tensorflux {
namespace gpu {
namespace {

constexpr int kWarp = 32;

template <ReduceKind K, typename A>
struct Reducer {
  __device__ static A Init() {
    if constexpr (K == ReduceKind::kProd) {
      return A(1);
    } else if constexpr (K == ReduceKind::kMax) {
      return -std::numeric_limits<A>::infinity();
    } else if constexpr (K == ReduceKind::kMin) {
      return std::numeric_limits<A>::infinity();
    } else {
      return A(0);
    }
  }
  // NaN propagates for Max/Min: a NaN accumulator stays, a NaN b replaces it.
  __device__ static A Op(A a, A b) {
    if constexpr (K == ReduceKind::kProd) {
      return a * b;
    } else if constexpr (K == ReduceKind::kMax) {
      return (a > b || a != a) ? a : b;
    } else if constexpr (K == ReduceKind::kMin) {
      return (a < b || a != a) ? a : b;
    } else {
      return a + b;
    }
  }
  __device__ static A Finalize(A a, int64_t count) {
    if constexpr (K == ReduceKind::kMean) {
      return a / static_cast<A>(count);
    } else {
      return a;
    }
  }
};

// The input offset of index i (row-major) over `rank` groups with the given sizes and strides.
__device__ __forceinline__ int64_t Offset(const int64_t* sizes, const int64_t* strides, int rank,
                                          int64_t i) {
  int64_t off = 0;
  for (int g = rank - 1; g >= 0; --g) {
    off += (i % sizes[g]) * strides[g];
    i /= sizes[g];
  }
  return off;
}
__device__ __forceinline__ int64_t KeptOffset(const ReducePlan& p, int64_t o) {
  return Offset(p.kept_sizes, p.kept_strides, p.kept_rank, o);
}
__device__ __forceinline__ int64_t ReducedOffset(const ReducePlan& p, int64_t r) {
  return Offset(p.red_sizes, p.red_strides, p.red_rank, r);
}

// Writes work item (o, c)'s result: the final value (one chunk) or a partial.
template <ReduceKind K, typename A, typename Out>
__device__ __forceinline__ void Store(const ReducePlan& p, int64_t o, int64_t c, A acc,
                                      int64_t count, Out* out, A* partial) {
  if (p.chunks == 1) {
    out[o] = static_cast<Out>(Reducer<K, A>::Finalize(acc, count));
  } else {
    partial[o * p.chunks + c] = acc;
  }
}

// One warp per (output, chunk) work item; lanes stride along the reduced range.
template <ReduceKind K, typename T, typename A, typename Out>
__global__ void ReduceWarpKernel(const T* in, ReducePlan p, int64_t chunk_len, int64_t count,
                                 Out* out, A* partial) {
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / kWarp);
  const int64_t items = p.out_n * p.chunks;
  for (int64_t w = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
       w < items; w += warps) {
    const int64_t o = w / p.chunks, c = w % p.chunks;
    const T* base = in + KeptOffset(p, o);
    const int64_t end = min(p.red_n, (c + 1) * chunk_len);
    A acc = Reducer<K, A>::Init();
    for (int64_t r = c * chunk_len + lane; r < end; r += kWarp) {
      acc = Reducer<K, A>::Op(acc, static_cast<A>(base[ReducedOffset(p, r)]));
    }
#pragma unroll
    for (int d = kWarp / 2; d > 0; d /= 2) {
      acc = Reducer<K, A>::Op(acc, __shfl_down_sync(0xffffffffu, acc, d));
    }
    if (lane == 0) Store<K>(p, o, c, acc, count, out, partial);
  }
}

// One thread per (output, chunk) work item, consecutive threads on consecutive outputs.
template <ReduceKind K, typename T, typename A, typename Out>
__global__ void ReduceThreadKernel(const T* in, ReducePlan p, int64_t chunk_len, int64_t count,
                                   Out* out, A* partial) {
  const int64_t items = p.out_n * p.chunks;
  for (int64_t w = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < items;
       w += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = w % p.out_n, c = w / p.out_n;
    const T* base = in + KeptOffset(p, o);
    const int64_t end = min(p.red_n, (c + 1) * chunk_len);
    A acc = Reducer<K, A>::Init();
    for (int64_t r = c * chunk_len; r < end; ++r) {
      acc = Reducer<K, A>::Op(acc, static_cast<A>(base[ReducedOffset(p, r)]));
    }
    Store<K>(p, o, c, acc, count, out, partial);
  }
}

int64_t ChunkLen(const ReducePlan& p) { return (p.red_n + p.chunks - 1) / p.chunks; }

// Work items wanted in flight: warps for the warp kernel, threads for the thread kernel.
constexpr int64_t kWantWarps = 8192, kWantThreads = 65536;

int64_t ChunksFor(const ReducePlan& p) {
  if (p.red_n <= 1 || p.out_n <= 0) return 1;
  const int64_t want = p.inner_reduced ? kWantWarps : kWantThreads;
  const int64_t min_len = p.inner_reduced ? 8 * kWarp : 32;  // elements per work item
  int64_t chunks = (want + p.out_n - 1) / p.out_n;
  const int64_t max_chunks = (p.red_n + min_len - 1) / min_len;
  if (chunks > max_chunks) chunks = max_chunks;
  return chunks < 1 ? 1 : chunks;
}

template <ReduceKind K, typename T, typename A, typename Out>
cudaError_t Pass(const T* in, const ReducePlan& p, int64_t count, Out* out, A* partial,
                 cudaStream_t s) {
  const int64_t items = p.out_n * p.chunks;
  const int64_t len = ChunkLen(p);
  if (p.inner_reduced) {
    ReduceWarpKernel<K, T, A, Out><<<BlocksFor(items * kWarp), kThreads, 0, s>>>(
        in, p, len, count, out, partial);
  } else {
    ReduceThreadKernel<K, T, A, Out><<<BlocksFor(items), kThreads, 0, s>>>(in, p, len, count,
                                                                          out, partial);
  }
  return cudaGetLastError();
}

template <ReduceKind K, typename T>
cudaError_t ReduceTyped(const void* in, void* out, const ReducePlan& plan, void* scratch,
                        cudaStream_t s) {
  using A = T;
  const T* x = static_cast<const T*>(in);
  T* y = static_cast<T*>(out);
  if (plan.chunks == 1) return Pass<K, T, A, T>(x, plan, plan.red_n, y, nullptr, s);
  A* partial = static_cast<A*>(scratch);
  cudaError_t e = Pass<K, T, A, T>(x, plan, plan.red_n, y, partial, s);
  if (e != cudaSuccess) return e;
  // Second pass: each output's `chunks` contiguous partials, one warp each.
  ReducePlan second;
  second.kept_rank = 1;
  second.kept_sizes[0] = plan.out_n;
  second.kept_strides[0] = plan.chunks;
  second.red_rank = 1;
  second.red_sizes[0] = plan.chunks;
  second.red_strides[0] = 1;
  second.out_n = plan.out_n;
  second.red_n = plan.chunks;
  second.inner_reduced = true;
  second.chunks = 1;
  return Pass<K, A, A, T>(partial, second, plan.red_n, y, nullptr, s);
}

template <typename T>
cudaError_t ReduceKindDispatch(ReduceKind k, const void* in, void* out, const ReducePlan& p,
                               void* scratch, cudaStream_t s) {
  switch (k) {
    case ReduceKind::kSum: return ReduceTyped<ReduceKind::kSum, T>(in, out, p, scratch, s);
    case ReduceKind::kMean: return ReduceTyped<ReduceKind::kMean, T>(in, out, p, scratch, s);
    case ReduceKind::kProd: return ReduceTyped<ReduceKind::kProd, T>(in, out, p, scratch, s);
    case ReduceKind::kMax: return ReduceTyped<ReduceKind::kMax, T>(in, out, p, scratch, s);
    case ReduceKind::kMin: return ReduceTyped<ReduceKind::kMin, T>(in, out, p, scratch, s);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

bool MakeReducePlan(const int64_t* sizes, const bool* reduced, int groups, ReducePlan* p) {
  *p = ReducePlan();
  int64_t stride = 1;
  int innermost = -1;  // the innermost group of more than one element
  // Innermost first, to compute strides; then reverse each list. Groups of size 1 change no
  // offset and are left out (so that BiasAddGrad's NHWC [outer, C, 1] runs as inner-kept).
  for (int g = groups - 1; g >= 0; --g) {
    if (sizes[g] == 1) continue;
    if (innermost < 0) innermost = g;
    if (reduced[g]) {
      if (p->red_rank == kMaxReduceGroups) return false;
      p->red_sizes[p->red_rank] = sizes[g];
      p->red_strides[p->red_rank++] = stride;
      p->red_n *= sizes[g];
    } else {
      if (p->kept_rank == kMaxReduceGroups) return false;
      p->kept_sizes[p->kept_rank] = sizes[g];
      p->kept_strides[p->kept_rank++] = stride;
      p->out_n *= sizes[g];
    }
    stride *= sizes[g];
  }
  for (int i = 0, j = p->kept_rank - 1; i < j; ++i, --j) {
    std::swap(p->kept_sizes[i], p->kept_sizes[j]);
    std::swap(p->kept_strides[i], p->kept_strides[j]);
  }
  for (int i = 0, j = p->red_rank - 1; i < j; ++i, --j) {
    std::swap(p->red_sizes[i], p->red_sizes[j]);
    std::swap(p->red_strides[i], p->red_strides[j]);
  }
  p->inner_reduced = innermost >= 0 && reduced[innermost];
  p->chunks = ChunksFor(*p);
  return true;
}

int64_t ReduceScratchBytes(const ReducePlan& p, ElemType t) {
  if (p.chunks <= 1) return 0;
  const int64_t elem = t == ElemType::kDouble ? 8 : 4;
  return p.out_n * p.chunks * elem;
}

cudaError_t LaunchReduce(ReduceKind k, ElemType t, const void* in, void* out,
                         const ReducePlan& plan, void* scratch, cudaStream_t stream) {
  if (plan.out_n == 0) return cudaSuccess;
  switch (t) {
    case ElemType::kFloat: return ReduceKindDispatch<float>(k, in, out, plan, scratch, stream);
    case ElemType::kDouble: return ReduceKindDispatch<double>(k, in, out, plan, scratch, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace gpu
}  // namespace tensorflux
