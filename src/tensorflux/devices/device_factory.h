// DeviceFactory: makes a process's devices of one type from the session's ConfigProto, as TF's
// DeviceFactory does. Factories register by device type at static-initialization time:
//   CPU (devices/cpu_device.cc): device_count["CPU"] logical CPU devices (default 1).
//   GPU: registered by the CUDA module (devices/cuda_module.h), which AddDevices loads first
//        where a CUDA driver is present: min(device_count["GPU"] (default: all), GPUs present)
//        devices. Without a driver, with TX_DISABLE_GPU=1 or CUDA_VISIBLE_DEVICES="" there is
//        none, and tx.test.is_gpu_available() is false.
//
// The priority orders device types for placement: a node goes to the highest-priority type
// that has a kernel for it (GPU over CPU), as TF's factory priorities do.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tensorflux/config.pb.h"
#include "tensorflux/core/status.h"
#include "tensorflux/devices/device.h"

namespace tensorflux {

inline constexpr int kCpuDevicePriority = 70;
inline constexpr int kGpuDevicePriority = 210;

// The task of an in-process session: devices are "<kLocalTask>/device:<TYPE>:<id>".
inline constexpr char kLocalTask[] = "/job:localhost/replica:0/task:0";

class DeviceFactory {
 public:
  virtual ~DeviceFactory() = default;

  // Appends this factory's devices, named "<name_prefix>/device:<TYPE>:<i>" for i = 0, 1, ...
  // (name_prefix is a full task: "/job:localhost/replica:0/task:0"). INVALID_ARGUMENT for a
  // bad count in config.device_count.
  virtual Status CreateDevices(const ConfigProto& config, const std::string& name_prefix,
                               std::vector<std::unique_ptr<Device>>* devices) = 0;

  // Registers `factory` for `device_type` (a later registration of the same type replaces the
  // earlier one only if its priority is higher, as TF).
  static void Register(const std::string& device_type, std::unique_ptr<DeviceFactory> factory,
                       int priority);
  // nullptr when no factory is registered for the type.
  static DeviceFactory* GetFactory(std::string_view device_type);
  // The registered priority; for a type without a factory, kGpuDevicePriority for "GPU",
  // kCpuDevicePriority for "CPU", else 0 (so placement tests can use a GPU type without CUDA).
  static int DevicePriority(std::string_view device_type);
  // The registered types, CPU first, then by decreasing priority.
  static std::vector<std::string> DeviceTypes();

  // Every registered factory's devices (CPU ones first), for `name_prefix`, after loading the
  // CUDA module (devices/cuda_api.h LoadCudaModule) if it is to be loaded. INVALID_ARGUMENT
  // when the config asks for no CPU device (device_count {"CPU": 0}) or a negative count.
  static Status AddDevices(const ConfigProto& config, const std::string& name_prefix,
                           std::vector<std::unique_ptr<Device>>* devices);
};

// Checked device_count lookup: `default_count` when the type is absent, INVALID_ARGUMENT for a
// negative count.
StatusOr<int> DeviceCount(const ConfigProto& config, const std::string& device_type,
                          int default_count);

namespace device_factory_internal {
struct Registrar {
  Registrar(const char* type, std::unique_ptr<DeviceFactory> factory, int priority) {
    DeviceFactory::Register(type, std::move(factory), priority);
  }
};
}  // namespace device_factory_internal

#define TX_REGISTER_DEVICE_FACTORY(device_type, factory_class, priority)       \
  static ::tensorflux::device_factory_internal::Registrar                     \
      tx_device_factory_registrar_##factory_class [[maybe_unused]](           \
          device_type, std::make_unique<factory_class>(), priority)

}  // namespace tensorflux
