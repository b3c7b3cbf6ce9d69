#define EIGEN_USE_THREADS
#include "tensorflux/core/threadpool.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include <unsupported/Eigen/CXX11/ThreadPool>

#include "absl/synchronization/blocking_counter.h"
#include "tensorflux/core/allocation_tracker.h"
#include "tensorflux/core/max_parallelism.h"
#include "tensorflux/core/openmp_team.h"

namespace tensorflux {
namespace {

// Below this much estimated work (nanoseconds) ParallelFor runs inline: scheduling a shard costs
// on the order of a microsecond, so parallelism only pays for ~10 µs or more.
constexpr int64_t kMinParallelCostNs = 10000;

// Whether idle workers of a pool of `threads` threads spin before sleeping (Eigen spins one
// worker for 5000 / threads steal attempts, tens of microseconds). Spinning only pays when the
// spinner has a core to itself. A session creates an inter-op and an intra-op pool of one
// thread per core each, and oneDNN adds its OpenMP team, so a pool with more than half the
// cores is oversubscribed and its spinner takes the core of a runnable thread (a GEMM's second
// OpenMP thread, say). On 2 cores the spin (Steal, PopBack, WorkerLoop) was about 10% of the
// bench/peer MLP's samples; without it the process's CPU time per step was lower in 10 of 12
// alternated runs (median ratio 0.81) and the p10 step time in 11 of 12, at load 10-15; the
// CNN unchanged within the noise (docs/PERFORMANCE.md, 2026-11-30 mlpspeed2). TF always spins.
bool AllowSpinning(int threads) {
  return 2 * threads <= ThreadPool::DefaultNumThreads();
}

}  // namespace

struct ThreadPool::Impl {
  Impl(std::string n, int threads)
      : name(std::move(n)), pool(threads, AllowSpinning(threads)) {}
  std::string name;
  Eigen::ThreadPool pool;
};

ThreadPool::ThreadPool(std::string name, int num_threads)
    : impl_(std::make_unique<Impl>(std::move(name), std::max(1, num_threads))) {}

// Eigen's pool runs every queued task before its threads exit.
ThreadPool::~ThreadPool() = default;

void ThreadPool::Schedule(std::function<void()> fn) { impl_->pool.Schedule(std::move(fn)); }

int ThreadPool::NumThreads() const { return impl_->pool.NumThreads(); }

int ThreadPool::CurrentThreadId() const { return impl_->pool.CurrentThreadId(); }

int ThreadPool::DefaultNumThreads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

// Shards are claimed from a shared atomic counter by the caller and by up to NumThreads() helper
// tasks. The caller keeps claiming until none are left, so the call finishes even when every pool
// thread is busy (e.g. a ParallelFor nested inside a pool task); it then waits only for shards
// that helpers have already started. On a thread that leads an OpenMP team the claimers are that
// team's NumThreads() threads instead (the caller one of them).
void ThreadPool::ParallelFor(int64_t total, int64_t cost_per_unit,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (total <= 0) return;
  int threads = NumThreads();
  if (const int cap = ScopedMaxParallelism::Current(); cap > 0) threads = std::min(threads, cap);
  int64_t cost = 0;
  if (cost_per_unit < 1) cost_per_unit = 1;
  if (__builtin_mul_overflow(total, cost_per_unit, &cost)) cost = INT64_MAX;
  if (threads <= 1 || total == 1 || cost < kMinParallelCostNs) {
    fn(0, total);
    return;
  }
  int64_t shards = std::min<int64_t>({cost / kMinParallelCostNs, 4 * int64_t{threads}, total});
  shards = std::max<int64_t>(shards, 2);
  const int64_t block = (total + shards - 1) / shards;
  shards = (total + block - 1) / block;
  if (shards <= 1) {
    fn(0, total);
    return;
  }

  struct State {
    explicit State(int64_t n) : pending(static_cast<int>(n)) {}
    std::atomic<int64_t> next{0};
    absl::BlockingCounter pending;
  };
  auto state = std::make_shared<State>(shards);
  const std::function<void(int64_t, int64_t)>* f = &fn;
  // Runs shards until none are left. `f` is only dereferenced for a claimed shard, and the caller
  // does not return before every claimed shard is done, so it is still alive then.
  // The caller's allocation tracker (step stats) follows the shards to the pool threads; it
  // outlives them for the same reason `f` does.
  AllocationTracker* tracker = AllocationTracker::Current();
  auto work = [state, f, total, block, shards, tracker]() {
    for (;;) {
      const int64_t s = state->next.fetch_add(1, std::memory_order_relaxed);
      if (s >= shards) return;
      const int64_t begin = s * block;
      {
        ScopedAllocationTracking tracking(tracker);
        (*f)(begin, std::min(total, begin + block));
      }
      state->pending.DecrementCount();
    }
  };
  if (HasOpenMpTeam()) {
    // The calling thread leads oneDNN's OpenMP team (core/openmp_team.h): its threads claim
    // the shards, and the pool's stay asleep.
    RunOnOpenMpTeam(threads, [](void* w) { (*static_cast<decltype(work)*>(w))(); }, &work);
  } else {
    const int64_t helpers = std::min<int64_t>(shards - 1, threads);
    for (int64_t i = 0; i < helpers; ++i) Schedule(work);
    work();
  }
  state->pending.Wait();
}

}  // namespace tensorflux
