#include "tensorflux/devices/cuda_allocator.h"

#include <bit>

#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "tensorflux/core/allocation_tracker.h"

namespace tensorflux {
namespace {

constexpr size_t kSmallLimit = 4096;
constexpr size_t kGranule = 256;  // cudaMalloc's alignment

}  // namespace

size_t CudaAllocator::SizeClass(size_t n) {
  if (n <= kSmallLimit) return n == 0 ? kGranule : (n + kGranule - 1) & ~(kGranule - 1);
  const size_t step = std::bit_floor(n - 1) / 4;
  return (n + step - 1) & ~(step - 1);
}

CudaAllocator::CudaAllocator(int ordinal)
    : ordinal_(ordinal), name_(absl::StrCat("cuda:", ordinal)) {}

CudaAllocator::~CudaAllocator() {
  absl::MutexLock l(&mu_);
  FreeCachedLocked();
}

void* CudaAllocator::AllocateRaw(size_t alignment, size_t num_bytes) {
  if (alignment > kGranule || !std::has_single_bit(alignment)) return nullptr;
  if (num_bytes > (size_t{1} << 48)) return nullptr;  // no GPU has this (and no overflow below)
  const size_t cls = SizeClass(num_bytes);
  absl::MutexLock l(&mu_);
  ++stats_.num_allocs;
  void* p = nullptr;
  auto it = free_.find(cls);
  if (it != free_.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
    stats_.bytes_cached -= static_cast<int64_t>(cls);
    ++stats_.cache_hits;
  } else {
    if (cudaSetDevice(ordinal_) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    if (cudaMalloc(&p, cls) != cudaSuccess) {
      // Clear the (non-sticky) error so that a later launch check does not report it, give the
      // cache back and try once more.
      (void)cudaGetLastError();
      FreeCachedLocked();
      if (cudaMalloc(&p, cls) != cudaSuccess) {
        (void)cudaGetLastError();
        return nullptr;
      }
    }
  }
  stats_.bytes_in_use += static_cast<int64_t>(cls);
  if (stats_.bytes_in_use > stats_.peak_bytes_in_use) {
    stats_.peak_bytes_in_use = stats_.bytes_in_use;
  }
  if (AllocationTracker::AnyActive()) {
    AllocationTracker* t = AllocationTracker::Current();
    if (t != nullptr) t->RecordAllocation(this, p, num_bytes);
  }
  return p;
}

void CudaAllocator::DeallocateRaw(void* ptr, size_t num_bytes) {
  if (ptr == nullptr) return;
  if (AllocationTracker::AnyActive()) {
    if (AllocationTracker* t = AllocationTracker::Current()) t->RecordDeallocation(ptr);
  }
  const size_t cls = SizeClass(num_bytes);
  absl::MutexLock l(&mu_);
  free_[cls].push_back(ptr);
  stats_.bytes_in_use -= static_cast<int64_t>(cls);
  stats_.bytes_cached += static_cast<int64_t>(cls);
}

AllocatorStats CudaAllocator::GetStats() const {
  absl::MutexLock l(&mu_);
  return stats_;
}

void CudaAllocator::ClearCache() {
  absl::MutexLock l(&mu_);
  FreeCachedLocked();
}

void CudaAllocator::FreeCachedLocked() {
  if (stats_.bytes_cached == 0) return;
  if (cudaSetDevice(ordinal_) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  // cudaFree waits for the device, so no queued kernel still uses a block it returns.
  for (auto& [cls, list] : free_) {
    for (void* p : list) (void)cudaFree(p);
    list.clear();
  }
  (void)cudaGetLastError();
  stats_.bytes_cached = 0;
}

}  // namespace tensorflux
