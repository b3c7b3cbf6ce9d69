// Host-side helpers of the GPU kernels (kernels/cuda/*.cc): dtype mapping, launch status,
// registration. Internal to the CUDA build.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "tensorflux/core/types.h"
#include "tensorflux/devices/cuda_device.h"
#include "tensorflux/devices/cuda_status.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cuda/launch_common.h"

namespace tensorflux {
namespace gpu {

// The launchers' element type of `dt`; false for a dtype the GPU kernels do not compute.
bool ToElemType(DataType dt, ElemType* t);

// OK, or INTERNAL "GPU kernel of node 'n' (op Op): <cudaGetErrorName>: <text>" for a failed
// launch (launchers return cudaGetLastError()).
Status LaunchStatus(const OpKernel& k, cudaError_t e);

// Registers `factory` as the GPU kernel of `op` for each dtype of the type attr `type_attr`
// (none: no type constraint), with the given HostMemory args.
void RegisterGpuKernel(const std::string& op, const std::string& type_attr,
                       std::initializer_list<DataType> types, KernelFactory factory,
                       std::initializer_list<const char*> host_memory = {});

// Reduces `input` into `out` (allocated, non-empty) over the groups of
// kernels/shared/reduction_shape.h with reduce.cu (scratch from ctx->allocate_temp). Used by the
// reduction ops and BiasAddGrad. UNIMPLEMENTED beyond kMaxReduceGroups groups of a kind.
enum class ReduceKind : int;
Status RunReduction(OpKernelContext* ctx, const OpKernel& k, ReduceKind kind, ElemType elem,
                    const Tensor& input, const std::vector<int64_t>& sizes,
                    const std::vector<bool>& reduced, Tensor* out);

}  // namespace gpu
}  // namespace tensorflux
