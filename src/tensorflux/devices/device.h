// Device: a DeviceBase with a full name, attributes (TF's DeviceAttributes: type, memory limit,
// incarnation, physical description), its own ResourceMgr, where the variables, iterators and
// other resources placed on it live, and the copies between host memory and its own memory.
// CpuDevice (devices/cpu_device.h) is one, CudaDevice (devices/cuda_device.h, in the CUDA
// module) another. Devices are made by DeviceFactory (devices/device_factory.h) and owned by a
// DeviceMgr (devices/device_mgr.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/device_attributes.pb.h"
#include "tensorflux/devices/device_name_utils.h"
#include "tensorflux/framework/device_base.h"

namespace tensorflux {

class Device : public DeviceBase {
 public:
  ~Device() override;

  const std::string& name() const override { return attributes_.name(); }
  const std::string& device_type() const override { return attributes_.device_type(); }
  const DeviceAttributes& attributes() const { return attributes_; }
  const DeviceNameUtils::ParsedName& parsed_name() const { return parsed_name_; }
  ResourceMgr* resource_manager() override { return resource_mgr_.get(); }

  // Where the tensors of GetAllocator() live: host memory (the default; CPU devices) or memory
  // that host code must not read (a GPU's). Transfers between devices (runtime/rendezvous.h)
  // copy through the two functions below when a side is not host memory; between host-memory
  // devices they share the buffer.
  virtual bool tensors_in_host_memory() const { return true; }
  // For a device whose memory is not host memory (TF's DeviceContext::CopyCPUTensorToDevice /
  // CopyDeviceTensorToCPU): *out = a new tensor with the dtype, shape and values of `in`, in this
  // device's memory (from a host tensor) or in host memory (from one of this device's tensors).
  // They return when the copy is complete and ordered with the device's queued work: a device
  // -> host copy waits for the kernels queued so far (those producing `in`), kernels queued
  // after a host -> device copy see its data, and `in` may be freed. INVALID_ARGUMENT for a dtype
  // that cannot live in device memory (string, resource, variant); RESOURCE_EXHAUSTED when memory
  // runs out. The defaults are UNIMPLEMENTED naming the device.
  virtual Status CopyCPUTensorToDevice(const Tensor& cpu, Tensor* out);
  virtual Status CopyDeviceTensorToCPU(const Tensor& device_tensor, Tensor* out);
  // Waits until the work queued on the device has run (TF's Device::Sync); its first error.
  virtual Status Sync() { return OkStatus(); }

  // A random non-zero 64-bit number (DeviceAttributes.incarnation).
  static uint64_t NewIncarnation();

 protected:
  // `name` must be a full name ("/job:localhost/replica:0/task:0/device:CPU:0"; factories build
  // it, so it is not user input); the device type is taken from it. Draws an incarnation.
  Device(const std::string& name, int64_t memory_limit, std::string physical_device_desc);

 private:
  DeviceAttributes attributes_;
  DeviceNameUtils::ParsedName parsed_name_;
  std::unique_ptr<ResourceMgr> resource_mgr_;
};

}  // namespace tensorflux
