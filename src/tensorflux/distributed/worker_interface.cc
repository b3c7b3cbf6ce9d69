#include "tensorflux/distributed/worker_interface.h"

#include "absl/synchronization/notification.h"

namespace tensorflux {

void CallOptions::SetTimeout(int64_t ms) {
  std::lock_guard<std::mutex> l(mu_);
  timeout_ms_ = ms;
}

int64_t CallOptions::GetTimeout() const {
  std::lock_guard<std::mutex> l(mu_);
  return timeout_ms_;
}

void CallOptions::StartCancel() {
  std::function<void()> cancel;
  {
    std::lock_guard<std::mutex> l(mu_);
    cancelled_ = true;
    cancel = cancel_;
  }
  if (cancel) cancel();
}

bool CallOptions::IsCancelled() const {
  std::lock_guard<std::mutex> l(mu_);
  return cancelled_;
}

void CallOptions::SetCancelCallback(std::function<void()> cancel) {
  {
    std::lock_guard<std::mutex> l(mu_);
    cancel_ = std::move(cancel);
    if (!cancelled_ || !cancel_) return;
  }
  StartCancel();  // cancelled before the call started
}

void CallOptions::ClearCancelCallback() {
  std::lock_guard<std::mutex> l(mu_);
  cancel_ = nullptr;
}

namespace {

// Runs one asynchronous call and waits for its `done`.
template <typename Req, typename Resp>
Status CallAndWait(WorkerInterface* w,
                   void (WorkerInterface::*method)(CallOptions*, const Req*, Resp*,
                                                   StatusCallback),
                   const Req& request, Resp* response, int64_t timeout_ms) {
  CallOptions opts;
  opts.SetTimeout(timeout_ms);
  absl::Notification finished;
  Status result;
  (w->*method)(&opts, &request, response, [&](const Status& s) {
    result = s;
    finished.Notify();
  });
  finished.WaitForNotification();
  return result;
}

}  // namespace

Status WorkerInterface::GetStatus(const GetStatusRequest& request, GetStatusResponse* response,
                                  int64_t timeout_ms) {
  return CallAndWait(this, &WorkerInterface::GetStatusAsync, request, response, timeout_ms);
}

Status WorkerInterface::CreateWorkerSession(const CreateWorkerSessionRequest& request,
                                            CreateWorkerSessionResponse* response,
                                            int64_t timeout_ms) {
  return CallAndWait(this, &WorkerInterface::CreateWorkerSessionAsync, request, response,
                     timeout_ms);
}

Status WorkerInterface::DeleteWorkerSession(const DeleteWorkerSessionRequest& request,
                                            DeleteWorkerSessionResponse* response,
                                            int64_t timeout_ms) {
  return CallAndWait(this, &WorkerInterface::DeleteWorkerSessionAsync, request, response,
                     timeout_ms);
}

Status WorkerInterface::RegisterGraph(const RegisterGraphRequest& request,
                                      RegisterGraphResponse* response, int64_t timeout_ms) {
  return CallAndWait(this, &WorkerInterface::RegisterGraphAsync, request, response, timeout_ms);
}

Status WorkerInterface::DeregisterGraph(const DeregisterGraphRequest& request,
                                        DeregisterGraphResponse* response, int64_t timeout_ms) {
  return CallAndWait(this, &WorkerInterface::DeregisterGraphAsync, request, response,
                     timeout_ms);
}

Status WorkerInterface::RunGraph(const RunGraphRequest& request, RunGraphResponse* response,
                                 int64_t timeout_ms) {
  return CallAndWait(this, &WorkerInterface::RunGraphAsync, request, response, timeout_ms);
}

Status WorkerInterface::CleanupGraph(const CleanupGraphRequest& request,
                                     CleanupGraphResponse* response, int64_t timeout_ms) {
  return CallAndWait(this, &WorkerInterface::CleanupGraphAsync, request, response, timeout_ms);
}

Status WorkerInterface::CleanupAll(const CleanupAllRequest& request, CleanupAllResponse* response,
                                   int64_t timeout_ms) {
  return CallAndWait(this, &WorkerInterface::CleanupAllAsync, request, response, timeout_ms);
}

Status WorkerInterface::RecvTensor(const RecvTensorRequest& request, TensorResponse* response,
                                   int64_t timeout_ms) {
  return CallAndWait(this, &WorkerInterface::RecvTensorAsync, request, response, timeout_ms);
}

}  // namespace tensorflux
