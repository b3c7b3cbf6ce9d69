// GPU kernels that hold or pass tensors without computing on them: Const (its value copied to
// the GPU once, when the kernel is built), Identity, and the resource-variable ops VarHandleOp,
// ReadVariableOp, AssignVariableOp, VarIsInitializedOp, DestroyResourceOp (the device-independent
// kernels of kernels/shared/variable_kernels.h, with a GPU copier). Resource handles and
// VarIsInitializedOp's bool stay in host memory (HostMemory args, as in TF); variable values
// live in GPU memory, in the GPU device's resource manager, so the optimizer kernels
// (training_ops.cc) update them in place.
#include "tensorflux/kernels/cuda/gpu_kernel_util.h"
#include "tensorflux/kernels/shared/const_value.h"
#include "tensorflux/kernels/shared/variable_kernels.h"

namespace tensorflux {
namespace gpu {
namespace {

class GpuConstOp : public OpKernel {
 public:
  explicit GpuConstOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
    Tensor host;
    c->SetStatus(ReadConstValue(c, &host));
    if (!c->status().ok()) return;
    auto* device = dynamic_cast<CudaDevice*>(c->device());
    if (device == nullptr) {
      c->SetStatus(errors::Internal("GPU Const node '", name(), "' built for a non-GPU device"));
      return;
    }
    c->SetStatus(device->context()->CopyHostToDevice(host, &tensor_));
  }
  // The same buffer every run: consumers never write into it, as this kernel keeps a reference.
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, tensor_); }

 private:
  Tensor tensor_;
};

class GpuIdentityOp : public OpKernel {
 public:
  explicit GpuIdentityOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->release_input(0)); }
};

// AssignVariableOp's copy of a value that others still hold: a GPU buffer, copied on the stream.
StatusOr<Tensor> GpuCopy(OpKernelContext* ctx, const Tensor& t) {
  TX_ASSIGN_OR_RETURN(CudaContext * gc, GpuContextOf(ctx));
  TX_ASSIGN_OR_RETURN(Tensor copy, Tensor::Allocate(t.dtype(), t.shape(), gc->allocator()));
  TX_RETURN_IF_ERROR(gc->CopyDeviceToDevice(t.raw_data(), copy.raw_data(), t.TotalBytes()));
  return copy;
}

[[maybe_unused]] const bool kRegistered = [] {
  // Fixed-size dtypes only: strings, resources and variants cannot live in GPU memory.
  const auto types = {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT64, DT_BOOL, DT_UINT8,
                      DT_INT8, DT_INT16, DT_UINT16, DT_UINT32, DT_UINT64};
  RegisterGpuKernel("Const", "dtype", types,
                    [](OpKernelConstruction* c) { return new GpuConstOp(c); });
  RegisterGpuKernel("Identity", "T", types,
                    [](OpKernelConstruction* c) { return new GpuIdentityOp(c); });
  RegisterGpuKernel("VarHandleOp", "", {}, NewVariableOp, {"resource"});
  RegisterGpuKernel("ReadVariableOp", "dtype", types, NewReadVariableOp, {"resource"});
  RegisterGpuKernel("AssignVariableOp", "dtype", types,
                    [](OpKernelConstruction* c) { return NewAssignOp(c, GpuCopy); },
                    {"resource"});
  RegisterGpuKernel("VarIsInitializedOp", "", {}, NewIsInitializedOp,
                    {"resource", "is_initialized"});
  RegisterGpuKernel("DestroyResourceOp", "", {}, NewDestroyResourceOp, {"resource"});
  return true;
}();

}  // namespace
}  // namespace gpu
}  // namespace tensorflux
