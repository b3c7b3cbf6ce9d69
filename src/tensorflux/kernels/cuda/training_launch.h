// Launcher of the GPU optimizer updates (training.cu), used by training_ops.cc. The update rules
// are the CPU kernels' (kernels/cpu/training_ops.cc, TF's training_ops formulas), applied per
// element in place; the scalar inputs (lr, beta1, ...) are read from GPU memory by the kernel.
#pragma once

#include <cstdint>

#include "tensorflux/kernels/cuda/launch_common.h"

namespace tensorflux {
namespace gpu {

enum class ApplyKind : int {
  kGradientDescent,  // vars: var;                     scalars: alpha
  kMomentum,         // vars: var, accum;              scalars: lr, momentum
  kAdam,             // vars: var, m, v;               scalars: beta1_power, beta2_power, lr,
                     //                                         beta1, beta2, epsilon
  kRMSProp,          // vars: var, ms, mom;            scalars: lr, rho, momentum, epsilon
  kCenteredRMSProp,  // vars: var, mg, ms, mom;        scalars: lr, rho, momentum, epsilon
  kAdagrad,          // vars: var, accum;              scalars: lr
};

struct ApplyArgs {
  void* vars[4] = {};             // in input order
  const void* scalars[6] = {};    // scalar inputs in input order (the gradient left out)
  const void* grad = nullptr;
  int64_t n = 0;
  bool nesterov = false, update_slots = true;
};

// float or double.
cudaError_t LaunchApply(ApplyKind k, ElemType t, const ApplyArgs& a, cudaStream_t stream);

}  // namespace gpu
}  // namespace tensorflux
