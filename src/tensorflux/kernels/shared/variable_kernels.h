// Device-independent kernels of the variable ops (resource and reference forms; see
// kernels/cpu/variable_ops.cc for the op list and framework/resource_var.h for Var): they move
// handles and Tensor buffers but never read a value's elements, so the CPU and GPU kernels are
// these same classes, registered per device (the GPU's with the handles in host memory).
//
//   NewVariableOp        VarHandleOp, VariableV2, Variable
//   NewReadVariableOp    ReadVariableOp (the output shares the variable's buffer)
//   NewAssignOp          AssignVariableOp, Assign: takes the value's buffer when no one else
//                        holds it, else stores copy(value) (a device-specific copier)
//   NewIsInitializedOp   VarIsInitializedOp, IsVariableInitialized (bool output in host memory)
//   NewDestroyResourceOp DestroyResourceOp
#pragma once

#include <functional>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux {

class OpKernel;
class OpKernelConstruction;
class OpKernelContext;

// A new buffer with t's values in the kernel's device memory (RESOURCE_EXHAUSTED when out of
// memory).
using TensorCopier = std::function<StatusOr<Tensor>(OpKernelContext*, const Tensor&)>;

OpKernel* NewVariableOp(OpKernelConstruction* ctx);
OpKernel* NewReadVariableOp(OpKernelConstruction* ctx);
OpKernel* NewAssignOp(OpKernelConstruction* ctx, TensorCopier copy);
OpKernel* NewIsInitializedOp(OpKernelConstruction* ctx);
OpKernel* NewDestroyResourceOp(OpKernelConstruction* ctx);

}  // namespace tensorflux
