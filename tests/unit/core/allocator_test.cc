#include "tensorflux/core/allocator.h"

#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tensorflux {
namespace {

bool Aligned(void* p, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

TEST(CpuAllocatorTest, AlignedAndReusedSameClass) {
  Allocator* a = cpu_allocator();
  EXPECT_EQ(a->Name(), "cpu");
  void* p = a->AllocateRaw(kAllocatorAlignment, 1000);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(Aligned(p, 64));
  a->DeallocateRaw(p, 1000);
  // 1000 and 1020 both round to the 1024-byte class: the freed block comes back.
  const AllocatorStats before = a->GetStats();
  void* q = a->AllocateRaw(kAllocatorAlignment, 1020);
  EXPECT_EQ(q, p);
  const AllocatorStats after = a->GetStats();
  EXPECT_EQ(after.cache_hits, before.cache_hits + 1);
  EXPECT_EQ(after.num_allocs, before.num_allocs + 1);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use + 1024);
  EXPECT_EQ(after.bytes_cached, before.bytes_cached - 1024);
  a->DeallocateRaw(q, 1020);
}

TEST(CpuAllocatorTest, LargeClassesArePowerOfTwoQuarters) {
  Allocator* a = cpu_allocator();
  // 1 MiB + 1 rounds up to 1.25 MiB; a 1.2 MiB request is then served by the same block.
  const size_t mib = 1 << 20;
  void* p = a->AllocateRaw(64, mib + 1);
  ASSERT_NE(p, nullptr);
  const AllocatorStats s1 = a->GetStats();
  a->DeallocateRaw(p, mib + 1);
  const AllocatorStats s2 = a->GetStats();
  EXPECT_EQ(s1.bytes_in_use - s2.bytes_in_use, static_cast<int64_t>(mib + mib / 4));
  void* q = a->AllocateRaw(64, mib + mib / 5);
  EXPECT_EQ(q, p);
  a->DeallocateRaw(q, mib + mib / 5);
  // 1.3 MiB needs the 1.5 MiB class: a different block.
  void* r = a->AllocateRaw(64, mib + 3 * mib / 10);
  EXPECT_NE(r, p);
  a->DeallocateRaw(r, mib + 3 * mib / 10);
}

TEST(CpuAllocatorTest, PeakAndInUse) {
  Allocator* a = cpu_allocator();
  const AllocatorStats s0 = a->GetStats();
  void* p = a->AllocateRaw(64, 64 * 1024 * 7);  // a class of its own (448 KiB)
  const AllocatorStats s1 = a->GetStats();
  EXPECT_GE(s1.peak_bytes_in_use, s1.bytes_in_use);
  EXPECT_EQ(s1.bytes_in_use - s0.bytes_in_use, 64 * 1024 * 7);
  a->DeallocateRaw(p, 64 * 1024 * 7);
  EXPECT_EQ(a->GetStats().bytes_in_use, s0.bytes_in_use);
}

TEST(CpuAllocatorTest, LargerAlignment) {
  Allocator* a = cpu_allocator();
  void* p = a->AllocateRaw(4096, 100);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(Aligned(p, 4096));
  a->DeallocateRaw(p, 100);
  EXPECT_EQ(a->AllocateRaw(96, 10), nullptr);     // not a power of two
  void* small = a->AllocateRaw(8, 10);             // below 64: still 64-byte aligned
  EXPECT_TRUE(Aligned(small, 64));
  a->DeallocateRaw(small, 10);
  EXPECT_EQ(a->AllocateRaw(8192, 10), nullptr);   // above the documented maximum
  EXPECT_EQ(a->AllocateRaw(64, ~size_t{0} - 10), nullptr);  // absurd size: no wrap-around
}

TEST(CpuAllocatorTest, ZeroBytesGivesUniqueValidPointers) {
  Allocator* a = cpu_allocator();
  void* p = a->AllocateRaw(64, 0);
  void* q = a->AllocateRaw(64, 0);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  EXPECT_NE(p, q);
  a->DeallocateRaw(p, 0);
  a->DeallocateRaw(q, 0);
}

TEST(CpuAllocatorTest, ClearCacheEmptiesIt) {
  Allocator* a = cpu_allocator();
  void* p = a->AllocateRaw(64, 5000);
  a->DeallocateRaw(p, 5000);
  EXPECT_GT(a->GetStats().bytes_cached, 0);
  a->ClearCache();
  EXPECT_EQ(a->GetStats().bytes_cached, 0);
}

TEST(CpuAllocatorTest, ConcurrentAllocateAndFree) {
  Allocator* a = cpu_allocator();
  const int64_t in_use_before = a->GetStats().bytes_in_use;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([a, t] {
      std::vector<std::pair<void*, size_t>> live;
      for (int i = 0; i < 2000; ++i) {
        const size_t n = 64 + 97 * ((i * 7 + t) % 300);
        void* p = a->AllocateRaw(64, n);
        ASSERT_NE(p, nullptr);
        ASSERT_TRUE(Aligned(p, 64));
        static_cast<unsigned char*>(p)[0] = static_cast<unsigned char>(i);
        static_cast<unsigned char*>(p)[n - 1] = static_cast<unsigned char>(i);
        live.emplace_back(p, n);
        if (live.size() > 8) {
          a->DeallocateRaw(live.front().first, live.front().second);
          live.erase(live.begin());
        }
      }
      for (auto& [p, n] : live) a->DeallocateRaw(p, n);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(a->GetStats().bytes_in_use, in_use_before);
}

}  // namespace
}  // namespace tensorflux
