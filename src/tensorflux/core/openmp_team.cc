#include "tensorflux/core/openmp_team.h"

#ifdef TX_HAVE_OPENMP
#include <omp.h>
#endif

namespace tensorflux {
namespace {
thread_local bool tls_has_team = false;
}  // namespace

#ifdef TX_HAVE_OPENMP
void NoteOpenMpTeam() { tls_has_team = true; }

bool HasOpenMpTeam() { return tls_has_team && !omp_in_parallel(); }

void RunOnOpenMpTeam(int threads, void (*fn)(void*), void* arg) {
#pragma omp parallel num_threads(threads)
  fn(arg);
}
#else
void NoteOpenMpTeam() {}

bool HasOpenMpTeam() { return false; }

void RunOnOpenMpTeam(int, void (*fn)(void*), void* arg) { fn(arg); }
#endif

}  // namespace tensorflux
