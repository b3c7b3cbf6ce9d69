#include "tensorflux/framework/cancellation.h"

#include <utility>
#include <vector>

namespace tensorflux {

void CancellationManager::StartCancel() {
  absl::flat_hash_map<Token, Callback> to_run;
  {
    absl::MutexLock l(&mu_);
    if (cancelled_.load(std::memory_order_relaxed)) return;
    cancelled_.store(true, std::memory_order_release);
    to_run.swap(callbacks_);
  }
  // Outside the lock, so a callback may call IsCancelled/RegisterCallback (which then fails).
  for (auto& [token, cb] : to_run) {
    if (cb) cb();
  }
  absl::MutexLock l(&mu_);
  callbacks_done_ = true;
}

bool CancellationManager::RegisterCallback(Token token, Callback cb) {
  absl::MutexLock l(&mu_);
  if (cancelled_.load(std::memory_order_relaxed)) return false;
  callbacks_[token] = std::move(cb);
  return true;
}

bool CancellationManager::DeregisterCallback(Token token) {
  absl::MutexLock l(&mu_);
  if (cancelled_.load(std::memory_order_relaxed)) {
    // The callback ran or is running: wait until StartCancel has run them all, so the caller may
    // free what the callback uses. (A callback must therefore not deregister itself.)
    mu_.Await(absl::Condition(&callbacks_done_));
    return false;
  }
  return callbacks_.erase(token) > 0;
}

}  // namespace tensorflux
