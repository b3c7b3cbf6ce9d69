#include "tensorflux/distributed/remote_rendezvous.h"

#include <chrono>
#include <utility>
#include <vector>

namespace tensorflux {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

RemoteRendezvous::RemoteRendezvous(std::string task_name, int64_t step_id)
    : task_name_(std::move(task_name)), step_id_(step_id) {
  Touch();
}

void RemoteRendezvous::Touch() { last_used_ms_.store(NowMs(), std::memory_order_release); }

void RemoteRendezvous::StepStarted() {
  running_.fetch_add(1, std::memory_order_acq_rel);
  Touch();
}

void RemoteRendezvous::StepFinished() {
  Touch();
  running_.fetch_sub(1, std::memory_order_acq_rel);
}

RemoteRendezvous::~RemoteRendezvous() {
  StartAbort(errors::Aborted("Step ", step_id_, "'s rendezvous was deleted"));
}

void RemoteRendezvous::Initialize(WorkerCacheInterface* cache, int64_t recv_timeout_ms) {
  std::lock_guard<std::mutex> l(mu_);
  cache_ = cache;
  recv_timeout_ms_ = recv_timeout_ms;
}

Status RemoteRendezvous::SendFed(const ParsedKey& key, const Tensor& tensor) {
  {
    std::lock_guard<std::mutex> l(mu_);
    fed_keys_.insert(key.full_key);
  }
  return local_.Send(key, Args(), tensor, /*is_dead=*/false);
}

Status RemoteRendezvous::Send(const ParsedKey& key, const Args& args, const Tensor& tensor,
                              bool is_dead) {
  return local_.Send(key, args, tensor, is_dead);
}

bool RemoteRendezvous::IsLocal(const ParsedKey& key) const {
  // Device names in keys are full names, so the task is a prefix followed by "/device:".
  const std::string& src = key.src_device;
  if (src.size() > task_name_.size() && src.compare(0, task_name_.size(), task_name_) == 0 &&
      src[task_name_.size()] == '/') {
    return true;
  }
  std::lock_guard<std::mutex> l(mu_);
  return fed_keys_.contains(key.full_key);
}

void RemoteRendezvous::RecvAsync(const ParsedKey& key, const Args& args, DoneCallback done) {
  if (IsLocal(key)) {
    local_.RecvAsync(key, args, std::move(done));
  } else {
    RecvFromRemote(key, args, std::move(done));
  }
}

void RemoteRendezvous::RecvLocalAsync(const ParsedKey& key, const Args& args, DoneCallback done) {
  local_.RecvAsync(key, args, std::move(done));
}

void RemoteRendezvous::RecvFromRemote(const ParsedKey& key, const Args& args, DoneCallback done) {
  auto fail = [&](const Status& s) { done(s, Args(), args, Tensor(), false); };
  WorkerCacheInterface* cache;
  int64_t timeout_ms;
  auto opts = std::make_shared<CallOptions>();
  int64_t call_id;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!aborted_.ok()) return fail(aborted_);
    cache = cache_;
    timeout_ms = recv_timeout_ms_;
    call_id = next_call_++;
    calls_.emplace(call_id, opts);
  }
  auto forget = [self = shared_from_this(), call_id] {
    std::lock_guard<std::mutex> l(self->mu_);
    self->calls_.erase(call_id);
  };
  if (cache == nullptr) {
    forget();
    return fail(errors::FailedPrecondition("Step ", step_id_, " on ", task_name_,
                                           " cannot receive ", key.full_key,
                                           " from another task: the worker has no worker cache"));
  }
  StatusOr<std::shared_ptr<WorkerInterface>> worker = cache->GetOrCreateWorker(key.src_device);
  if (!worker.ok()) {
    forget();
    return fail(worker.status());
  }
  opts->SetTimeout(timeout_ms);
  // The receiver's cancellation (its step was cancelled) cancels the call.
  CancellationManager* cm = args.cancellation_manager;
  CancellationManager::Token token = -1;
  if (cm != nullptr) {
    token = cm->NewToken();
    if (!cm->RegisterCallback(token, [opts] { opts->StartCancel(); })) opts->StartCancel();
  }
  struct Call {
    RecvTensorRequest request;
    TensorResponse response;
    std::shared_ptr<WorkerInterface> worker;  // keeps the client alive during the call
  };
  auto call = std::make_shared<Call>();
  call->request.set_step_id(step_id_);
  call->request.set_rendezvous_key(key.full_key);
  call->worker = *std::move(worker);
  call->worker->RecvTensorAsync(
      opts.get(), &call->request, &call->response,
      [call, opts, cm, token, args, forget, done = std::move(done)](const Status& s) {
        if (cm != nullptr && token >= 0 && !cm->IsCancelled()) cm->DeregisterCallback(token);
        forget();
        if (!s.ok()) {
          done(s, Args(), args, Tensor(), false);
          return;
        }
        Tensor out;
        // The tensor arrived in host memory; the receiver's device may need a copy.
        Status t = TransferInProcess(Args(), args, call->response.tensor, &out);
        done(t, Args(), args, t.ok() ? out : Tensor(), call->response.is_dead);
      });
}

void RemoteRendezvous::StartAbort(const Status& status) {
  Status s = status.ok() ? errors::Internal("Rendezvous aborted with an OK status") : status;
  std::vector<std::shared_ptr<CallOptions>> calls;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (aborted_.ok()) aborted_ = s;
    for (auto& [id, opts] : calls_) calls.push_back(opts);
  }
  local_.StartAbort(s);
  for (auto& opts : calls) opts->StartCancel();
}

RendezvousMgr::~RendezvousMgr() { CleanupAll(errors::Aborted("The worker is shutting down")); }

StatusOr<std::shared_ptr<RemoteRendezvous>> RendezvousMgr::FindOrCreate(int64_t step_id) {
  std::vector<std::shared_ptr<RemoteRendezvous>> idle;
  StatusOr<std::shared_ptr<RemoteRendezvous>> result;
  {
    std::lock_guard<std::mutex> l(mu_);
    const int64_t now = NowMs();
    if (now - last_sweep_ms_ >= std::min<int64_t>(1000, step_ttl_ms_ / 2 + 1)) {
      last_sweep_ms_ = now;
      idle = SweepLocked(now);
    }
    auto it = steps_.find(step_id);
    if (!shutdown_.ok()) {
      result = shutdown_;
    } else if (it != steps_.end()) {
      it->second->Touch();
      result = it->second;
    } else if (cleaned_.contains(step_id)) {
      result = errors::Aborted("Step ", step_id, " on ", task_name_,
                               " was already cleaned up (CleanupGraph, or idle for over ",
                               step_ttl_ms_, " ms)");
    } else {
      auto r = std::make_shared<RemoteRendezvous>(task_name_, step_id);
      steps_.emplace(step_id, r);
      result = r;
    }
  }
  for (auto& r : idle) {
    r->StartAbort(errors::Aborted("Step ", r->step_id(), " on ", task_name_, " was idle for over ",
                                  step_ttl_ms_, " ms without CleanupGraph and was dropped"));
  }
  return result;
}

std::vector<std::shared_ptr<RemoteRendezvous>> RendezvousMgr::SweepLocked(int64_t now_ms) {
  std::vector<std::shared_ptr<RemoteRendezvous>> idle;
  for (auto it = steps_.begin(); it != steps_.end();) {
    const std::shared_ptr<RemoteRendezvous>& r = it->second;
    if (!r->running() && now_ms - r->last_used_ms() > step_ttl_ms_) {
      RememberCleanedLocked(it->first);
      idle.push_back(r);
      steps_.erase(it++);
    } else {
      ++it;
    }
  }
  return idle;
}

void RendezvousMgr::RememberCleanedLocked(int64_t step_id) {
  if (cleaned_.insert(step_id).second) {
    cleaned_order_.push_back(step_id);
    if (cleaned_order_.size() > kRememberCleaned) {
      cleaned_.erase(cleaned_order_.front());
      cleaned_order_.pop_front();
    }
  }
}

void RendezvousMgr::Cleanup(int64_t step_id) {
  std::shared_ptr<RemoteRendezvous> r;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = steps_.find(step_id);
    if (it != steps_.end()) {
      r = std::move(it->second);
      steps_.erase(it);
    }
    RememberCleanedLocked(step_id);
  }
  if (r != nullptr) {
    r->StartAbort(errors::Aborted("Step ", step_id, " on ", task_name_, " was cleaned up"));
  }
}

void RendezvousMgr::CleanupAll(const Status& reason) {
  absl::flat_hash_map<int64_t, std::shared_ptr<RemoteRendezvous>> steps;
  {
    std::lock_guard<std::mutex> l(mu_);
    steps.swap(steps_);
  }
  for (auto& [id, r] : steps) r->StartAbort(reason);
}

void RendezvousMgr::Shutdown(const Status& reason) {
  {
    std::lock_guard<std::mutex> l(mu_);
    shutdown_ = reason;
  }
  CleanupAll(reason);
}

int RendezvousMgr::num_steps() const {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int>(steps_.size());
}

}  // namespace tensorflux
