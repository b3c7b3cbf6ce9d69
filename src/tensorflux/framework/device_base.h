// What a kernel sees of the device it runs on: its name and type, an allocator and an intra-op
// thread pool. devices/ implements it (CpuDevice, later CudaDevice).
#pragma once

#include <string>

#include "tensorflux/core/allocator.h"
#include "tensorflux/core/threadpool.h"

namespace tensorflux {

// Device type names used in kernel registrations.
inline constexpr const char* DEVICE_CPU = "CPU";
inline constexpr const char* DEVICE_GPU = "GPU";

class ResourceMgr;

class DeviceBase {
 public:
  virtual ~DeviceBase() = default;
  // Full name: "/job:localhost/replica:0/task:0/device:CPU:0".
  virtual const std::string& name() const = 0;
  // "CPU", "GPU".
  virtual const std::string& device_type() const = 0;
  virtual Allocator* GetAllocator() = 0;
  // Pool for parallelizing one kernel; may be nullptr (then the kernel runs single-threaded).
  virtual ThreadPool* intra_op_thread_pool() { return nullptr; }
  // Per-device resources (variables, iterators); nullptr if the device keeps none.
  virtual ResourceMgr* resource_manager() { return nullptr; }
};

}  // namespace tensorflux
