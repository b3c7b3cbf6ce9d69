// A fixed-size pool of worker threads (implemented on Eigen's non-blocking work-stealing pool).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace tensorflux {

class ThreadPool {
 public:
  // num_threads >= 1. `name` shows in debuggers.
  ThreadPool(std::string name, int num_threads);
  ~ThreadPool();  // waits for scheduled work to finish
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Schedule(std::function<void()> fn);
  int NumThreads() const;
  // Index of the calling thread in this pool in [0, NumThreads()), or -1 if it is not one of them.
  int CurrentThreadId() const;

  // Runs fn(begin, end) over shards of [0, total), in parallel on this pool plus the calling
  // thread, and returns when all are done. `cost_per_unit` is an estimate of nanoseconds (or
  // cycles) per element; small totals run inline on the caller. When the calling thread leads
  // an OpenMP team (core/openmp_team.h: it has run a oneDNN GEMM), the shards run on that team
  // instead, NumThreads() threads of it (or the ScopedMaxParallelism cap) with the caller.
  void ParallelFor(int64_t total, int64_t cost_per_unit,
                   const std::function<void(int64_t, int64_t)>& fn);

  // Number of hardware threads, at least 1.
  static int DefaultNumThreads();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tensorflux
