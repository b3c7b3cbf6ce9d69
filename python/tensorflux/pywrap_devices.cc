// Device names and local devices for Python: tx.DeviceSpec parses through the C++ parser
// (devices/device_name_utils.h), and tx.client.device_lib.list_local_devices() lists the
// devices a session with a given ConfigProto would have (devices/device_mgr.h).
#include <pybind11/pybind11.h>

#include <string>

#include "pywrap_common.h"
#include "tensorflux/config.pb.h"
#include "tensorflux/devices/cuda_api.h"
#include "tensorflux/devices/device_mgr.h"
#include "tensorflux/devices/device_name_utils.h"

namespace py = pybind11;

namespace tensorflux::python {

void RegisterDeviceFunctions(py::module_& m) {
  m.def(
      "parse_device_name",
      [](const std::string& spec) {
        DeviceNameUtils::ParsedName p = ValueOrThrow(DeviceNameUtils::Parse(spec));
        auto field = [](bool has, auto v) { return has ? py::cast(v) : py::none(); };
        return py::make_tuple(field(p.has_job, p.job), field(p.has_replica, p.replica),
                              field(p.has_task, p.task), field(p.has_type, p.type),
                              field(p.has_id, p.id));
      },
      py::arg("spec"),
      "(job, replica, task, device_type, device_index), None for an absent field; "
      "InvalidArgumentError for a malformed specification.");
  m.def(
      "list_local_devices",
      [](py::bytes config) {
        ConfigProto c;
        if (!c.ParseFromString(std::string(config))) {
          ThrowIfError(errors::InvalidArgument("cannot parse a serialized ConfigProto"));
        }
        // Local names ("/device:CPU:0"), as TF's device_lib gives them.
        std::unique_ptr<DeviceMgr> mgr = ValueOrThrow(DeviceMgr::Create(c, /*task=*/""));
        py::list out;
        for (const DeviceAttributes& a : mgr->ListDeviceAttributes()) {
          out.append(py::bytes(a.SerializeAsString()));
        }
        return out;
      },
      py::arg("config"), "Serialized DeviceAttributes of the devices a session would have.");
  m.def(
      "load_cuda_module_for_testing",
      []() {
        Status s = LoadCudaModuleForTesting("");
        return s.ok() ? std::string() : std::string(s.message());
      },
      "Tests: loads the CUDA module (and so registers its GPU kernels) even without a driver. "
      "Returns '' when loaded, else why not (no CUDA module built, ...).");
}

}  // namespace tensorflux::python
