// Master: the MasterService's calls (proto/tensorflux/master.proto), TF's Master. It keeps the
// live MasterSessions by handle (distributed/master_session.h says what a session does).
//
// - CreateSession: a new session over every task of the cluster, with the request's config
//   merged over the server's default_session_config; its graph is the request's graph_def
//   (may be empty). Errors: UNAVAILABLE naming a task that does not answer; the graph's errors.
// - ExtendSession / RunStep / CloseSession: NOT_FOUND for an unknown (or closed) handle:
//   "Session <handle> is not found" (TF's wording, so clients can tell a restarted master).
//   RunStep with store_errors_in_response_body answers OK with the error in the response.
//   RunStepAsync is RunStep for a gRPC callback thread: it does not block once the step's
//   signature is compiled.
// - ListDevices: the devices of this task (local_device) and of the others (remote_device);
//   with a session handle, that session's view (NOT_FOUND for an unknown handle).
// - Reset: closes every session and empties the resource containers (variables, iterators) of
//   every task matching device_filters (all tasks when none), by CleanupAll.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "tensorflux/distributed/master_session.h"
#include "tensorflux/master.pb.h"

namespace tensorflux {

class Master {
 public:
  explicit Master(MasterEnv env);
  ~Master();

  Status CreateSession(const CreateSessionRequest& request, CreateSessionResponse* response);
  Status ExtendSession(const ExtendSessionRequest& request, ExtendSessionResponse* response);
  // RunStep with the tensors in memory (MasterSession::Run): request.feed is not read (the
  // feeds are `feeds`), response.tensor is not written (the fetches go to `fetched`).
  Status RunStep(const RunStepRequest& request, const NamedTensors& feeds,
                 RunStepResponse* response, NamedTensors* fetched);
  // RunStep without waiting (MasterSession::RunAsync): a step of a compiled signature starts on
  // this thread and `done` runs where it finishes (on this thread for an empty step); compiling
  // a new signature runs on a thread of its own (SchedClosure). `opts` (may be null) cancels the
  // step. request, feeds, response and fetched must stay alive until `done`.
  void RunStepAsync(CallOptions* opts, const RunStepRequest& request, const NamedTensors& feeds,
                    RunStepResponse* response, NamedTensors* fetched, StatusCallback done);
  Status CloseSession(const CloseSessionRequest& request, CloseSessionResponse* response);
  Status ListDevices(const ListDevicesRequest& request, ListDevicesResponse* response);
  Status Reset(const ResetRequest& request, ResetResponse* response);

  // Closes every session (server shutdown).
  void CloseAll();
  int NumSessions() const;

  // Runs `fn` on a new thread, for the calls that may block (CreateSession waits for every task,
  // CloseSession for the worker sessions' deletion, ...), as TF's master does with SchedClosure.
  // The destructor waits for those still running.
  void SchedClosure(std::function<void()> fn);

 private:
  StatusOr<std::shared_ptr<MasterSession>> Find(const std::string& handle) const;

  const MasterEnv env_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<MasterSession>> sessions_;

  std::mutex closures_mu_;
  std::condition_variable closures_cv_;
  int closures_running_ = 0;
};

}  // namespace tensorflux
