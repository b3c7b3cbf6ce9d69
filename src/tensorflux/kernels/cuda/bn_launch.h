// Launchers of the small batch-norm kernels (bn.cu) around cuDNN's batch normalization
// (batch_norm_ops.cc), float: per-channel statistics in TF's FusedBatchNormV3 form and the
// inference-mode gradient, which cuDNN does not provide.
#pragma once

#include <cstdint>

#include "tensorflux/kernels/cuda/launch_common.h"

namespace tensorflux {
namespace gpu {

// From cuDNN's batch mean and unbiased variance (count elements per channel), for c < channels:
//   reserve_var[c] = the biased variance (0 when count == 1)
//   out_mean[c]    = mean, or (1 - factor) * old_mean + factor * mean when factor != 1
//   out_var[c]     = unbiased variance (0 when count == 1), blended likewise
// old_mean / old_var are read only when factor != 1.
cudaError_t LaunchBnStatistics(int64_t channels, int64_t count, float factor, const float* mean,
                               const float* unbiased_var, const float* old_mean,
                               const float* old_var, float* out_mean, float* out_var,
                               float* reserve_var, cudaStream_t stream);

// inv[c] = 1 / sqrt(var[c] + epsilon).
cudaError_t LaunchBnInvStd(int64_t channels, const float* var, float epsilon, float* inv,
                           cudaStream_t stream);

// Inference-mode gradient, elementwise over x viewed as [outer, C, inner] (n elements):
//   dx = dy * scale[c] * inv[c],  prod = dy * (x - mean[c]) * inv[c]  (summed into dscale)
cudaError_t LaunchBnInferenceGrad(int64_t n, int64_t channels, int64_t inner, const float* dy,
                                  const float* x, const float* scale, const float* mean,
                                  const float* inv, float* dx, float* prod, cudaStream_t stream);

}  // namespace gpu
}  // namespace tensorflux
