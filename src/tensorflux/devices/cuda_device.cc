#include "tensorflux/devices/cuda_device.h"

#include "tensorflux/devices/cuda_api.h"
#include "tensorflux/devices/cuda_status.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {

StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Create(std::string name, int ordinal) {
  TX_ASSIGN_OR_RETURN(CudaContext * context, CudaContext::Get(ordinal));
  return std::unique_ptr<CudaDevice>(new CudaDevice(std::move(name), context));
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

StatusOr<std::unique_ptr<DeviceBase>> NewDevice(std::string name, int ordinal, ResourceMgr* rm) {
  TX_ASSIGN_OR_RETURN(std::unique_ptr<CudaDevice> d, CudaDevice::Create(std::move(name), ordinal));
  d->set_resource_manager(rm);
  return std::unique_ptr<DeviceBase>(std::move(d));
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
}  // namespace tensorflux
