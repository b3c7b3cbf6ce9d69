// devices/cuda_api.h: the loader of the CUDA module (devices/cuda_module.h) and the functions
// that forward to it. Compiled into libtensorflux in every build, without CUDA headers;
// TX_CUDA_MODULE_BUILT (set for this file only, by CMake, when the module is built) says whether
// there is a module to look for.
#include "tensorflux/devices/cuda_api.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "tensorflux/devices/cuda_module.h"

namespace tensorflux {
namespace {

struct ModuleState {
  std::mutex mu;
  bool attempted = false;              // the checks ran (and the module was opened, if they passed)
  bool opened = false;                 // dlopen of the module was tried
  const CudaModuleApi* api = nullptr;  // set once, never reset
  std::string note;                    // why there is no module, when there is none
};

ModuleState& State() {
  static auto* s = new ModuleState;  // never destroyed: devices may outlive static destructors
  return *s;
}

bool EnvSaysNoGpu(std::string* why) {
  const char* disable = std::getenv("TX_DISABLE_GPU");
  if (disable != nullptr && *disable != '\0' && std::string(disable) != "0") {
    *why = "TX_DISABLE_GPU is set";
    return true;
  }
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible != nullptr && *visible == '\0') {
    *why = "CUDA_VISIBLE_DEVICES is empty";
    return true;
  }
  return false;
}

// The module's path: next to the shared object that holds this function (libtensorflux.so),
// as RPATH $ORIGIN would find it.
std::string ModulePath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&ModulePath), &info) != 0 && info.dli_fname != nullptr) {
    std::string self = info.dli_fname;
    const size_t slash = self.rfind('/');
    if (slash != std::string::npos) return self.substr(0, slash + 1) + kCudaModuleFileName;
  }
  return kCudaModuleFileName;  // the dynamic loader's search path
}

// dlopen()s `path` and fetches its table; the error as a Status naming the path. The handle is
// never closed (the module's kernels and devices live as long as the process).
StatusOr<const CudaModuleApi*> OpenModule(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    return errors::Unavailable("cannot load the CUDA module ", path, ": ",
                               e != nullptr ? e : "unknown error");
  }
  using ApiFn = const CudaModuleApi* (*)(int);
  auto fn = reinterpret_cast<ApiFn>(dlsym(handle, kCudaModuleApiSymbol));
  if (fn == nullptr) {
    return errors::Unavailable("the CUDA module ", path, " has no ", kCudaModuleApiSymbol);
  }
  const CudaModuleApi* api = fn(kCudaModuleAbiVersion);
  if (api == nullptr || api->abi_version != kCudaModuleAbiVersion) {
    return errors::Unavailable("the CUDA module ", path, " was built for another TensorFlux ",
                               "(interface version mismatch)");
  }
  return api;
}

// Loads the module once per process (see devices/cuda_module.h for when). `path` empty: next
// to libtensorflux; `need_driver` false skips the driver and environment checks (tests).
const CudaModuleApi* LoadOnce(const std::string& path, bool need_driver, Status* status) {
  ModuleState& s = State();
  std::lock_guard<std::mutex> l(s.mu);
  // A forced load (tests) still opens the module after the checks said no.
  if (s.attempted && (need_driver || s.opened)) {
    if (status != nullptr) {
      *status = s.api != nullptr ? OkStatus() : errors::Unavailable(s.note);
    }
    return s.api;
  }
#ifndef TX_CUDA_MODULE_BUILT
  (void)path;
  (void)need_driver;
  s.attempted = true;
  s.note = "this TensorFlux was built without CUDA (no toolkit found, or -DTX_CUDA=OFF)";
#else
  std::string why;
  if (need_driver && EnvSaysNoGpu(&why)) {
    s.attempted = true;
    s.note = why;
  } else if (need_driver && dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) == nullptr) {
    // The usual case on a machine without an NVIDIA driver: no note on stderr.
    (void)dlerror();
    s.attempted = true;
    s.note = "no CUDA driver (libcuda.so.1 cannot be loaded)";
  } else {
    s.attempted = true;
    s.opened = true;
    StatusOr<const CudaModuleApi*> api = OpenModule(path.empty() ? ModulePath() : path);
    if (api.ok()) {
      s.api = *api;
    } else {
      s.note = std::string(api.status().message());
      std::fprintf(stderr, "TensorFlux: running without GPUs: %s\n", s.note.c_str());
    }
  }
#endif
  if (status != nullptr) *status = s.api != nullptr ? OkStatus() : errors::Unavailable(s.note);
  return s.api;
}

const CudaModuleApi* Api() { return LoadOnce("", true, nullptr); }

Status NoModule() {
  Status s;
  LoadOnce("", true, &s);
  if (!CudaSupportBuilt()) return errors::Unimplemented(s.message());
  return errors::Unavailable("No CUDA GPU: ", s.message());
}

Status NotAGpu(const DeviceBase* device) {
  return errors::InvalidArgument("Device ", device == nullptr ? "(null)" : device->name(),
                                 " is not a CUDA GPU device");
}

}  // namespace

bool CudaSupportBuilt() {
#ifdef TX_CUDA_MODULE_BUILT
  return true;
#else
  return false;
#endif
}

void LoadCudaModule() { Api(); }

Status CudaModuleStatus() {
  Status s;
  LoadOnce("", true, &s);
  return s;
}

Status LoadCudaModuleForTesting(const std::string& path) {
  Status s;
  LoadOnce(path, false, &s);
  return s;
}

int CudaDeviceCount() {
  const CudaModuleApi* api = Api();
  return api != nullptr ? api->device_count() : 0;
}

StatusOr<std::unique_ptr<Device>> NewCudaDevice(std::string name, int ordinal) {
  const CudaModuleApi* api = Api();
  if (api == nullptr) return NoModule();
  return api->new_device(std::move(name), ordinal);
}

bool IsCudaDevice(const DeviceBase* device) {
  const CudaModuleApi* api = Api();
  return api != nullptr && device != nullptr && api->is_device(device);
}

StatusOr<int64_t> CudaDeviceMemoryBytes(int ordinal) {
  const CudaModuleApi* api = Api();
  if (api == nullptr) return NoModule();
  return api->memory_bytes(ordinal);
}

std::string CudaDeviceDescription(int ordinal) {
  const CudaModuleApi* api = Api();
  return api != nullptr ? api->description(ordinal) : "";
}

// A CUDA device is a Device (devices/cuda_device.h); its copies are the Device virtuals.
Status CopyHostToCudaDevice(DeviceBase* device, const Tensor& host, Tensor* out) {
  if (!IsCudaDevice(device)) return NotAGpu(device);
  return static_cast<Device*>(device)->CopyCPUTensorToDevice(host, out);
}

Status CopyCudaDeviceToHost(DeviceBase* device, const Tensor& device_tensor, Tensor* out) {
  if (!IsCudaDevice(device)) return NotAGpu(device);
  return static_cast<Device*>(device)->CopyDeviceTensorToCPU(device_tensor, out);
}

Status SynchronizeCudaDevice(DeviceBase* device) {
  if (!IsCudaDevice(device)) return NotAGpu(device);
  return static_cast<Device*>(device)->Sync();
}

}  // namespace tensorflux
