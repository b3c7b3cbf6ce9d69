#include "tensorflux/devices/cpu_device.h"

#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "tensorflux/core/allocation_tracker.h"
#include "tensorflux/core/threadpool.h"
#include "tensorflux/devices/device_factory.h"

namespace tensorflux {
namespace {

// Forwards to cpu_allocator() and counts what this device allocated; reports to the calling
// thread's AllocationTracker (step stats) when one is installed. A tensor keeps a pointer
// to the allocator that made it and may outlive its session, so views are never destroyed:
// there is one per CPU device id for the life of the process, shared by every session's
// device with that id.
class CpuAllocatorView : public Allocator {
 public:
  explicit CpuAllocatorView(int id) : name_(id == 0 ? "cpu" : absl::StrCat("cpu_", id)) {}

  std::string Name() const override { return name_; }
  void* AllocateRaw(size_t alignment, size_t num_bytes) override {
    void* p = cpu_allocator()->AllocateRaw(alignment, num_bytes);
    if (p == nullptr) return nullptr;
    num_allocs_.fetch_add(1, std::memory_order_relaxed);
    const int64_t now =
        in_use_.fetch_add(static_cast<int64_t>(num_bytes), std::memory_order_relaxed) +
        static_cast<int64_t>(num_bytes);
    int64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    if (AllocationTracker::AnyActive()) {
      AllocationTracker* t = AllocationTracker::Current();
      if (t != nullptr) t->RecordAllocation(this, p, num_bytes);
    }
    return p;
  }
  void DeallocateRaw(void* ptr, size_t num_bytes) override {
    if (AllocationTracker::AnyActive()) {
      if (AllocationTracker* t = AllocationTracker::Current()) t->RecordDeallocation(ptr);
    }
    in_use_.fetch_sub(static_cast<int64_t>(num_bytes), std::memory_order_relaxed);
    cpu_allocator()->DeallocateRaw(ptr, num_bytes);
  }
  AllocatorStats GetStats() const override {
    AllocatorStats s;
    s.num_allocs = num_allocs_.load(std::memory_order_relaxed);
    s.bytes_in_use = in_use_.load(std::memory_order_relaxed);
    s.peak_bytes_in_use = peak_.load(std::memory_order_relaxed);
    return s;
  }
  void ClearCache() override { cpu_allocator()->ClearCache(); }

 private:
  const std::string name_;
  std::atomic<int64_t> num_allocs_{0};
  std::atomic<int64_t> in_use_{0};
  std::atomic<int64_t> peak_{0};
};

Allocator* AllocatorForId(int id) {
  static std::mutex mu;
  static auto* views = new std::map<int, CpuAllocatorView*>;  // never freed (see above)
  std::lock_guard<std::mutex> l(mu);
  CpuAllocatorView*& v = (*views)[id];
  if (v == nullptr) v = new CpuAllocatorView(id);
  return v;
}

int64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<int64_t>(pages) * page_size : 0;
}

class CpuDeviceFactory : public DeviceFactory {
 public:
  Status CreateDevices(const ConfigProto& config, const std::string& name_prefix,
                       std::vector<std::unique_ptr<Device>>* devices) override {
    TX_ASSIGN_OR_RETURN(const int n, DeviceCount(config, DEVICE_CPU, 1));
    if (n == 0) return OkStatus();
    std::shared_ptr<ThreadPool> pool =
        CpuDevice::NewIntraOpPool(config.intra_op_parallelism_threads());
    for (int i = 0; i < n; ++i) {
      devices->push_back(
          std::make_unique<CpuDevice>(absl::StrCat(name_prefix, "/device:CPU:", i), pool));
    }
    return OkStatus();
  }
};

TX_REGISTER_DEVICE_FACTORY(DEVICE_CPU, CpuDeviceFactory, kCpuDevicePriority);

}  // namespace

std::shared_ptr<ThreadPool> CpuDevice::NewIntraOpPool(int intra_op_threads) {
  const int n = intra_op_threads > 0 ? intra_op_threads : ThreadPool::DefaultNumThreads();
  // One thread means single-threaded kernels: no pool (DeviceBase allows nullptr).
  if (n <= 1) return nullptr;
  return std::make_shared<ThreadPool>("tx_intra_op", n);
}

CpuDevice::CpuDevice(std::string name, std::shared_ptr<ThreadPool> intra_op_pool)
    : Device(name, PhysicalMemoryBytes(), "device: CPU (host memory, cpu_allocator)"),
      pool_(std::move(intra_op_pool)),
      allocator_(AllocatorForId(parsed_name().has_id ? parsed_name().id : 0)) {}

CpuDevice::CpuDevice(std::string name, int intra_op_threads)
    : CpuDevice(std::move(name), NewIntraOpPool(intra_op_threads)) {}

CpuDevice::~CpuDevice() = default;

}  // namespace tensorflux
