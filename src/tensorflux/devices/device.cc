#include "tensorflux/devices/device.h"

#include <mutex>
#include <random>

#include "tensorflux/framework/resource_mgr.h"

namespace tensorflux {

Device::Device(const std::string& name, int64_t memory_limit, std::string physical_device_desc)
    : resource_mgr_(std::make_unique<ResourceMgr>()) {
  auto parsed = DeviceNameUtils::Parse(name);
  if (parsed.ok()) parsed_name_ = *std::move(parsed);
  attributes_.set_name(name);
  attributes_.set_device_type(parsed_name_.type);
  attributes_.set_memory_limit(memory_limit);
  attributes_.set_incarnation(NewIncarnation());
  attributes_.set_physical_device_desc(std::move(physical_device_desc));
}

Device::~Device() = default;

Status Device::CopyCPUTensorToDevice(const Tensor&, Tensor*) {
  return errors::Unimplemented("Device ", name(), " has no host -> device copy");
}

Status Device::CopyDeviceTensorToCPU(const Tensor&, Tensor*) {
  return errors::Unimplemented("Device ", name(), " has no device -> host copy");
}

uint64_t Device::NewIncarnation() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard<std::mutex> l(mu);
  uint64_t v = 0;
  while (v == 0) v = rng();
  return v;
}

}  // namespace tensorflux
