#include "tensorflux/core/threadpool.h"

#include <thread>

#include <atomic>
#include <chrono>
#include <set>
#include <vector>

#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "tensorflux/core/max_parallelism.h"
#include "tensorflux/core/openmp_team.h"

namespace tensorflux {
namespace {

TEST(ThreadPoolTest, ScheduleRunsEverything) {
  std::atomic<int> sum{0};
  {
    ThreadPool pool("test", 3);
    EXPECT_EQ(pool.NumThreads(), 3);
    for (int i = 1; i <= 100; ++i) pool.Schedule([&sum, i] { sum += i; });
  }  // destructor drains the queue
  EXPECT_EQ(sum.load(), 5050);
}

TEST(ThreadPoolTest, CurrentThreadId) {
  ThreadPool pool("ids", 2);
  EXPECT_EQ(pool.CurrentThreadId(), -1);
  absl::Mutex mu;
  std::set<int> ids;
  absl::BlockingCounter done(20);
  for (int i = 0; i < 20; ++i) {
    pool.Schedule([&] {
      {
        absl::MutexLock l(&mu);
        ids.insert(pool.CurrentThreadId());
      }
      done.DecrementCount();
    });
  }
  done.Wait();
  for (int id : ids) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 2);
  }
}

TEST(ThreadPoolTest, DefaultNumThreadsAtLeastOne) { EXPECT_GE(ThreadPool::DefaultNumThreads(), 1); }

void ExpectCoversOnce(ThreadPool& pool, int64_t total, int64_t cost) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(total));
  std::atomic<int> calls{0};
  pool.ParallelFor(total, cost, [&](int64_t b, int64_t e) {
    ASSERT_LE(0, b);
    ASSERT_LT(b, e);
    ASSERT_LE(e, total);
    ++calls;
    for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
  });
  for (int64_t i = 0; i < total; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i;
  EXPECT_LE(calls.load(), 4 * pool.NumThreads() + 4);
}

TEST(ThreadPoolTest, ParallelForCoversEveryIndexOnce) {
  ThreadPool pool("pf", 4);
  for (int64_t total : {1, 2, 3, 7, 64, 1000, 100003}) {
    for (int64_t cost : {1, 100, 100000}) ExpectCoversOnce(pool, total, cost);
  }
  pool.ParallelFor(0, 1000, [](int64_t, int64_t) { FAIL() << "empty range must not call"; });
}

TEST(ThreadPoolTest, CheapWorkRunsInline) {
  ThreadPool pool("inline", 4);
  int calls = 0;  // not atomic: inline means the caller thread only
  pool.ParallelFor(100, 1, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 100);
    EXPECT_EQ(pool.CurrentThreadId(), -1);
  });
  EXPECT_EQ(calls, 1);
}

TEST(ThreadPoolTest, SingleThreadPoolRunsInline) {
  ThreadPool pool("one", 1);
  int calls = 0;
  pool.ParallelFor(1 << 20, 1000, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(e - b, 1 << 20);
  });
  EXPECT_EQ(calls, 1);
}

TEST(ThreadPoolTest, ScopedMaxParallelismCapsTheCallingThread) {
  ThreadPool pool("capped", 4);
  auto shards = [&] {
    std::atomic<int> calls{0};
    pool.ParallelFor(1 << 20, 1000, [&](int64_t, int64_t) { ++calls; });
    return calls.load();
  };
  EXPECT_GT(shards(), 1);
  {
    ScopedMaxParallelism one(1);
    EXPECT_EQ(ScopedMaxParallelism::Current(), 1);
    EXPECT_EQ(shards(), 1);  // inline
    {
      ScopedMaxParallelism none(0);  // lifts the cap in the inner scope
      EXPECT_GT(shards(), 1);
    }
    EXPECT_EQ(shards(), 1);
    // Another thread is not capped.
    std::thread other([&] { EXPECT_GT(shards(), 1); });
    other.join();
  }
  EXPECT_EQ(ScopedMaxParallelism::Current(), 0);
  ExpectCoversOnce(pool, 100003, 100000);
  ScopedMaxParallelism two(2);
  ExpectCoversOnce(pool, 100003, 100000);
}

// Shards of [0, 8) that each wait (up to 10 s) until two distinct threads have entered one, and
// record whether any ran on one of `pool`'s threads. Returns the number of distinct threads.
int TwoThreadRendezvous(ThreadPool& pool, bool* on_pool_thread) {
  absl::Mutex mu;
  std::set<std::thread::id> seen;
  std::atomic<bool> pool_thread{false};
  pool.ParallelFor(8, 1000000, [&](int64_t, int64_t) {
    if (pool.CurrentThreadId() >= 0) pool_thread = true;
    absl::MutexLock l(&mu);
    seen.insert(std::this_thread::get_id());
    auto two = [&seen] { return seen.size() >= 2; };
    mu.AwaitWithTimeout(absl::Condition(&two), absl::Seconds(10));
  });
  *on_pool_thread = pool_thread;
  return static_cast<int>(seen.size());
}

TEST(ThreadPoolTest, ParallelForOnAnOpenMpTeamLeaderRunsOnTheTeam) {
  ThreadPool pool("omp", 2);
  std::thread([&pool] {
    // A thread that has not run oneDNN uses the pool (the caller and up to 2 helpers).
    EXPECT_FALSE(HasOpenMpTeam());
    bool on_pool = false;
    EXPECT_GE(TwoThreadRendezvous(pool, &on_pool), 2);
    EXPECT_TRUE(on_pool);
    NoteOpenMpTeam();
    // Off by default here (OMP_WAIT_POLICY is not ACTIVE in the test's environment).
    EXPECT_FALSE(HasOpenMpTeam());
    EnableOpenMpTeamParallelFor(true);
    if (!HasOpenMpTeam()) {
      EnableOpenMpTeamParallelFor(false);
      GTEST_SKIP() << "built without OpenMP";
    }
    // Now the shards run on the caller's OpenMP team: NumThreads() = 2 threads, the caller and
    // one of the team, none from the pool.
    on_pool = true;
    EXPECT_EQ(TwoThreadRendezvous(pool, &on_pool), 2);
    EXPECT_FALSE(on_pool);
    // Every index once, as on the pool.
    ExpectCoversOnce(pool, 100003, 100000);
    // Inside the team's region the team is busy: a nested ParallelFor uses the pool.
    std::atomic<int> nested_on_pool{0};
    pool.ParallelFor(2, 1000000, [&](int64_t, int64_t) {
      EXPECT_FALSE(HasOpenMpTeam());
      bool p = false;
      TwoThreadRendezvous(pool, &p);
      if (p) nested_on_pool.fetch_add(1);
    });
    EXPECT_GE(nested_on_pool.load(), 1);
    // Disabled again: the pool.
    EnableOpenMpTeamParallelFor(false);
    EXPECT_FALSE(HasOpenMpTeam());
    on_pool = false;
    EXPECT_GE(TwoThreadRendezvous(pool, &on_pool), 2);
    EXPECT_TRUE(on_pool);
  }).join();
  // The flag is the thread's own: this thread still uses the pool.
  EXPECT_FALSE(HasOpenMpTeam());
}

TEST(ThreadPoolTest, ParallelForUnderContention) {
  // Several threads call ParallelFor on the same pool at once, including from inside pool tasks
  // (nested), while the pool is busy; every index is still covered exactly once and nothing
  // deadlocks.
  ThreadPool pool("contended", 2);
  constexpr int kCallers = 6;
  constexpr int64_t kTotal = 5000;
  std::vector<std::vector<std::atomic<int>>> hits(kCallers);
  for (auto& h : hits) h = std::vector<std::atomic<int>>(kTotal);
  absl::BlockingCounter done(kCallers);
  for (int c = 0; c < kCallers; ++c) {
    pool.Schedule([&, c] {
      pool.ParallelFor(kTotal, 5000, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[c][i].fetch_add(1);
      });
      done.DecrementCount();
    });
  }
  // And the test thread too.
  ExpectCoversOnce(pool, 20000, 1000);
  done.Wait();
  for (int c = 0; c < kCallers; ++c)
    for (int64_t i = 0; i < kTotal; ++i) ASSERT_EQ(hits[c][i].load(), 1);
}

}  // namespace
}  // namespace tensorflux
