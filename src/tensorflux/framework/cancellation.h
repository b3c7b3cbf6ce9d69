// Cooperative cancellation of a step: the executor checks IsCancelled(); blocking kernels
// (Recv, queue ops) register a callback that wakes them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace tensorflux {

class CancellationManager {
 public:
  using Token = int64_t;
  using Callback = std::function<void()>;

  // Runs every registered callback once; later calls do nothing.
  void StartCancel();
  bool IsCancelled() const { return cancelled_.load(std::memory_order_acquire); }
  Token NewToken() { return next_token_.fetch_add(1); }
  // False (callback not registered) when already cancelled: the caller must then act as cancelled.
  bool RegisterCallback(Token token, Callback cb);
  // False when the callback already ran or is running; then waits until StartCancel has run all
  // callbacks (so a callback must not deregister itself).
  bool DeregisterCallback(Token token);

 private:
  std::atomic<bool> cancelled_{false};
  std::atomic<Token> next_token_{0};
  absl::Mutex mu_;
  absl::flat_hash_map<Token, Callback> callbacks_;
  bool callbacks_done_ = false;  // StartCancel has finished running the callbacks
};

}  // namespace tensorflux
