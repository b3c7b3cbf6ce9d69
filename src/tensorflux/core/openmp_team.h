// Whether the calling thread leads an OpenMP team.
//
// oneDNN (as Debian builds it) parallelizes each call over an OpenMP team led by the calling
// thread; libgomp keeps that team's worker threads for the thread's later parallel regions,
// spinning briefly (GOMP_SPINCOUNT) and then sleeping on a futex between them. A thread that has
// called oneDNN notes it here (NoteOpenMpTeam), and ThreadPool::ParallelFor on such a thread
// runs its shards on that same team instead of waking the pool's threads: the step's GEMMs and
// its elementwise kernels then share one set of threads, so no second set sleeps and wakes in
// between (docs/PERFORMANCE.md, 2026-12-01 21:30-23:30 UTC).
#pragma once

namespace tensorflux {

// Notes that the calling thread now leads an OpenMP team. No-op when built without OpenMP.
void NoteOpenMpTeam();

// True when NoteOpenMpTeam ran on this thread, it is not inside an OpenMP parallel region, and
// the build has OpenMP.
bool HasOpenMpTeam();

// Runs fn() on `threads` threads of the calling thread's OpenMP team (the caller included) and
// returns when all have returned. Only call when HasOpenMpTeam(); fn must not throw.
void RunOnOpenMpTeam(int threads, void (*fn)(void*), void* arg);

}  // namespace tensorflux
