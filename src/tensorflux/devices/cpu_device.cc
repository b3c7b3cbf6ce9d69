#include "tensorflux/devices/cpu_device.h"

#include "tensorflux/core/threadpool.h"

namespace tensorflux {

CpuDevice::CpuDevice(std::string name, int intra_op_threads) : name_(std::move(name)) {
  const int n = intra_op_threads > 0 ? intra_op_threads : ThreadPool::DefaultNumThreads();
  // One thread means single-threaded kernels: no pool (DeviceBase allows nullptr).
  if (n > 1) pool_ = std::make_unique<ThreadPool>("tx_intra_op", n);
}

CpuDevice::~CpuDevice() = default;

Allocator* CpuDevice::GetAllocator() { return cpu_allocator(); }

}  // namespace tensorflux
