// Const's value attr, decoded and checked once when the kernel is built; shared by the CPU
// Const kernel (kernels/cpu/constant_op.cc) and the GPU one (kernels/cuda/resource_ops.cc, which
// then copies it to the GPU).
#pragma once

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux {

class OpKernelConstruction;

// *value = the node's `value` attr (a host tensor). INVALID_ARGUMENT naming the node for a bad
// TensorProto or a dtype other than the node's dtype attr.
Status ReadConstValue(OpKernelConstruction* ctx, Tensor* value);

}  // namespace tensorflux
