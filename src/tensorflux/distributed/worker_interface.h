// WorkerInterface: the WorkerService's calls as C++ (TF's WorkerInterface), implemented by the
// in-process Worker (distributed/worker.h) and by GrpcRemoteWorker (a client of a remote task's
// WorkerService), so a master calls its own task's worker directly and the others over gRPC.
//
// Every call is asynchronous: it returns at once and calls `done` exactly once, on any thread,
// with the call's status; request and response must stay alive until then. The messages are
// proto/tensorflux/worker.proto's. CallOptions carries a per-call deadline and a way to cancel
// the call in flight (StartCancel: the call ends with CANCELLED, or with its own status if it
// finished first). The blocking wrappers (GetStatus(), RunGraph(), ...) wait for `done`.
//
// RecvTensor's response is a TensorResponse: the tensor itself, not a TensorProto (in process
// it shares the sender's buffer; over gRPC it is parsed from the wire into one allocation).
//
// WorkerCacheInterface: task name -> worker, for the master (one per task it uses) and for the
// remote rendezvous (the worker holding the producer of a tensor).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/worker.pb.h"

namespace tensorflux {

using StatusCallback = std::function<void(const Status&)>;

// Options of one call. Thread-safe.
class CallOptions {
 public:
  CallOptions() = default;
  CallOptions(const CallOptions&) = delete;
  CallOptions& operator=(const CallOptions&) = delete;

  // Milliseconds the call may take; 0 (default): the implementation's default deadline
  // (GrpcRemoteWorker: 60 s, Worker: none for RPC-free calls).
  void SetTimeout(int64_t ms);
  int64_t GetTimeout() const;

  // Cancels the call in flight (or the next one started with these options, which then fails
  // at once with CANCELLED).
  void StartCancel();
  bool IsCancelled() const;
  // Set by the implementation while the call runs; StartCancel calls it (outside this object's
  // lock, so it may finish the call). It may still run just after ClearCancelCallback returns,
  // so it must hold (shared) ownership of whatever it touches.
  void SetCancelCallback(std::function<void()> cancel);
  void ClearCancelCallback();

 private:
  mutable std::mutex mu_;
  int64_t timeout_ms_ = 0;
  bool cancelled_ = false;
  std::function<void()> cancel_;
};

// Tensors by name, in a message's order (RunGraph's sends and receives).
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// RecvTensor's answer.
struct TensorResponse {
  Tensor tensor;
  bool is_dead = false;
  int64_t send_start_micros = 0;
};

class WorkerInterface {
 public:
  virtual ~WorkerInterface() = default;

  virtual void GetStatusAsync(CallOptions* opts, const GetStatusRequest* request,
                              GetStatusResponse* response, StatusCallback done) = 0;
  virtual void CreateWorkerSessionAsync(CallOptions* opts,
                                        const CreateWorkerSessionRequest* request,
                                        CreateWorkerSessionResponse* response,
                                        StatusCallback done) = 0;
  virtual void DeleteWorkerSessionAsync(CallOptions* opts,
                                        const DeleteWorkerSessionRequest* request,
                                        DeleteWorkerSessionResponse* response,
                                        StatusCallback done) = 0;
  virtual void RegisterGraphAsync(CallOptions* opts, const RegisterGraphRequest* request,
                                  RegisterGraphResponse* response, StatusCallback done) = 0;
  virtual void DeregisterGraphAsync(CallOptions* opts, const DeregisterGraphRequest* request,
                                    DeregisterGraphResponse* response, StatusCallback done) = 0;
  virtual void RunGraphAsync(CallOptions* opts, const RunGraphRequest* request,
                             RunGraphResponse* response, StatusCallback done) = 0;
  // RunGraph with its tensors in memory: `sends` stand for the request's send field (which
  // must be empty), and the tensors of request.recv_key come back in `recvs` (in recv_key
  // order, named by key) instead of the response's recv field. The in-process Worker moves the
  // tensors without encoding them; GrpcRemoteWorker writes them on the wire from their buffers
  // and decodes the received ones into one allocation each (distributed/tensor_coding.h).
  virtual void RunGraphWithTensorsAsync(CallOptions* opts, const RunGraphRequest* request,
                                        const NamedTensors* sends, RunGraphResponse* response,
                                        NamedTensors* recvs, StatusCallback done) = 0;
  virtual void CleanupGraphAsync(CallOptions* opts, const CleanupGraphRequest* request,
                                 CleanupGraphResponse* response, StatusCallback done) = 0;
  virtual void CleanupAllAsync(CallOptions* opts, const CleanupAllRequest* request,
                               CleanupAllResponse* response, StatusCallback done) = 0;
  virtual void RecvTensorAsync(CallOptions* opts, const RecvTensorRequest* request,
                               TensorResponse* response, StatusCallback done) = 0;

  // Blocking forms; `timeout_ms` as CallOptions::SetTimeout.
  Status GetStatus(const GetStatusRequest& request, GetStatusResponse* response,
                   int64_t timeout_ms = 0);
  Status CreateWorkerSession(const CreateWorkerSessionRequest& request,
                             CreateWorkerSessionResponse* response, int64_t timeout_ms = 0);
  Status DeleteWorkerSession(const DeleteWorkerSessionRequest& request,
                             DeleteWorkerSessionResponse* response, int64_t timeout_ms = 0);
  Status RegisterGraph(const RegisterGraphRequest& request, RegisterGraphResponse* response,
                       int64_t timeout_ms = 0);
  Status DeregisterGraph(const DeregisterGraphRequest& request,
                         DeregisterGraphResponse* response, int64_t timeout_ms = 0);
  Status RunGraph(const RunGraphRequest& request, RunGraphResponse* response,
                  int64_t timeout_ms = 0);
  Status CleanupGraph(const CleanupGraphRequest& request, CleanupGraphResponse* response,
                      int64_t timeout_ms = 0);
  Status CleanupAll(const CleanupAllRequest& request, CleanupAllResponse* response,
                    int64_t timeout_ms = 0);
  Status RecvTensor(const RecvTensorRequest& request, TensorResponse* response,
                    int64_t timeout_ms = 0);
};

class WorkerCacheInterface {
 public:
  virtual ~WorkerCacheInterface() = default;
  // Every task of the cluster ("/job:ps/replica:0/task:0", ...).
  virtual std::vector<std::string> ListWorkers() const = 0;
  // The worker of the task that `task_or_device` names (a task or device name). INVALID_ARGUMENT
  // for a malformed name, NOT_FOUND for a task outside the cluster. The worker stays valid for
  // as long as the returned pointer is held.
  virtual StatusOr<std::shared_ptr<WorkerInterface>> GetOrCreateWorker(
      const std::string& task_or_device) = 0;
};

}  // namespace tensorflux
