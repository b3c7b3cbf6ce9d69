// DeviceMgr: owns a process's local devices (TF's StaticDeviceMgr). A session builds one from
// its ConfigProto (DeviceMgr::Create, through the registered DeviceFactory-s); the Placer
// chooses among ListDevices(); kernels reach a device's ResourceMgr through the device.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tensorflux/config.pb.h"
#include "tensorflux/core/status.h"
#include "tensorflux/devices/device.h"
#include "tensorflux/devices/device_factory.h"

namespace tensorflux {

class DeviceMgr {
 public:
  // `devices` must have distinct full names and at least one CPU device.
  explicit DeviceMgr(std::vector<std::unique_ptr<Device>> devices);
  ~DeviceMgr();
  DeviceMgr(const DeviceMgr&) = delete;
  DeviceMgr& operator=(const DeviceMgr&) = delete;

  // The devices the config asks for, named "<task>/device:TYPE:i" (DeviceFactory::AddDevices
  // and its errors); task "" gives local names ("/device:CPU:0"), as TF's device_lib lists.
  static StatusOr<std::unique_ptr<DeviceMgr>> Create(const ConfigProto& config,
                                                     const std::string& task = kLocalTask);

  // In creation order: CPU devices first (CPU:0, CPU:1, ...), then other types.
  const std::vector<Device*>& ListDevices() const { return view_; }
  std::vector<DeviceAttributes> ListDeviceAttributes() const;
  // The first CPU device: where feeds, fetches and functions run.
  Device* HostCPU() const { return host_cpu_; }

  // The one device that `name` (a full name or any specification: "/device:CPU:1", "/cpu:1",
  // "CPU:1") matches. INVALID_ARGUMENT for a malformed or empty name, or one that matches
  // several devices; NOT_FOUND (listing the devices) when none matches.
  StatusOr<Device*> LookupDevice(std::string_view name) const;

  // Empties every device's ResourceMgr (variables, iterators): a session's Close.
  void ClearResources();

  // "/job:localhost/replica:0/task:0/device:CPU:0, ..." for error messages.
  std::string DeviceNames() const;

 private:
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<Device*> view_;
  Device* host_cpu_ = nullptr;
};

}  // namespace tensorflux
