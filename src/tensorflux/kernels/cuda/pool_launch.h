// Launchers of the GPU pooling kernels (pool.cu), NHWC, float and double. Semantics are the CPU
// kernels' (kernels/cpu/pooling_ops.cc, TF's): a window covers the valid input elements only
// (padding never counts: AvgPool divides by the number of valid elements), MaxPoolGrad routes
// each gradient to the FIRST maximum of its window in row-major order, and the backward kernels
// gather per input element (no atomics: results are deterministic and sum the windows in the
// CPU kernels' order).
#pragma once

#include <cstdint>

#include "tensorflux/kernels/cuda/launch_common.h"

namespace tensorflux {
namespace gpu {

// ops/pool_window.h's PoolWindow, as plain fields.
struct PoolGeometry {
  int64_t batch = 0, in_rows = 0, in_cols = 0, depth = 0;
  int64_t k_rows = 1, k_cols = 1, s_rows = 1, s_cols = 1;
  int64_t out_rows = 0, out_cols = 0;
  int64_t pad_top = 0, pad_left = 0;
};

// out [batch, out_rows, out_cols, depth] = max or average over each window of `in`.
cudaError_t LaunchPoolForward(ElemType t, bool max, const PoolGeometry& g, const void* in,
                              void* out, cudaStream_t stream);

// in_grad [batch, in_rows, in_cols, depth] from grad [batch, out_rows, out_cols, depth]:
// max (`in` is the forward input) or average (`in` unused).
cudaError_t LaunchPoolBackward(ElemType t, bool max, const PoolGeometry& g, const void* in,
                               const void* grad, void* in_grad, cudaStream_t stream);

}  // namespace gpu
}  // namespace tensorflux
