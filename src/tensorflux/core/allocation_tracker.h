// Per-node memory accounting for step stats (the numbers TF's TrackingAllocator gives its
// NodeExecStats.memory), without wrapping the device's allocator: a kernel keeps its device and
// its tensors keep their real allocator.
//
// While an AllocationTracker is installed on a thread (ScopedAllocationTracking), allocators that
// report (the CPU devices' allocators, devices/cpu_device.cc, and the GPUs',
// devices/cuda_allocator.cc) record each allocation made on that thread, and each deallocation
// there of a buffer the tracker recorded. A kernel's work on other threads is seen where the
// tracker follows it: ThreadPool::ParallelFor installs the caller's tracker on the pool threads
// that run its shards (intra-op parallelism), and an async kernel that continues on another
// thread wraps that continuation in BindAllocationTracker (kernels/shared/sendrecv_kernels.cc's
// _Recv does). Not seen: tensors made without a device allocator (Tensor(dtype, shape) uses
// cpu_allocator() directly) and work a kernel hands to a thread without binding it.
// Thread-safe: several threads may record into one tracker at once.
//
// Cost when no thread tracks: one relaxed load of a global counter per allocation and
// deallocation (AllocationTracker::AnyActive).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "tensorflux/core/allocator.h"

namespace tensorflux {

class AllocationTracker {
 public:
  // One allocator's use while the tracker was installed (TF's AllocatorMemoryUsed).
  struct Usage {
    Allocator* allocator = nullptr;
    int64_t total_bytes = 0;  // bytes allocated
    int64_t peak_bytes = 0;   // most of them held at once
    int64_t live_bytes = 0;   // of them, not yet deallocated
  };

  AllocationTracker() = default;
  AllocationTracker(const AllocationTracker&) = delete;
  AllocationTracker& operator=(const AllocationTracker&) = delete;

  // True when some thread has a tracker installed; allocators test this before Current().
  static bool AnyActive() { return active_threads_.load(std::memory_order_relaxed) > 0; }
  // The tracker installed on the calling thread, or nullptr.
  static AllocationTracker* Current();

  // Called by reporting allocators (on the allocating thread) with the size they were asked for.
  void RecordAllocation(Allocator* a, const void* ptr, size_t num_bytes);
  // Counts only buffers this tracker recorded.
  void RecordDeallocation(const void* ptr);

  // In order of first use. Read these once the tracked work is over.
  const absl::InlinedVector<Usage, 2>& usage() const { return usage_; }
  // The allocator and size of a buffer recorded here and not yet deallocated, else nullptr.
  const Usage* FindLive(const void* ptr, size_t* num_bytes) const;

 private:
  friend class ScopedAllocationTracking;
  static std::atomic<int> active_threads_;

  mutable std::mutex mu_;  // guards the members below while threads record
  absl::InlinedVector<Usage, 2> usage_;
  absl::flat_hash_map<const void*, std::pair<int, size_t>> live_;  // ptr -> (usage index, bytes)
};

// Installs `tracker` on the calling thread for the scope's life; nullptr installs none (the
// thread's allocations in the scope count for no tracker). Scopes nest: the previous tracker is
// restored at the end.
class ScopedAllocationTracking {
 public:
  explicit ScopedAllocationTracking(AllocationTracker* tracker);
  ~ScopedAllocationTracking();
  ScopedAllocationTracking(const ScopedAllocationTracking&) = delete;
  ScopedAllocationTracking& operator=(const ScopedAllocationTracking&) = delete;

 private:
  AllocationTracker* tracker_;
  AllocationTracker* previous_ = nullptr;
};

// `fn` wrapped to run with the calling thread's current tracker (or none) installed, wherever
// it is called: an async kernel's continuation on another thread then counts for its node. The
// executor keeps an async node's tracker until the kernel's done callback has run, so call the
// wrapper before (or while) calling done, never after.
template <typename Fn>
auto BindAllocationTracker(Fn fn) {
  return [tracker = AllocationTracker::Current(), fn = std::move(fn)](auto&&... args) mutable {
    ScopedAllocationTracking tracking(tracker);
    return fn(std::forward<decltype(args)>(args)...);
  };
}

}  // namespace tensorflux
