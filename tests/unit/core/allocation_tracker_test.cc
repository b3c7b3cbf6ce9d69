// AllocationTracker (core/allocation_tracker.h) through a CPU device's allocator: what a tracked
// thread allocates and frees, nesting, other threads, and the untracked state.
#include "tensorflux/core/allocation_tracker.h"

#include <thread>

#include "gtest/gtest.h"
#include "tensorflux/devices/cpu_device.h"

namespace tensorflux {
namespace {

class AllocationTrackerTest : public ::testing::Test {
 protected:
  CpuDevice device_{"/job:localhost/replica:0/task:0/device:CPU:0", 1};
  Allocator* a_ = device_.GetAllocator();
};

TEST_F(AllocationTrackerTest, NothingInstalled) {
  EXPECT_FALSE(AllocationTracker::AnyActive());
  EXPECT_EQ(AllocationTracker::Current(), nullptr);
  { ScopedAllocationTracking none(nullptr); EXPECT_FALSE(AllocationTracker::AnyActive()); }
}

TEST_F(AllocationTrackerTest, TotalPeakAndLive) {
  void* before = a_->AllocateRaw(64, 1000);  // allocated before tracking: never counted
  AllocationTracker t;
  void* kept = nullptr;
  {
    ScopedAllocationTracking tracking(&t);
    EXPECT_TRUE(AllocationTracker::AnyActive());
    EXPECT_EQ(AllocationTracker::Current(), &t);
    void* temp = a_->AllocateRaw(64, 100);
    kept = a_->AllocateRaw(64, 50);
    a_->DeallocateRaw(temp, 100);   // 150 held at most, then 50
    a_->DeallocateRaw(before, 1000);  // not recorded here: ignored
    void* again = a_->AllocateRaw(64, 30);  // 80 held
    a_->DeallocateRaw(again, 30);
  }
  EXPECT_FALSE(AllocationTracker::AnyActive());
  EXPECT_EQ(AllocationTracker::Current(), nullptr);
  ASSERT_EQ(t.usage().size(), 1u);
  const AllocationTracker::Usage& u = t.usage()[0];
  EXPECT_EQ(u.allocator, a_);
  EXPECT_EQ(u.total_bytes, 180);
  EXPECT_EQ(u.peak_bytes, 150);
  EXPECT_EQ(u.live_bytes, 50);
  size_t n = 0;
  ASSERT_NE(t.FindLive(kept, &n), nullptr);
  EXPECT_EQ(n, 50u);
  EXPECT_EQ(t.FindLive(before, &n), nullptr);
  // Freed after tracking ended (another node's consumer): no longer seen by this tracker's
  // thread, so its numbers stay as they were.
  a_->DeallocateRaw(kept, 50);
  EXPECT_EQ(t.usage()[0].live_bytes, 50);
}

TEST_F(AllocationTrackerTest, NestedScopesAndOtherThreads) {
  AllocationTracker outer, inner;
  ScopedAllocationTracking o(&outer);
  void* p1 = a_->AllocateRaw(64, 10);
  {
    ScopedAllocationTracking i(&inner);
    EXPECT_EQ(AllocationTracker::Current(), &inner);
    void* p2 = a_->AllocateRaw(64, 20);
    a_->DeallocateRaw(p2, 20);
    // Another thread's allocations go to no tracker.
    std::thread([this] {
      EXPECT_EQ(AllocationTracker::Current(), nullptr);
      a_->DeallocateRaw(a_->AllocateRaw(64, 500), 500);
    }).join();
  }
  EXPECT_EQ(AllocationTracker::Current(), &outer);
  a_->DeallocateRaw(p1, 10);
  ASSERT_EQ(outer.usage().size(), 1u);
  EXPECT_EQ(outer.usage()[0].total_bytes, 10);
  EXPECT_EQ(outer.usage()[0].live_bytes, 0);
  ASSERT_EQ(inner.usage().size(), 1u);
  EXPECT_EQ(inner.usage()[0].total_bytes, 20);
  EXPECT_EQ(inner.usage()[0].peak_bytes, 20);
}

TEST_F(AllocationTrackerTest, OneUsagePerAllocator) {
  CpuDevice other("/job:localhost/replica:0/task:0/device:CPU:1", 1);
  AllocationTracker t;
  {
    ScopedAllocationTracking tracking(&t);
    void* p = a_->AllocateRaw(64, 8);
    void* q = other.GetAllocator()->AllocateRaw(64, 16);
    a_->DeallocateRaw(p, 8);
    other.GetAllocator()->DeallocateRaw(q, 16);
  }
  ASSERT_EQ(t.usage().size(), 2u);
  EXPECT_EQ(t.usage()[0].allocator->Name(), a_->Name());
  EXPECT_EQ(t.usage()[0].total_bytes, 8);
  EXPECT_EQ(t.usage()[1].allocator->Name(), other.GetAllocator()->Name());
  EXPECT_EQ(t.usage()[1].total_bytes, 16);
}

}  // namespace
}  // namespace tensorflux
