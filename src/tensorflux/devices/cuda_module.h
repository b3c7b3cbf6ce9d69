// The interface between libtensorflux and its CUDA module (internal to devices/cuda_*).
//
// The GPU device and kernels (devices/cuda_*.cc, kernels/cuda/) are built as a separate shared
// object, libtensorflux_cuda.so, next to libtensorflux.so. libtensorflux does not link it (nor
// cudart, cuBLAS or cuDNN, whose loading costs every process ~0.6 s of CPU): devices/cuda_api.cc
// dlopen()s it once, the first time a process makes its devices or asks about GPUs, and only when
// the CUDA driver (libcuda.so.1) can itself be loaded and neither TX_DISABLE_GPU (set, not "0")
// nor CUDA_VISIBLE_DEVICES="" (set and empty) rules GPUs out.
//
// Loading the module runs its static initializers, which register the GPU kernels in the kernel
// registry; then the loader calls the module's one exported C function,
//   const CudaModuleApi* tx_cuda_module_api(int abi_version)
// which registers the GPU DeviceFactory and returns the table below (nullptr when the module was
// built for another abi_version). Both sides are built from one tree by one compiler, so the
// table passes C++ types. A module that is missing or fails to load is a note on stderr (when a
// driver is present) and the process runs without GPUs.
#pragma once

#include <memory>
#include <string>

#include "tensorflux/core/status.h"
#include "tensorflux/devices/device.h"
#include "tensorflux/framework/device_base.h"

namespace tensorflux {

inline constexpr int kCudaModuleAbiVersion = 1;
inline constexpr char kCudaModuleApiSymbol[] = "tx_cuda_module_api";
inline constexpr char kCudaModuleFileName[] = "libtensorflux_cuda.so";

// devices/cuda_api.h's functions as the module implements them.
struct CudaModuleApi {
  int abi_version = kCudaModuleAbiVersion;
  int (*device_count)() = nullptr;
  bool (*is_device)(const DeviceBase* device) = nullptr;
  StatusOr<std::unique_ptr<Device>> (*new_device)(std::string name, int ordinal) = nullptr;
  StatusOr<int64_t> (*memory_bytes)(int ordinal) = nullptr;
  std::string (*description)(int ordinal) = nullptr;
};

}  // namespace tensorflux
