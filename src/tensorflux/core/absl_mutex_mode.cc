// Turns off abseil's mutex deadlock detection for every process that loads the library.
//
// Debian builds abseil without NDEBUG, so its absl::Mutex runs in debug mode: every Lock records
// the lock in a process-wide graph under a global spinlock (and takes a stack trace for each new
// lock order), and every Mutex destructor removes it again; a lock-order inversion aborts the
// process. gRPC's core locks (grpc_core::Mutex is an absl::Mutex) and the CPU allocator's lock
// paid this on every call: a nested lock/unlock pair took about 100 ns instead of 27
// (2026-11-30, 2 cores under load), and the graph calls showed as 2% of an empty RunStep's
// profile. Release builds of abseil ship with detection off; this makes Debian's do the same.
// TX_ABSL_DEADLOCK_DETECTION=1 keeps it on, for hunting a lock-order bug.
#include <cstdlib>
#include <cstring>

#include "absl/synchronization/mutex.h"

namespace tensorflux {
namespace {

[[maybe_unused]] const bool kDeadlockDetectionOff = [] {
  const char* keep = std::getenv("TX_ABSL_DEADLOCK_DETECTION");
  if (keep != nullptr && std::strcmp(keep, "1") == 0) return false;
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return true;
}();

}  // namespace
}  // namespace tensorflux
