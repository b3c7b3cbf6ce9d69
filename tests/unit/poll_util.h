// Waiting in tests for a condition that another thread (or process) makes true, instead of
// sleeping a fixed time and hoping it has happened: on a loaded machine (CI runs the test shards
// in parallel on 2 cores) a thread can be off the CPU for hundreds of milliseconds.
//   ASSERT_TRUE(test::PollUntil([&] { return Size(s) == 2; }));
// The deadline only bounds a test that is failing; a passing one waits as long as it must.
#pragma once

#include <chrono>
#include <thread>

namespace tensorflux::test {

// Calls `done` every `every` until it returns true (true) or `limit` has passed (false).
template <class Pred>
bool PollUntil(Pred done, std::chrono::milliseconds limit = std::chrono::seconds(60),
               std::chrono::microseconds every = std::chrono::microseconds(500)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(every);
  }
  return true;
}

// Wall-clock seconds from `t` until now (steady clock): bounds on how long a wait took.
inline double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace tensorflux::test
