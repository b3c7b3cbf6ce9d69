// Device: a DeviceBase with a full name, attributes (TF's DeviceAttributes: type, memory limit,
// incarnation, physical description) and its own ResourceMgr, where the variables, iterators
// and other resources placed on it live. CpuDevice (devices/cpu_device.h) is one; a CudaDevice
// will be another. Devices are made by DeviceFactory (devices/device_factory.h) and owned by a
// DeviceMgr (devices/device_mgr.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

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
