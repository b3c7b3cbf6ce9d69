// The caching allocator of one GPU's memory (internal to the CUDA build; devices/cuda_context.h
// owns one per GPU for the life of the process).
//
// Requests are rounded up to a size class (a multiple of 256 bytes up to 4 KiB, then the next
// quarter of a power of two: at most 25% waste) and served from that class's free list, or from
// cudaMalloc when the list is empty. A freed block goes back on its list, never to the driver,
// except by ClearCache(): the next step reuses it at no cost (cudaMalloc and cudaFree
// synchronize the device and take tens of microseconds).
//
// Stream safety: a block may be freed on the host while kernels that use it are still queued.
// That is safe because every kernel of the GPU runs on its one compute stream, and the copy
// streams wait for the compute stream before they write (devices/cuda_context.h), so any later
// user of the block is ordered after the earlier ones.
//
// Step stats: every allocation and deallocation is reported to the calling thread's
// AllocationTracker (core/allocation_tracker.h) when one is installed, with the size asked for
// (not the size class), so FULL_TRACE memory stats cover GPU tensors as they do CPU ones.
//
// Out of memory: when cudaMalloc fails the cache is returned to the driver and the request
// retried once; if it still fails AllocateRaw returns nullptr, which Tensor::Allocate reports as
// RESOURCE_EXHAUSTED naming the byte count and this allocator ("cuda:0"). cudaMalloc returns
// 256-byte aligned memory: alignments up to 256 are honoured, larger ones get nullptr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "tensorflux/core/allocator.h"

namespace tensorflux {

class CudaAllocator : public Allocator {
 public:
  explicit CudaAllocator(int ordinal);
  ~CudaAllocator() override;

  std::string Name() const override { return name_; }
  void* AllocateRaw(size_t alignment, size_t num_bytes) override;
  void DeallocateRaw(void* ptr, size_t num_bytes) override;
  AllocatorStats GetStats() const override;
  void ClearCache() override;

  // The size class a request of num_bytes is served from (exposed for tests).
  static size_t SizeClass(size_t num_bytes);

 private:
  // Returns every cached block to the driver. mu_ held.
  void FreeCachedLocked();

  const int ordinal_;
  const std::string name_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<size_t, std::vector<void*>> free_;  // by size class
  AllocatorStats stats_;
};

}  // namespace tensorflux
