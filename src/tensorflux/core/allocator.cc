// The process-wide caching CPU allocator.
//
// Size classes: requests up to 4 KiB round up to a multiple of 64 bytes; above that to the next
// quarter of a power of two (5, 6, 7, 8 KiB, 10, 12, 14, 16 KiB, ...), so at most 25% is wasted.
// A freed block goes on its class's free list unless that would push the cache above its cap
// (env TX_CPU_ALLOCATOR_CACHE_MB, default 1024 MiB), in which case it is returned to the system.
// A zero-byte request is served as a 64-byte block: it returns a valid, unique pointer that must
// be passed to DeallocateRaw(ptr, 0). Alignments below 64 are raised to 64; an alignment that is
// not a power of two or exceeds 4096 gets nullptr. Blocks with more than 64-byte alignment share
// the free lists: a cached block is reused for such a request only if its address fits. One
// request above TX_CPU_ALLOCATION_LIMIT_MB (default: no limit short of 2^48 bytes) gets nullptr,
// which kernels report as RESOURCE_EXHAUSTED; the fuzzer uses it to keep legitimate but huge
// requests (a shape input of [2147483647]) from exhausting the machine.
#include "tensorflux/core/allocator.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace tensorflux {
namespace {

constexpr size_t kSmallLimit = 4096;
constexpr size_t kDefaultCacheMb = 1024;
constexpr size_t kMaxRequest = size_t{1} << 48;

size_t SizeClass(size_t n) {
  if (n == 0) return kAllocatorAlignment;
  if (n <= kSmallLimit) return (n + kAllocatorAlignment - 1) & ~(kAllocatorAlignment - 1);
  const size_t step = std::bit_floor(n - 1) / 4;
  return (n + step - 1) & ~(step - 1);
}

// Dense index of a size class: 64 small classes (64 B .. 4 KiB), then four per power of two.
constexpr int kNumSmallClasses = static_cast<int>(kSmallLimit / kAllocatorAlignment);
constexpr int kNumClasses = kNumSmallClasses + 4 * 48;

int ClassIndex(size_t cls) {
  if (cls <= kSmallLimit) return static_cast<int>(cls / kAllocatorAlignment) - 1;
  const size_t base = std::bit_floor(cls - 1);  // 2^p < cls <= 2^(p+1)
  const int p = std::countr_zero(base);
  const size_t quarter = (cls - base) / (base / 4);  // 1..4
  return kNumSmallClasses + (p - 12) * 4 + static_cast<int>(quarter) - 1;
}

// A size in MiB from the environment, or `fallback` bytes when unset or malformed.
size_t BytesFromEnvMb(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long long mb = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0' || mb < 0 || mb >= (1LL << 28)) return fallback;
  return static_cast<size_t>(mb) << 20;
}

class CachingCpuAllocator : public Allocator {
 public:
  CachingCpuAllocator(size_t cache_cap, size_t max_request)
      : cache_cap_(cache_cap), max_request_(max_request) {}

  std::string Name() const override { return "cpu"; }

  void* AllocateRaw(size_t alignment, size_t num_bytes) override {
    if (alignment < kAllocatorAlignment) alignment = kAllocatorAlignment;
    if (!std::has_single_bit(alignment) || alignment > 4096) return nullptr;
    if (num_bytes > max_request_) return nullptr;  // limit, or no machine has this (overflow)
    const size_t cls = SizeClass(num_bytes);
    {
      absl::MutexLock l(&mu_);
      std::vector<void*>& list = free_[ClassIndex(cls)];
      // Most recently freed first (warm in cache); skip blocks not aligned enough.
      for (size_t i = list.size(); i-- > 0;) {
        void* p = list[i];
        if ((reinterpret_cast<uintptr_t>(p) & (alignment - 1)) != 0) continue;
        list[i] = list.back();
        list.pop_back();
        stats_.bytes_cached -= static_cast<int64_t>(cls);
        ++stats_.cache_hits;
        NoteAllocLocked(cls);
        return p;
      }
    }
    // aligned_alloc wants the size to be a multiple of the alignment.
    size_t bytes = (cls + alignment - 1) & ~(alignment - 1);
    void* p = std::aligned_alloc(alignment, bytes);
    if (p == nullptr) {
      ClearCache();
      p = std::aligned_alloc(alignment, bytes);
      if (p == nullptr) return nullptr;
    }
    absl::MutexLock l(&mu_);
    NoteAllocLocked(cls);
    return p;
  }

  void DeallocateRaw(void* ptr, size_t num_bytes) override {
    if (ptr == nullptr || num_bytes > kMaxRequest) return;
    const size_t cls = SizeClass(num_bytes);
    {
      absl::MutexLock l(&mu_);
      stats_.bytes_in_use -= static_cast<int64_t>(cls);
      if (static_cast<size_t>(stats_.bytes_cached) + cls <= cache_cap_) {
        free_[ClassIndex(cls)].push_back(ptr);
        stats_.bytes_cached += static_cast<int64_t>(cls);
        return;
      }
    }
    std::free(ptr);
  }

  AllocatorStats GetStats() const override {
    absl::MutexLock l(&mu_);
    return stats_;
  }

  void ClearCache() override {
    std::vector<void*> blocks;
    {
      absl::MutexLock l(&mu_);
      for (std::vector<void*>& list : free_) {
        blocks.insert(blocks.end(), list.begin(), list.end());
        std::vector<void*>().swap(list);
      }
      stats_.bytes_cached = 0;
    }
    for (void* p : blocks) std::free(p);
  }

 private:
  void NoteAllocLocked(size_t cls) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ++stats_.num_allocs;
    stats_.bytes_in_use += static_cast<int64_t>(cls);
    if (stats_.bytes_in_use > stats_.peak_bytes_in_use)
      stats_.peak_bytes_in_use = stats_.bytes_in_use;
  }

  const size_t cache_cap_;
  const size_t max_request_;
  mutable absl::Mutex mu_;
  std::array<std::vector<void*>, kNumClasses> free_ ABSL_GUARDED_BY(mu_);
  AllocatorStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

Allocator* cpu_allocator() {
  // Never destroyed: tensors may outlive static destruction order.
  static Allocator* const a = new CachingCpuAllocator(
      BytesFromEnvMb("TX_CPU_ALLOCATOR_CACHE_MB", kDefaultCacheMb << 20),
      std::min(kMaxRequest, BytesFromEnvMb("TX_CPU_ALLOCATION_LIMIT_MB", kMaxRequest)));
  return a;
}

}  // namespace tensorflux
