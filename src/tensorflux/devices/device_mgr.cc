#include "tensorflux/devices/device_mgr.h"

#include "absl/strings/str_join.h"
#include "tensorflux/framework/resource_mgr.h"

namespace tensorflux {
namespace {

std::string JoinNames(const std::vector<Device*>& devices) {
  return absl::StrJoin(devices, ", ",
                       [](std::string* out, const Device* d) { *out += d->name(); });
}

}  // namespace

DeviceMgr::DeviceMgr(std::vector<std::unique_ptr<Device>> devices)
    : devices_(std::move(devices)) {
  for (const auto& d : devices_) {
    view_.push_back(d.get());
    if (host_cpu_ == nullptr && d->device_type() == DEVICE_CPU) host_cpu_ = d.get();
  }
}

DeviceMgr::~DeviceMgr() = default;

StatusOr<std::unique_ptr<DeviceMgr>> DeviceMgr::Create(const ConfigProto& config,
                                                       const std::string& task) {
  std::vector<std::unique_ptr<Device>> devices;
  TX_RETURN_IF_ERROR(DeviceFactory::AddDevices(config, task, &devices));
  return std::make_unique<DeviceMgr>(std::move(devices));
}

std::vector<DeviceAttributes> DeviceMgr::ListDeviceAttributes() const {
  std::vector<DeviceAttributes> out;
  for (const Device* d : view_) out.push_back(d->attributes());
  return out;
}

std::string DeviceMgr::DeviceNames() const {
  return JoinNames(view_);
}

StatusOr<Device*> DeviceMgr::LookupDevice(std::string_view name) const {
  TX_ASSIGN_OR_RETURN(DeviceNameUtils::ParsedName spec, DeviceNameUtils::Parse(name));
  if (spec.IsEmpty()) {
    return errors::InvalidArgument("LookupDevice needs a device name; got '", name, "'");
  }
  std::vector<Device*> found;
  for (Device* d : view_) {
    if (DeviceNameUtils::IsSpecification(spec, d->parsed_name())) found.push_back(d);
  }
  if (found.empty()) {
    return errors::NotFound("Unknown device '", name, "'; the local devices are: ",
                            DeviceNames());
  }
  if (found.size() > 1) {
    return errors::InvalidArgument("Device name '", name, "' matches ", found.size(),
                                   " devices (", JoinNames(found), "); name one");
  }
  return found[0];
}

void DeviceMgr::ClearResources() {
  for (Device* d : view_) d->resource_manager()->Clear();
}

}  // namespace tensorflux
