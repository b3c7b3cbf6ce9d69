// The GPU as the rest of the runtime sees it, free of CUDA headers and always compiled: in a
// build without CUDA (no toolkit found, or -DTX_CUDA=OFF) every function here reports that no
// GPU exists, so callers need no #ifdef.
//
// For the device factory (devices/): CudaDeviceCount() and NewCudaDevice(). For _Send/_Recv and
// feeds/fetches: the host <-> GPU copies. A GPU tensor's buffer is device memory: host code must
// never read it; copy it to the host first.
//
// Errors: UNIMPLEMENTED when the build has no CUDA; UNAVAILABLE for a GPU that does not exist or
// has no usable driver; INVALID_ARGUMENT for a device that is not a GPU or a dtype that cannot
// live in GPU memory (string, resource, variant); RESOURCE_EXHAUSTED when GPU memory runs out;
// INTERNAL for other CUDA failures (named in the message).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/devices/device.h"
#include "tensorflux/framework/device_base.h"

namespace tensorflux {

// True when this build has the CUDA device and kernels compiled in.
bool CudaSupportBuilt();

// GPUs this process can use: 0 without CUDA support built in, without a driver or without a GPU
// (never an error).
int CudaDeviceCount();

// A Device of type "GPU" for CUDA device `ordinal` named `name` (a full device name, e.g.
// "/job:localhost/replica:0/task:0/device:GPU:0"), with its own ResourceMgr and attributes
// (memory_limit: the GPU's memory). Devices naming the same ordinal share its streams,
// cuBLAS/cuDNN handles and memory cache. (The CUDA build also has a GPU DeviceFactory; it is
// registered only with TX_ENABLE_GPU_DEVICES=1 until _Send/_Recv copy between host and GPU.)
StatusOr<std::unique_ptr<Device>> NewCudaDevice(std::string name, int ordinal);

// True when `device` was made by NewCudaDevice.
bool IsCudaDevice(const DeviceBase* device);

// Total memory of GPU `ordinal` in bytes (the device attribute TF calls memory_limit).
StatusOr<int64_t> CudaDeviceMemoryBytes(int ordinal);
// "device: 0, name: NVIDIA H200, pci bus id: 0000:..., compute capability: 9.0" (TF's
// physical_device_desc), or "" when the GPU does not exist.
std::string CudaDeviceDescription(int ordinal);

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
