// Device code of the batch-norm helper kernels (bn_launch.h).
#include "tensorflux/kernels/cuda/bn_launch.h"

namespace tensorflux {
namespace gpu {
namespace {

__global__ void BnStatisticsKernel(int64_t channels, int64_t count, float factor,
                                   const float* mean, const float* unbiased_var,
                                   const float* old_mean, const float* old_var, float* out_mean,
                                   float* out_var, float* reserve_var) {
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < channels;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float unbiased = count > 1 ? unbiased_var[c] : 0.0f;
    reserve_var[c] = count > 1 ? static_cast<float>(static_cast<double>(unbiased) *
                                                    static_cast<double>(count - 1) /
                                                    static_cast<double>(count))
                               : 0.0f;
    if (factor != 1.0f) {
      out_mean[c] = (1.0f - factor) * old_mean[c] + factor * mean[c];
      out_var[c] = (1.0f - factor) * old_var[c] + factor * unbiased;
    } else {
      out_mean[c] = mean[c];
      out_var[c] = unbiased;
    }
  }
}

__global__ void BnInvStdKernel(int64_t channels, const float* var, float epsilon, float* inv) {
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < channels;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    inv[c] = 1.0f / sqrtf(var[c] + epsilon);
  }
}

__global__ void BnInferenceGradKernel(int64_t n, int64_t channels, int64_t inner,
                                      const float* dy, const float* x, const float* scale,
                                      const float* mean, const float* inv, float* dx,
                                      float* prod) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = (i / inner) % channels;
    const float g = dy[i];
    prod[i] = g * (x[i] - mean[c]) * inv[c];
    dx[i] = g * (scale[c] * inv[c]);
  }
}

}  // namespace

cudaError_t LaunchBnStatistics(int64_t channels, int64_t count, float factor, const float* mean,
                               const float* unbiased_var, const float* old_mean,
                               const float* old_var, float* out_mean, float* out_var,
                               float* reserve_var, cudaStream_t stream) {
  BnStatisticsKernel<<<BlocksFor(channels), kThreads, 0, stream>>>(
      channels, count, factor, mean, unbiased_var, old_mean, old_var, out_mean, out_var,
      reserve_var);
  return cudaGetLastError();
}

cudaError_t LaunchBnInvStd(int64_t channels, const float* var, float epsilon, float* inv,
                           cudaStream_t stream) {
  BnInvStdKernel<<<BlocksFor(channels), kThreads, 0, stream>>>(channels, var, epsilon, inv);
  return cudaGetLastError();
}

cudaError_t LaunchBnInferenceGrad(int64_t n, int64_t channels, int64_t inner, const float* dy,
                                  const float* x, const float* scale, const float* mean,
                                  const float* inv, float* dx, float* prod, cudaStream_t stream) {
  BnInferenceGradKernel<<<BlocksFor(n), kThreads, 0, stream>>>(n, channels, inner, dy, x, scale,
                                                               mean, inv, dx, prod);
  return cudaGetLastError();
}

}  // namespace gpu
}  // namespace tensorflux
