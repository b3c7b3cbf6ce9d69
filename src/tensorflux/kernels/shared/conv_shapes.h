// The operands of the Conv2D family by role, validated, shared by the CPU kernels
// (kernels/cpu/conv_ops.cc) and the GPU kernels (kernels/cuda/conv_ops.cc). The geometry and its
// checks are ops/conv_geometry.h's; this adds reading each op's inputs:
//
//   forward                 Conv2D(input, filter)                 -> output
//   backward input          Conv2DBackpropInput(input_sizes, filter, out_backprop) -> input grad
//   backward filter         Conv2DBackpropFilter(input, filter_sizes, out_backprop) -> filter grad
//
// input_sizes / filter_sizes are int32/int64 vectors in host memory (HostMemory on the GPU).
#pragma once

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/ops/conv_geometry.h"

namespace tensorflux {

class OpKernelContext;

namespace conv {

enum class Direction { kForward, kBackwardInput, kBackwardFilter };

struct ConvOperands {
  ConvGeometry g;
  TensorShape input_shape, filter_shape, result_shape;
  // The tensors given (null for the one computed): input, filter, out_backprop.
  const Tensor* input = nullptr;
  const Tensor* filter = nullptr;
  const Tensor* out_backprop = nullptr;
};

// Reads the kernel's inputs for `dir` and validates them (INVALID_ARGUMENT naming the node).
Status ReadConvOperands(OpKernelContext* ctx, const ConvAttrs& attrs, Direction dir,
                        bool depthwise, ConvOperands* out);

}  // namespace conv
}  // namespace tensorflux
