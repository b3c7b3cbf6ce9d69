#include "tensorflux/devices/device_factory.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "tensorflux/devices/cuda_api.h"

namespace tensorflux {
namespace {

struct Registered {
  std::unique_ptr<DeviceFactory> factory;
  int priority = 0;
};

struct Registry {
  std::mutex mu;
  std::map<std::string, Registered, std::less<>> factories;
};

Registry& GetRegistry() {
  static Registry* r = new Registry;  // never destroyed: factories outlive static destructors
  return *r;
}

}  // namespace

void DeviceFactory::Register(const std::string& device_type,
                             std::unique_ptr<DeviceFactory> factory, int priority) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> l(r.mu);
  auto it = r.factories.find(device_type);
  if (it != r.factories.end() && it->second.priority >= priority) return;
  r.factories[device_type] = Registered{std::move(factory), priority};
}

DeviceFactory* DeviceFactory::GetFactory(std::string_view device_type) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> l(r.mu);
  auto it = r.factories.find(device_type);
  return it == r.factories.end() ? nullptr : it->second.factory.get();
}

int DeviceFactory::DevicePriority(std::string_view device_type) {
  {
    Registry& r = GetRegistry();
    std::lock_guard<std::mutex> l(r.mu);
    auto it = r.factories.find(device_type);
    if (it != r.factories.end()) return it->second.priority;
  }
  if (device_type == DEVICE_GPU) return kGpuDevicePriority;
  if (device_type == DEVICE_CPU) return kCpuDevicePriority;
  return 0;
}

std::vector<std::string> DeviceFactory::DeviceTypes() {
  std::vector<std::pair<std::string, int>> types;
  {
    Registry& r = GetRegistry();
    std::lock_guard<std::mutex> l(r.mu);
    for (const auto& [type, reg] : r.factories) types.emplace_back(type, reg.priority);
  }
  std::stable_sort(types.begin(), types.end(), [](const auto& a, const auto& b) {
    const bool a_cpu = a.first == DEVICE_CPU, b_cpu = b.first == DEVICE_CPU;
    return a_cpu != b_cpu ? a_cpu : a.second > b.second;
  });
  std::vector<std::string> out;
  for (auto& t : types) out.push_back(std::move(t.first));
  return out;
}

StatusOr<int> DeviceCount(const ConfigProto& config, const std::string& device_type,
                          int default_count) {
  auto it = config.device_count().find(device_type);
  if (it == config.device_count().end()) return default_count;
  if (it->second < 0) {
    return errors::InvalidArgument("ConfigProto.device_count[\"", device_type, "\"] is ",
                                   it->second, "; it must be >= 0");
  }
  return it->second;
}

Status DeviceFactory::AddDevices(const ConfigProto& config, const std::string& name_prefix,
                                 std::vector<std::unique_ptr<Device>>* devices) {
  LoadCudaModule();  // registers the GPU factory and kernels, where there is a GPU driver
  for (const auto& entry : config.device_count()) {
    TX_RETURN_IF_ERROR(DeviceCount(config, entry.first, 0).status());  // no negative count
  }
  const size_t first = devices->size();
  for (const std::string& type : DeviceTypes()) {
    DeviceFactory* f = GetFactory(type);
    if (f != nullptr) TX_RETURN_IF_ERROR(f->CreateDevices(config, name_prefix, devices));
  }
  const bool has_cpu = std::any_of(devices->begin() + first, devices->end(),
                                   [](const auto& d) { return d->device_type() == DEVICE_CPU; });
  if (!has_cpu) {
    return errors::InvalidArgument(
        "No CPU device: ConfigProto.device_count[\"CPU\"] must be at least 1 (a session needs "
        "a CPU device for feeds, fetches and host-side ops)");
  }
  return OkStatus();
}

}  // namespace tensorflux
