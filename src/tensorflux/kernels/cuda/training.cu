// Device code of the GPU optimizer updates (training_launch.h): the CPU functors' formulas, in
// the same operation order.
#include <cmath>

#include "tensorflux/kernels/cuda/training_launch.h"

namespace tensorflux {
namespace gpu {
namespace {

// s: the scalars; v: this element's variable values (updated in place); g: its gradient.
template <ApplyKind K, typename T>
__device__ __forceinline__ void Update(bool nesterov, bool update_slots, const T* s, T* v, T g) {
  if constexpr (K == ApplyKind::kGradientDescent) {
    v[0] -= s[0] * g;
  } else if constexpr (K == ApplyKind::kMomentum) {
    const T lr = s[0], momentum = s[1];
    v[1] = v[1] * momentum + g;
    v[0] -= nesterov ? g * lr + v[1] * momentum * lr : lr * v[1];
  } else if constexpr (K == ApplyKind::kAdam) {
    const T beta1_power = s[0], beta2_power = s[1], lr = s[2], beta1 = s[3], beta2 = s[4],
            epsilon = s[5];
    const T alpha = lr * sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    v[1] += (g - v[1]) * (T(1) - beta1);
    v[2] += (g * g - v[2]) * (T(1) - beta2);
    const T step = nesterov ? v[1] * beta1 + (T(1) - beta1) * g : v[1];
    v[0] -= alpha * step / (sqrt(v[2]) + epsilon);
  } else if constexpr (K == ApplyKind::kRMSProp || K == ApplyKind::kCenteredRMSProp) {
    // var, [mg,] ms, mom
    const T lr = s[0], rho = s[1], momentum = s[2], epsilon = s[3];
    T mean = 0;
    int ms = 1;
    if constexpr (K == ApplyKind::kCenteredRMSProp) {
      v[1] += (g - v[1]) * (T(1) - rho);
      mean = v[1];
      ms = 2;
    }
    v[ms] += (g * g - v[ms]) * (T(1) - rho);
    v[ms + 1] = v[ms + 1] * momentum + lr * g / sqrt(v[ms] - mean * mean + epsilon);
    v[0] -= v[ms + 1];
  } else {
    static_assert(K == ApplyKind::kAdagrad);
    if (update_slots) v[1] += g * g;
    v[0] -= s[0] * g / sqrt(v[1]);
  }
}

constexpr int NumVars(ApplyKind k) {
  switch (k) {
    case ApplyKind::kGradientDescent: return 1;
    case ApplyKind::kMomentum: return 2;
    case ApplyKind::kAdam: return 3;
    case ApplyKind::kRMSProp: return 3;
    case ApplyKind::kCenteredRMSProp: return 4;
    case ApplyKind::kAdagrad: return 2;
  }
  return 0;
}

constexpr int NumScalars(ApplyKind k) {
  switch (k) {
    case ApplyKind::kGradientDescent: return 1;
    case ApplyKind::kMomentum: return 2;
    case ApplyKind::kAdam: return 6;
    case ApplyKind::kRMSProp: return 4;
    case ApplyKind::kCenteredRMSProp: return 4;
    case ApplyKind::kAdagrad: return 1;
  }
  return 0;
}

template <ApplyKind K, typename T>
__global__ void ApplyKernel(ApplyArgs a) {
  constexpr int kVars = NumVars(K), kScalars = NumScalars(K);
  T s[kScalars];
#pragma unroll
  for (int j = 0; j < kScalars; ++j) s[j] = *static_cast<const T*>(a.scalars[j]);
  const T* grad = static_cast<const T*>(a.grad);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    T v[kVars];
#pragma unroll
    for (int k = 0; k < kVars; ++k) v[k] = static_cast<T*>(a.vars[k])[i];
    Update<K, T>(a.nesterov, a.update_slots, s, v, grad[i]);
#pragma unroll
    for (int k = 0; k < kVars; ++k) static_cast<T*>(a.vars[k])[i] = v[k];
  }
}

template <typename T>
cudaError_t Apply(ApplyKind k, const ApplyArgs& a, cudaStream_t s) {
  const unsigned blocks = BlocksFor(a.n);
  switch (k) {
#define TX_APPLY_CASE(K)                                              \
  case ApplyKind::K:                                                  \
    ApplyKernel<ApplyKind::K, T><<<blocks, kThreads, 0, s>>>(a);      \
    return cudaGetLastError();
    TX_APPLY_CASE(kGradientDescent) TX_APPLY_CASE(kMomentum) TX_APPLY_CASE(kAdam)
    TX_APPLY_CASE(kRMSProp) TX_APPLY_CASE(kCenteredRMSProp) TX_APPLY_CASE(kAdagrad)
#undef TX_APPLY_CASE
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t LaunchApply(ApplyKind k, ElemType t, const ApplyArgs& a, cudaStream_t stream) {
  switch (t) {
    case ElemType::kFloat: return Apply<float>(k, a, stream);
    case ElemType::kDouble: return Apply<double>(k, a, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace gpu
}  // namespace tensorflux
