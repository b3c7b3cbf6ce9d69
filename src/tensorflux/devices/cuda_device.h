// CudaDevice: a GPU as the runtime sees it (internal to the CUDA build; code outside the CUDA
// build uses devices/cuda_api.h). A light view over the GPU's process-wide CudaContext
// (devices/cuda_context.h: streams, cuBLAS/cuDNN handles, the caching allocator), with its
// own name and resource manager. Device type "GPU"; no intra-op pool (kernels queue work on
// the compute stream and return).
#pragma once

#include <memory>
#include <string>

#include "tensorflux/devices/cuda_context.h"
#include "tensorflux/framework/device_base.h"

namespace tensorflux {

class OpKernelContext;

class CudaDevice : public DeviceBase {
 public:
  // `name` is a full device name, e.g. "/job:localhost/replica:0/task:0/device:GPU:0".
  // The errors of CudaContext::Get.
  static StatusOr<std::unique_ptr<CudaDevice>> Create(std::string name, int ordinal);

  const std::string& name() const override { return name_; }
  const std::string& device_type() const override { return type_; }
  Allocator* GetAllocator() override { return context_->allocator(); }
  ResourceMgr* resource_manager() override { return resource_mgr_; }
  void set_resource_manager(ResourceMgr* rm) { resource_mgr_ = rm; }

  CudaContext* context() const { return context_; }

 private:
  CudaDevice(std::string name, CudaContext* context)
      : name_(std::move(name)), context_(context) {}

  std::string name_;
  std::string type_ = DEVICE_GPU;
  CudaContext* context_;
  ResourceMgr* resource_mgr_ = nullptr;
};

// The CudaContext of the device a kernel runs on, made current on the calling thread.
// INTERNAL when the kernel's device is not a CudaDevice (a GPU kernel run on another device).
StatusOr<CudaContext*> GpuContextOf(OpKernelContext* ctx);

}  // namespace tensorflux
