// Allocators hand out 64-byte-aligned buffers. The CPU allocator caches freed blocks by size class
// and reuses them for the next step, because fresh pages cost about 2 µs each on our machines
// (shared/PEERS.md) and glibc returns blocks over 32 MiB to the kernel on free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tensorflux {

inline constexpr size_t kAllocatorAlignment = 64;

struct AllocatorStats {
  int64_t num_allocs = 0;        // calls to AllocateRaw
  int64_t bytes_in_use = 0;      // bytes handed out and not yet returned
  int64_t peak_bytes_in_use = 0;
  int64_t bytes_cached = 0;      // bytes held in the free-block cache
  int64_t cache_hits = 0;        // allocations served from the cache
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual std::string Name() const = 0;
  // Returns nullptr when memory is exhausted (callers turn that into RESOURCE_EXHAUSTED).
  // `alignment` is a power of two <= 4096.
  virtual void* AllocateRaw(size_t alignment, size_t num_bytes) = 0;
  // `num_bytes` must be the size passed to AllocateRaw.
  virtual void DeallocateRaw(void* ptr, size_t num_bytes) = 0;
  virtual AllocatorStats GetStats() const { return {}; }
  // Returns cached free blocks to the system.
  virtual void ClearCache() {}
};

// The process-wide CPU allocator: a thread-safe caching allocator. Requests are rounded up to a
// size class (power-of-two quarters above 4 KiB); freed blocks stay in a per-class free list,
// holding at most TX_CPU_ALLOCATOR_CACHE_MB (default 1024) MiB in all, beyond which frees go back
// to the system.
Allocator* cpu_allocator();

}  // namespace tensorflux
