// CudaDevice: a GPU as the runtime sees it (internal to the CUDA module; code outside it uses
// devices/cuda_api.h and the Device virtuals). A Device (devices/device.h: name, attributes
// with the GPU's memory and description, its own ResourceMgr, the host <-> GPU copies) over the
// GPU's process-wide CudaContext (devices/cuda_context.h: streams, cuBLAS/cuDNN handles, the
// caching allocator). Device type "GPU"; no intra-op pool (kernels queue work on the compute
// stream and return).
#pragma once

#include <memory>
#include <string>

#include "tensorflux/devices/cuda_context.h"
#include "tensorflux/devices/device.h"

namespace tensorflux {

class OpKernelContext;

class CudaDevice : public Device {
 public:
  // `name` is a full device name, e.g. "/job:localhost/replica:0/task:0/device:GPU:0".
  // The errors of CudaContext::Get.
  static StatusOr<std::unique_ptr<CudaDevice>> Create(std::string name, int ordinal);

  Allocator* GetAllocator() override { return context_->allocator(); }
  CudaContext* context() const { return context_; }

  // GPU memory: transfers copy on the GPU's copy streams (devices/cuda_context.h).
  bool tensors_in_host_memory() const override { return false; }
  Status CopyCPUTensorToDevice(const Tensor& cpu, Tensor* out) override {
    return context_->CopyHostToDevice(cpu, out);
  }
  Status CopyDeviceTensorToCPU(const Tensor& device_tensor, Tensor* out) override {
    return context_->CopyDeviceToHost(device_tensor, out);
  }
  Status Sync() override { return context_->Synchronize(); }

 private:
  CudaDevice(const std::string& name, CudaContext* context, std::string description);

  CudaContext* context_;
};

// The CudaContext of the device a kernel runs on, made current on the calling thread.
// INTERNAL when the kernel's device is not a CudaDevice (a GPU kernel run on another device).
StatusOr<CudaContext*> GpuContextOf(OpKernelContext* ctx);

}  // namespace tensorflux
