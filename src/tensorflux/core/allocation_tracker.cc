#include "tensorflux/core/allocation_tracker.h"

#include <algorithm>

namespace tensorflux {
namespace {
thread_local AllocationTracker* current_tracker = nullptr;
}  // namespace

std::atomic<int> AllocationTracker::active_threads_{0};

AllocationTracker* AllocationTracker::Current() { return current_tracker; }

void AllocationTracker::RecordAllocation(Allocator* a, const void* ptr, size_t num_bytes) {
  std::lock_guard<std::mutex> l(mu_);
  int idx = 0;
  while (idx < static_cast<int>(usage_.size()) && usage_[idx].allocator != a) ++idx;
  if (idx == static_cast<int>(usage_.size())) usage_.push_back(Usage{a});
  Usage& u = usage_[idx];
  const int64_t n = static_cast<int64_t>(num_bytes);
  u.total_bytes += n;
  u.live_bytes += n;
  u.peak_bytes = std::max(u.peak_bytes, u.live_bytes);
  live_[ptr] = {idx, num_bytes};
}

void AllocationTracker::RecordDeallocation(const void* ptr) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return;
  usage_[it->second.first].live_bytes -= static_cast<int64_t>(it->second.second);
  live_.erase(it);
}

const AllocationTracker::Usage* AllocationTracker::FindLive(const void* ptr,
                                                            size_t* num_bytes) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return nullptr;
  *num_bytes = it->second.second;
  return &usage_[it->second.first];
}

// Only a non-null tracker counts as active: installing none costs the allocators nothing.
ScopedAllocationTracking::ScopedAllocationTracking(AllocationTracker* tracker)
    : tracker_(tracker), previous_(current_tracker) {
  current_tracker = tracker_;
  if (tracker_ != nullptr) {
    AllocationTracker::active_threads_.fetch_add(1, std::memory_order_relaxed);
  }
}

ScopedAllocationTracking::~ScopedAllocationTracking() {
  current_tracker = previous_;
  if (tracker_ != nullptr) {
    AllocationTracker::active_threads_.fetch_sub(1, std::memory_order_relaxed);
  }
}

}  // namespace tensorflux
