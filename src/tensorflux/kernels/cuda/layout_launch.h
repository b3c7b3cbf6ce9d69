// Launchers of the GPU layout kernels (layout.cu): 4-d permutes (TF's HWIO filters to and from
// cuDNN's KRSC/KCRS) and shifted copies (zero padding and cropping of activations), for any
// 2/4/8-byte element (the copies move bytes: float, double, half...).
#pragma once

#include <cstdint>

#include "tensorflux/kernels/cuda/launch_common.h"

namespace tensorflux {
namespace gpu {

// out = in permuted: out's dim i is in's dim perm[i] (dims in memory order, row-major).
cudaError_t LaunchTranspose4(int elem_bytes, const void* in, const int64_t in_dims[4],
                             const int perm[4], void* out, cudaStream_t stream);

// out[i] = in[i - offset] where that index lies inside in_dims, else 0, for every index i of
// out_dims (all 4-d, memory order): padding (offset >= 0) and cropping (offset <= 0).
cudaError_t LaunchShiftCopy4(int elem_bytes, const void* in, const int64_t in_dims[4], void* out,
                             const int64_t out_dims[4], const int64_t offset[4],
                             cudaStream_t stream);

}  // namespace gpu
}  // namespace tensorflux
