// Shape and dtype checks of the elementwise kernels, shared by the CPU kernels
// (kernels/cpu/cwise_ops_common.h) and the GPU kernels (kernels/cuda/cwise_ops.cc). Light: no
// Eigen, no CUDA.
//
// Broadcasting (NumPy's rules, as TF's BCast): the two shapes are aligned on the right and dims of
// size 1 stretch; adjacent dims with the same pattern (both present, x broadcast, y broadcast)
// are collapsed, so [8,1,5,6] + [5,6] is iterated as [8, 30] with x strides (30, 1) and y strides
// (0, 1). The innermost collapsed dim is contiguous (stride 1) or broadcast (stride 0) in each
// input.
#pragma once

#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor_shape.h"
#include "tensorflux/core/types.h"

namespace tensorflux {

class OpKernel;
class OpKernelContext;

namespace cwise {

// The iteration space of z = f(x, y) after broadcasting and dim collapsing.
struct BinaryBroadcast {
  TensorShape out_shape;
  // Collapsed dims, outermost first; never empty. Their product is out_shape.num_elements().
  absl::InlinedVector<int64_t, 6> dims;
  // Element strides of x and y along `dims`; 0 where that input is broadcast.
  absl::InlinedVector<int64_t, 6> x_strides, y_strides;
};

// INVALID_ARGUMENT "Incompatible shapes: [2,3] vs. [4]" when a dim pair is neither equal nor has
// a 1, or when the broadcast element count overflows int64.
Status ComputeBinaryBroadcast(const TensorShape& x, const TensorShape& y, BinaryBroadcast* out);

// INVALID_ARGUMENT unless every input of the kernel holds `expected` (a graph that skipped type
// validation must not make a kernel reinterpret a float buffer as bool).
Status CheckInputDtypes(const OpKernel& k, OpKernelContext* ctx, DataType expected);

// INVALID_ARGUMENT (TF's text) unless input `i`'s shape `b` equals input 0's shape `a`: for the
// ops without broadcasting (AddN, the *Grad ops).
Status CheckSameShape(const OpKernel& k, const TensorShape& a, int i, const TensorShape& b);

}  // namespace cwise
}  // namespace tensorflux
