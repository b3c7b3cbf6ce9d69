#include "tensorflux/devices/cuda_device.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

#include "tensorflux/devices/cuda_api.h"
#include "tensorflux/devices/cuda_status.h"
#include "tensorflux/devices/device_factory.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {

namespace cuda_api_internal {
std::string Description(int ordinal);
}

CudaDevice::CudaDevice(const std::string& name, CudaContext* context, std::string description)
    : Device(name, static_cast<int64_t>(context->properties().totalGlobalMem),
             std::move(description)),
      context_(context) {}

StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Create(std::string name, int ordinal) {
  TX_ASSIGN_OR_RETURN(CudaContext * context, CudaContext::Get(ordinal));
  return std::unique_ptr<CudaDevice>(
      new CudaDevice(name, context, cuda_api_internal::Description(ordinal)));
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

// ---------------------------------------------------------------- devices/cuda_api.h (CUDA build)

namespace cuda_api_internal {

int DeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver / no device: not an error for the caller
    return 0;
  }
  return n;
}

bool IsDevice(const DeviceBase* device) {
  return dynamic_cast<const CudaDevice*>(device) != nullptr;
}

StatusOr<std::unique_ptr<Device>> NewDevice(std::string name, int ordinal) {
  TX_ASSIGN_OR_RETURN(std::unique_ptr<CudaDevice> d, CudaDevice::Create(std::move(name), ordinal));
  return std::unique_ptr<Device>(std::move(d));
}

StatusOr<CudaContext*> ContextOf(DeviceBase* device) {
  auto* d = dynamic_cast<CudaDevice*>(device);
  if (d == nullptr) {
    return errors::InvalidArgument("Device ", device == nullptr ? "(null)" : device->name(),
                                   " is not a CUDA GPU device");
  }
  return d->context();
}

Status CopyHostToDevice(DeviceBase* device, const Tensor& host, Tensor* out) {
  TX_ASSIGN_OR_RETURN(CudaContext * c, ContextOf(device));
  return c->CopyHostToDevice(host, out);
}

Status CopyDeviceToHost(DeviceBase* device, const Tensor& device_tensor, Tensor* out) {
  TX_ASSIGN_OR_RETURN(CudaContext * c, ContextOf(device));
  return c->CopyDeviceToHost(device_tensor, out);
}

Status Synchronize(DeviceBase* device) {
  TX_ASSIGN_OR_RETURN(CudaContext * c, ContextOf(device));
  return c->Synchronize();
}

StatusOr<int64_t> MemoryBytes(int ordinal) {
  TX_ASSIGN_OR_RETURN(CudaContext * c, CudaContext::Get(ordinal));
  return static_cast<int64_t>(c->properties().totalGlobalMem);
}

std::string Description(int ordinal) {
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

}  // namespace cuda_api_internal

// ---------------------------------------------------------------- the GPU device factory

namespace {

// min(device_count["GPU"] (default: all), GPUs present) devices, GPU:0 ... GPU:n-1.
class CudaDeviceFactory : public DeviceFactory {
 public:
  Status CreateDevices(const ConfigProto& config, const std::string& name_prefix,
                       std::vector<std::unique_ptr<Device>>* devices) override {
    const int present = cuda_api_internal::DeviceCount();
    TX_ASSIGN_OR_RETURN(const int wanted, DeviceCount(config, DEVICE_GPU, present));
    for (int i = 0; i < std::min(wanted, present); ++i) {
      TX_ASSIGN_OR_RETURN(std::unique_ptr<CudaDevice> d,
                          CudaDevice::Create(absl::StrCat(name_prefix, "/device:GPU:", i), i));
      devices->push_back(std::move(d));
    }
    return OkStatus();
  }
};

// Sessions get GPU devices only with TX_ENABLE_GPU_DEVICES=1 for now: a step that spans the GPU
// and the CPU needs _Send/_Recv to copy between host and GPU memory (CopyHostToCudaDevice /
// CopyCudaDeviceToHost), which they do not do yet; without the copies a CPU kernel would read
// GPU memory.
[[maybe_unused]] const bool kFactoryRegistered = [] {
  const char* v = std::getenv("TX_ENABLE_GPU_DEVICES");
  if (v == nullptr || std::string(v) != "1") return false;
  DeviceFactory::Register(DEVICE_GPU, std::make_unique<CudaDeviceFactory>(), kGpuDevicePriority);
  return true;
}();

}  // namespace
}  // namespace tensorflux
