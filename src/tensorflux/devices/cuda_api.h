// The GPU as the rest of the runtime sees it, free of CUDA headers and always compiled into
// libtensorflux. The GPU device and kernels themselves are the CUDA module,
// libtensorflux_cuda.so (devices/cuda_module.h), loaded on first use: the first call of any
// function here, or the first DeviceMgr (DeviceFactory::AddDevices) loads it when a CUDA driver
// is present and TX_DISABLE_GPU / CUDA_VISIBLE_DEVICES="" do not rule GPUs out. In a build
// without CUDA (no toolkit found, or -DTX_CUDA=OFF), without a driver, or when the module cannot
// be loaded, every function here reports that no GPU exists, so callers need no #ifdef.
//
// For the device factory (devices/): CudaDeviceCount() and NewCudaDevice(). For _Send/_Recv and
// feeds/fetches: the host <-> GPU copies. A GPU tensor's buffer is device memory: host code must
// never read it; copy it to the host first.
//
// Errors: UNIMPLEMENTED when the build has no CUDA; UNAVAILABLE for a GPU that does not exist,
// has no usable driver or whose module was not loaded (the message says why); INVALID_ARGUMENT
// for a device that is not a GPU or a dtype that cannot live in GPU memory (string, resource,
// variant); RESOURCE_EXHAUSTED when GPU memory runs out; INTERNAL for other CUDA failures (named
// in the message).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/devices/device.h"
#include "tensorflux/framework/device_base.h"

namespace tensorflux {

// True when this build has the CUDA module (the GPU device and kernels) built.
bool CudaSupportBuilt();

// Loads the CUDA module if it is to be loaded (see above; once per process, thread-safe). GPU
// kernels are registered and the GPU DeviceFactory exists only after this.
void LoadCudaModule();
// OK when the module is loaded; otherwise UNAVAILABLE saying why ("no CUDA driver
// (libcuda.so.1 cannot be loaded)", "TX_DISABLE_GPU is set", a dlopen error, ...). Loads it
// first if that was not tried yet.
Status CudaModuleStatus();
// Tests: loads the module from `path` ("" = next to libtensorflux) without the driver and
// environment checks, unless this process has tried to open the module already (a load that
// those checks refused does not count); then CudaModuleStatus().
Status LoadCudaModuleForTesting(const std::string& path);

// GPUs this process can use: 0 without CUDA support built in, without a driver or without a GPU
// (never an error).
int CudaDeviceCount();

// A Device of type "GPU" for CUDA device `ordinal` named `name` (a full device name, e.g.
// "/job:localhost/replica:0/task:0/device:GPU:0"), with its own ResourceMgr and attributes
// (memory_limit: the GPU's memory). Devices naming the same ordinal share its streams,
// cuBLAS/cuDNN handles and memory cache. Sessions get theirs from the GPU DeviceFactory the
// module registers (ConfigProto device_count {"GPU": 0} opts a session out).
StatusOr<std::unique_ptr<Device>> NewCudaDevice(std::string name, int ordinal);

// True when `device` was made by NewCudaDevice.
bool IsCudaDevice(const DeviceBase* device);

// Total memory of GPU `ordinal` in bytes (the device attribute TF calls memory_limit).
StatusOr<int64_t> CudaDeviceMemoryBytes(int ordinal);
// "device: 0, name: NVIDIA H200, pci bus id: 0000:..., compute capability: 9.0" (TF's
// physical_device_desc), or "" when the GPU does not exist.
std::string CudaDeviceDescription(int ordinal);

// The copies of Device::CopyCPUTensorToDevice / CopyDeviceTensorToCPU / Sync on a CUDA device
// (INVALID_ARGUMENT for any other device).
// *out = a new tensor in `device`'s memory with the dtype, shape and values of `host` (a tensor in
// host memory). Returns when the copy is complete: the GPU's kernels see the data and `host` may
// be freed.
Status CopyHostToCudaDevice(DeviceBase* device, const Tensor& host, Tensor* out);
// *out = a new host tensor with the values of `device_tensor` (a tensor in `device`'s memory),
// after the kernels queued so far that produce it have run. Blocks until the data is on the host.
Status CopyCudaDeviceToHost(DeviceBase* device, const Tensor& device_tensor, Tensor* out);
// Waits until the work queued on `device`'s compute stream has run; the first asynchronous
// error of that work, if any.
Status SynchronizeCudaDevice(DeviceBase* device);

}  // namespace tensorflux
