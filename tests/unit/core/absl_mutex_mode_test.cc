// The library turns off abseil's deadlock detection (core/absl_mutex_mode.cc): with Debian's
// debug-mode abseil, a lock-order inversion would otherwise abort the process.
#include <cstdlib>

#include <gtest/gtest.h>

#include "absl/synchronization/mutex.h"
#include "tensorflux/core/allocator.h"

namespace tensorflux {
namespace {

// Takes two mutexes in one order, then in the other, and exits 0.
void LockBothOrders() {
  absl::Mutex a;
  absl::Mutex b;
  a.Lock();
  b.Lock();
  b.Unlock();
  a.Unlock();
  b.Lock();  // the reverse order: detection would report a cycle here and abort
  a.Lock();
  a.Unlock();
  b.Unlock();
  std::exit(0);
}

TEST(AbslMutexModeTest, LockOrderInversionDoesNotAbort) {
  cpu_allocator();  // the library is loaded and initialized
  EXPECT_EXIT(LockBothOrders(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace tensorflux
