// Whether the calling thread leads an OpenMP team, and whether ParallelFor may use it.
//
// oneDNN (as Debian builds it) parallelizes each call over an OpenMP team led by the calling
// thread; libgomp keeps that team's worker threads for the thread's later parallel regions,
// spinning (GOMP_SPINCOUNT) and then sleeping on a futex between them. A thread that has called
// oneDNN notes it here (NoteOpenMpTeam), and ThreadPool::ParallelFor on such a thread runs its
// shards on that same team instead of waking the pool's threads, so the step's GEMMs and its
// elementwise kernels share one set of threads and no second set sleeps and wakes in between
// (docs/PERFORMANCE.md, 2026-12-01 21:30-23:30 UTC). That is done only when libgomp's threads
// spin between regions (OMP_WAIT_POLICY=ACTIVE when the library loaded, which the Python package
// sets with a bounded GOMP_SPINCOUNT): a parallel region ends only when every team thread has
// arrived, so with sleeping team threads on a machine with more runnable threads than cores (a
// ps and two workers on 2 cores) the caller waited for a thread that had no core, where the
// pool's ParallelFor runs the shards itself (the distributed demo's CNN 2.6-7% slower in 4 of 4
// alternated runs before this condition).
#pragma once

namespace tensorflux {

class ThreadPool;

// Notes that the calling thread now leads an OpenMP team. No-op when built without OpenMP.
void NoteOpenMpTeam();

// True when team ParallelFor is enabled, NoteOpenMpTeam ran on this thread, it is not inside an
// OpenMP parallel region, and the build has OpenMP.
bool HasOpenMpTeam();

// Enables or disables ParallelFor on the caller's team for the process. The default is set
// when the library loads: enabled when OMP_WAIT_POLICY is ACTIVE (any case) in the environment
// then, as libgomp reads it at the same time.
void EnableOpenMpTeamParallelFor(bool enabled);

// Runs fn() on `threads` threads of the calling thread's OpenMP team (the caller included) and
// returns when all have returned. Only call when HasOpenMpTeam(); fn must not throw.
void RunOnOpenMpTeam(int threads, void (*fn)(void*), void* arg);

// For its lifetime, the calling thread's OpenMP parallel regions (oneDNN's calls) use
// intra_op_pool->NumThreads() threads, 1 when the pool is null (a device without an intra-op
// pool: intra_op_parallelism_threads 1); the thread's own setting is restored after. The
// kernels that call oneDNN hold one with their OpKernelContext's intra-op pool, so that oneDNN
// follows ConfigProto.intra_op_parallelism_threads, and a step computes with the same team size,
// and so the same bits, on every thread: a thread's setting is otherwise whatever was last set
// on it (importing PyTorch sets the importing thread's to torch's default, 1 on 2 vCPUs, which
// made a session running on that thread compute its convolutions on one core).
class ScopedOpenMpThreads {
 public:
  explicit ScopedOpenMpThreads(const ThreadPool* intra_op_pool);
  ~ScopedOpenMpThreads();
  ScopedOpenMpThreads(const ScopedOpenMpThreads&) = delete;
  ScopedOpenMpThreads& operator=(const ScopedOpenMpThreads&) = delete;

 private:
  int saved_ = 0;  // 0: nothing to restore
};

}  // namespace tensorflux
