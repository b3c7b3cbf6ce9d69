// The rendezvous of one step on a worker (TF's BaseRemoteRendezvous / RpcRemoteRendezvous), and
// the worker's table of them (TF's RendezvousMgr).
//
// RemoteRendezvous wraps a LocalRendezvous (runtime/rendezvous.h):
// - Send is always local: the sending _Send runs on this worker; the tensor waits in the table
//   until a local _Recv or a RecvTensor call from another worker takes it.
// - RecvAsync of a key whose send device is on this task, or that RunGraph fed (SendFed), is
//   local. Any other key is pulled from the task of its send device: a RecvTensor call through
//   the worker cache with the step's deadline. The call is asynchronous: the executor keeps
//   running ready nodes while the tensor is in flight, and the received tensor (host memory)
//   is handed to the receiver through the in-process transfer rule.
// - StartAbort fails local waiters and cancels every RecvTensor in flight; a failed RecvTensor
//   is returned to the _Recv, whose executor then aborts the step.
// Errors of remote receives name the remote task (GrpcRemoteWorker's messages do).
//
// RendezvousMgr: step_id -> RemoteRendezvous, made on first use by RunGraph or by a RecvTensor
// that arrives before its step runs here; CleanupGraph(step_id) drops it (aborting waiters with
// ABORTED). A step id that was cleaned up is remembered (the last 4096), so a late RecvTensor or
// RunGraph for it fails with ABORTED instead of waiting for a step that is over. A step that no
// RunGraph is running and that nothing has used for step_ttl_ms (its master died before
// CleanupGraph) is dropped the same way by the next FindOrCreate (TF's TTL-based cleanup), so
// the tensors it holds do not leak.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "tensorflux/distributed/worker_interface.h"
#include "tensorflux/runtime/rendezvous.h"

namespace tensorflux {

class RemoteRendezvous : public Rendezvous,
                         public std::enable_shared_from_this<RemoteRendezvous> {
 public:
  // `task_name`: this worker's task ("/job:worker/replica:0/task:0"). Must be owned by a
  // shared_ptr (RecvTensor calls in flight hold a reference).
  RemoteRendezvous(std::string task_name, int64_t step_id);
  ~RemoteRendezvous() override;

  // Set by RunGraph before its executors start: how to reach other tasks (not owned; must
  // outlive the step) and the deadline of each RecvTensor call in ms (> 0).
  void Initialize(WorkerCacheInterface* cache, int64_t recv_timeout_ms);

  // A tensor fed by RunGraphRequest.send: its receivers take it here whatever its send device.
  Status SendFed(const ParsedKey& key, const Tensor& tensor);

  Status Send(const ParsedKey& key, const Args& args, const Tensor& tensor,
              bool is_dead) override;
  void RecvAsync(const ParsedKey& key, const Args& args, DoneCallback done) override;
  void StartAbort(const Status& status) override;

  // The local table only: what a RecvTensor call from another worker takes.
  void RecvLocalAsync(const ParsedKey& key, const Args& args, DoneCallback done);

  // The first abort status; OK while not aborted.
  Status abort_status() const { return local_.abort_status(); }
  int64_t step_id() const { return step_id_; }

  // RunGraph brackets its step with these; a running step is never dropped for idleness.
  void StepStarted();
  void StepFinished();
  bool running() const { return running_.load(std::memory_order_acquire) > 0; }
  // Monotonic milliseconds of the last FindOrCreate or StepFinished.
  void Touch();
  int64_t last_used_ms() const { return last_used_ms_.load(std::memory_order_acquire); }

 private:
  bool IsLocal(const ParsedKey& key) const;
  void RecvFromRemote(const ParsedKey& key, const Args& args, DoneCallback done);

  const std::string task_name_;
  const int64_t step_id_;
  LocalRendezvous local_;
  std::atomic<int> running_{0};
  std::atomic<int64_t> last_used_ms_{0};

  mutable std::mutex mu_;
  WorkerCacheInterface* cache_ = nullptr;
  int64_t recv_timeout_ms_ = 60000;
  absl::flat_hash_set<std::string> fed_keys_;
  // RecvTensor calls in flight, cancelled by StartAbort.
  int64_t next_call_ = 0;
  absl::flat_hash_map<int64_t, std::shared_ptr<CallOptions>> calls_;
  Status aborted_;
};

class RendezvousMgr {
 public:
  // step_ttl_ms > 0.
  explicit RendezvousMgr(std::string task_name, int64_t step_ttl_ms = 600000)
      : task_name_(std::move(task_name)), step_ttl_ms_(step_ttl_ms) {}
  ~RendezvousMgr();

  // The step's rendezvous, made when missing. ABORTED when the step was cleaned up.
  StatusOr<std::shared_ptr<RemoteRendezvous>> FindOrCreate(int64_t step_id);
  // Drops the step's rendezvous: its pending receivers get ABORTED.
  void Cleanup(int64_t step_id);
  // Drops every step's, with `reason`.
  void CleanupAll(const Status& reason);
  // CleanupAll(reason), and every later FindOrCreate fails with `reason` (a server going away).
  void Shutdown(const Status& reason);
  // Steps with a live rendezvous; for tests.
  int num_steps() const;

 private:
  static constexpr size_t kRememberCleaned = 4096;
  // Drops idle steps (see above); mu_ held. Returns them, to be aborted outside the lock.
  std::vector<std::shared_ptr<RemoteRendezvous>> SweepLocked(int64_t now_ms);
  void RememberCleanedLocked(int64_t step_id);

  const std::string task_name_;
  const int64_t step_ttl_ms_;
  int64_t last_sweep_ms_ = 0;
  mutable std::mutex mu_;
  Status shutdown_;  // not OK once Shutdown was called
  absl::flat_hash_map<int64_t, std::shared_ptr<RemoteRendezvous>> steps_;
  absl::flat_hash_set<int64_t> cleaned_;
  std::deque<int64_t> cleaned_order_;
};

}  // namespace tensorflux
