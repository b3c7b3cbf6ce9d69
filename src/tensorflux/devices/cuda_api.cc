// devices/cuda_api.h. Compiled in every build; TX_HAVE_CUDA (set for this file only, by CMake,
// when the CUDA part is built) forwards to the CUDA build's definitions in cuda_device.cc.
#include "tensorflux/devices/cuda_api.h"

namespace tensorflux {

#ifdef TX_HAVE_CUDA
namespace cuda_api_internal {
int DeviceCount();
bool IsDevice(const DeviceBase* device);
StatusOr<std::unique_ptr<Device>> NewDevice(std::string name, int ordinal);
Status CopyHostToDevice(DeviceBase* device, const Tensor& host, Tensor* out);
Status CopyDeviceToHost(DeviceBase* device, const Tensor& device_tensor, Tensor* out);
Status Synchronize(DeviceBase* device);
StatusOr<int64_t> MemoryBytes(int ordinal);
std::string Description(int ordinal);
}  // namespace cuda_api_internal

bool CudaSupportBuilt() { return true; }
int CudaDeviceCount() { return cuda_api_internal::DeviceCount(); }
StatusOr<std::unique_ptr<Device>> NewCudaDevice(std::string name, int ordinal) {
  return cuda_api_internal::NewDevice(std::move(name), ordinal);
}
bool IsCudaDevice(const DeviceBase* device) { return cuda_api_internal::IsDevice(device); }
StatusOr<int64_t> CudaDeviceMemoryBytes(int ordinal) {
  return cuda_api_internal::MemoryBytes(ordinal);
}
std::string CudaDeviceDescription(int ordinal) {
  return cuda_api_internal::Description(ordinal);
}
Status CopyHostToCudaDevice(DeviceBase* device, const Tensor& host, Tensor* out) {
  return cuda_api_internal::CopyHostToDevice(device, host, out);
}
Status CopyCudaDeviceToHost(DeviceBase* device, const Tensor& device_tensor, Tensor* out) {
  return cuda_api_internal::CopyDeviceToHost(device, device_tensor, out);
}
Status SynchronizeCudaDevice(DeviceBase* device) {
  return cuda_api_internal::Synchronize(device);
}

#else  // no CUDA in this build

namespace {
Status NoCuda() {
  return errors::Unimplemented("This TensorFlux build has no CUDA support (no CUDA toolkit was "
                               "found, or it was configured with -DTX_CUDA=OFF)");
}
}  // namespace

bool CudaSupportBuilt() { return false; }
int CudaDeviceCount() { return 0; }
StatusOr<std::unique_ptr<Device>> NewCudaDevice(std::string, int) { return NoCuda(); }
bool IsCudaDevice(const DeviceBase*) { return false; }
StatusOr<int64_t> CudaDeviceMemoryBytes(int) { return NoCuda(); }
std::string CudaDeviceDescription(int) { return ""; }
Status CopyHostToCudaDevice(DeviceBase*, const Tensor&, Tensor*) { return NoCuda(); }
Status CopyCudaDeviceToHost(DeviceBase*, const Tensor&, Tensor*) { return NoCuda(); }
Status SynchronizeCudaDevice(DeviceBase*) { return NoCuda(); }

#endif

}  // namespace tensorflux
