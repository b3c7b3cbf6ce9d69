#include "tensorflux/core/openmp_team.h"

#include <strings.h>

#include <atomic>
#include <cstdlib>

#include "tensorflux/core/threadpool.h"

#ifdef TX_HAVE_OPENMP
#include <omp.h>
#endif

namespace tensorflux {
namespace {
thread_local bool tls_has_team = false;

bool WaitPolicyIsActive() {
  const char* p = std::getenv("OMP_WAIT_POLICY");
  return p != nullptr && strcasecmp(p, "active") == 0;
}

// Read while the library loads, with the environment libgomp reads (framework/_pywrap.py sets
// the variable only while the extension loads).
std::atomic<bool> g_enabled{WaitPolicyIsActive()};
}  // namespace

void EnableOpenMpTeamParallelFor(bool enabled) {
  g_enabled.store(enabled, std::memory_order_relaxed);
}

#ifdef TX_HAVE_OPENMP
void NoteOpenMpTeam() { tls_has_team = true; }

bool HasOpenMpTeam() {
  return tls_has_team && g_enabled.load(std::memory_order_relaxed) && !omp_in_parallel();
}

void RunOnOpenMpTeam(int threads, void (*fn)(void*), void* arg) {
#pragma omp parallel num_threads(threads)
  fn(arg);
}

ScopedOpenMpThreads::ScopedOpenMpThreads(const ThreadPool* intra_op_pool) {
  const int threads = intra_op_pool != nullptr ? intra_op_pool->NumThreads() : 1;
  const int current = omp_get_max_threads();
  if (current == threads) return;
  saved_ = current;
  omp_set_num_threads(threads);
}

ScopedOpenMpThreads::~ScopedOpenMpThreads() {
  if (saved_ > 0) omp_set_num_threads(saved_);
}
#else
ScopedOpenMpThreads::ScopedOpenMpThreads(const ThreadPool*) {}
ScopedOpenMpThreads::~ScopedOpenMpThreads() {}

void NoteOpenMpTeam() {}

bool HasOpenMpTeam() { return false; }

void RunOnOpenMpTeam(int, void (*fn)(void*), void* arg) { fn(arg); }
#endif

}  // namespace tensorflux
