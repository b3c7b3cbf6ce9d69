// Device code of the GPU layout kernels (layout_launch.h): one thread per output element.
#include "tensorflux/kernels/cuda/layout_launch.h"

namespace tensorflux {
namespace gpu {
namespace {

struct Dims4 {
  int64_t d[4];
};

template <typename W>
__global__ void Transpose4Kernel(const W* in, Dims4 in_strides_by_out, Dims4 out_dims, W* out,
                                 int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rem = i, src = 0;
    for (int k = 3; k >= 0; --k) {
      src += (rem % out_dims.d[k]) * in_strides_by_out.d[k];
      rem /= out_dims.d[k];
    }
    out[i] = in[src];
  }
}

template <typename W>
__global__ void ShiftCopy4Kernel(const W* in, Dims4 in_dims, W* out, Dims4 out_dims,
                                 Dims4 offset, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rem = i, src = 0, stride = 1;
    bool inside = true;
    for (int k = 3; k >= 0; --k) {
      const int64_t j = rem % out_dims.d[k] - offset.d[k];
      rem /= out_dims.d[k];
      inside = inside && j >= 0 && j < in_dims.d[k];
      src += j * stride;
      stride *= in_dims.d[k];
    }
    out[i] = inside ? in[src] : W(0);
  }
}

int64_t Product(const int64_t d[4]) { return d[0] * d[1] * d[2] * d[3]; }

template <typename W>
cudaError_t Transpose(const void* in, const int64_t in_dims[4], const int perm[4], void* out,
                      cudaStream_t s) {
  int64_t in_strides[4];
  in_strides[3] = 1;
  for (int k = 2; k >= 0; --k) in_strides[k] = in_strides[k + 1] * in_dims[k + 1];
  Dims4 by_out, out_dims;
  for (int k = 0; k < 4; ++k) {
    out_dims.d[k] = in_dims[perm[k]];
    by_out.d[k] = in_strides[perm[k]];
  }
  const int64_t n = Product(in_dims);
  if (n == 0) return cudaSuccess;
  Transpose4Kernel<W><<<BlocksFor(n), kThreads, 0, s>>>(static_cast<const W*>(in), by_out,
                                                        out_dims, static_cast<W*>(out), n);
  return cudaGetLastError();
}

template <typename W>
cudaError_t ShiftCopy(const void* in, const int64_t in_dims[4], void* out,
                      const int64_t out_dims[4], const int64_t offset[4], cudaStream_t s) {
  Dims4 id, od, off;
  for (int k = 0; k < 4; ++k) {
    id.d[k] = in_dims[k];
    od.d[k] = out_dims[k];
    off.d[k] = offset[k];
  }
  const int64_t n = Product(out_dims);
  if (n == 0) return cudaSuccess;
  ShiftCopy4Kernel<W><<<BlocksFor(n), kThreads, 0, s>>>(static_cast<const W*>(in), id,
                                                        static_cast<W*>(out), od, off, n);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchTranspose4(int elem_bytes, const void* in, const int64_t in_dims[4],
                             const int perm[4], void* out, cudaStream_t stream) {
  switch (elem_bytes) {
    case 2: return Transpose<uint16_t>(in, in_dims, perm, out, stream);
    case 4: return Transpose<uint32_t>(in, in_dims, perm, out, stream);
    case 8: return Transpose<uint64_t>(in, in_dims, perm, out, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchShiftCopy4(int elem_bytes, const void* in, const int64_t in_dims[4], void* out,
                             const int64_t out_dims[4], const int64_t offset[4],
                             cudaStream_t stream) {
  switch (elem_bytes) {
    case 2: return ShiftCopy<uint16_t>(in, in_dims, out, out_dims, offset, stream);
    case 4: return ShiftCopy<uint32_t>(in, in_dims, out, out_dims, offset, stream);
    case 8: return ShiftCopy<uint64_t>(in, in_dims, out, out_dims, offset, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace gpu
}  // namespace tensorflux
