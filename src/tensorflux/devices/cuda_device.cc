// CudaDevice, the GPU DeviceFactory and the CUDA module's entry point (devices/cuda_module.h).
#include "tensorflux/devices/cuda_device.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"

#include "tensorflux/devices/cuda_module.h"
#include "tensorflux/devices/cuda_status.h"
#include "tensorflux/devices/device_factory.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

int GpuCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver / no device: not an error for the caller
    return 0;
  }
  return n;
}

// TF's physical_device_desc, or "" when the GPU does not exist.
std::string GpuDescription(int ordinal) {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    return "";
  }
  char bus[32] = {0};
  (void)cudaDeviceGetPCIBusId(bus, sizeof(bus), ordinal);
  (void)cudaGetLastError();
  return std::string("device: ") + std::to_string(ordinal) + ", name: " + p.name +
         ", pci bus id: " + bus + ", compute capability: " + std::to_string(p.major) + "." +
         std::to_string(p.minor);
}

}  // namespace

CudaDevice::CudaDevice(const std::string& name, CudaContext* context, std::string description)
    : Device(name, static_cast<int64_t>(context->properties().totalGlobalMem),
             std::move(description)),
      context_(context) {}

StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Create(std::string name, int ordinal) {
  TX_ASSIGN_OR_RETURN(CudaContext * context, CudaContext::Get(ordinal));
  return std::unique_ptr<CudaDevice>(new CudaDevice(name, context, GpuDescription(ordinal)));
}

StatusOr<CudaContext*> GpuContextOf(OpKernelContext* ctx) {
  auto* device = dynamic_cast<CudaDevice*>(ctx->device());
  if (device == nullptr) {
    return errors::Internal("GPU kernel for node '", ctx->op_kernel().name(), "' (op ",
                            ctx->op_kernel().type_string(), ") runs on a device that is not a GPU");
  }
  TX_RETURN_IF_ERROR(device->context()->Activate());
  return device->context();
}

namespace {

// ---------------------------------------------------------------- the module's table

bool IsGpu(const DeviceBase* device) { return dynamic_cast<const CudaDevice*>(device) != nullptr; }

StatusOr<std::unique_ptr<Device>> NewGpu(std::string name, int ordinal) {
  TX_ASSIGN_OR_RETURN(std::unique_ptr<CudaDevice> d, CudaDevice::Create(std::move(name), ordinal));
  return std::unique_ptr<Device>(std::move(d));
}

StatusOr<int64_t> GpuMemoryBytes(int ordinal) {
  TX_ASSIGN_OR_RETURN(CudaContext * c, CudaContext::Get(ordinal));
  return static_cast<int64_t>(c->properties().totalGlobalMem);
}

// ---------------------------------------------------------------- the GPU device factory

// min(device_count["GPU"] (default: all), GPUs present) devices, GPU:0 ... GPU:n-1.
class CudaDeviceFactory : public DeviceFactory {
 public:
  Status CreateDevices(const ConfigProto& config, const std::string& name_prefix,
                       std::vector<std::unique_ptr<Device>>* devices) override {
    const int present = GpuCount();
    TX_ASSIGN_OR_RETURN(const int wanted, DeviceCount(config, DEVICE_GPU, present));
    for (int i = 0; i < std::min(wanted, present); ++i) {
      TX_ASSIGN_OR_RETURN(std::unique_ptr<CudaDevice> d,
                          CudaDevice::Create(absl::StrCat(name_prefix, "/device:GPU:", i), i));
      devices->push_back(std::move(d));
    }
    return OkStatus();
  }
};

const CudaModuleApi* MakeApi() {
  DeviceFactory::Register(DEVICE_GPU, std::make_unique<CudaDeviceFactory>(), kGpuDevicePriority);
  auto* a = new CudaModuleApi;  // lives as long as the process
  a->device_count = &GpuCount;
  a->is_device = &IsGpu;
  a->new_device = &NewGpu;
  a->memory_bytes = &GpuMemoryBytes;
  a->description = &GpuDescription;
  return a;
}

}  // namespace
}  // namespace tensorflux

// The module's entry point (devices/cuda_module.h): called by the loader in libtensorflux after
// the module's static initializers registered the GPU kernels.
extern "C" __attribute__((visibility("default"))) const tensorflux::CudaModuleApi*
tx_cuda_module_api(int abi_version) {
  if (abi_version != tensorflux::kCudaModuleAbiVersion) return nullptr;
  static const tensorflux::CudaModuleApi* api = tensorflux::MakeApi();
  return api;
}
