// MasterSession: one client session on a master (TF's MasterSession), running its graph over
// every task of the cluster.
//
// Create lists the devices of every task (GetStatus on each worker, in parallel; a task that does
// not answer within the session's operation_timeout_in_ms, else 10 s, is UNAVAILABLE naming it:
// a task that refuses connections, still starting, is asked again until then) and creates a
// worker session on each (CreateWorkerSession, shared resources as TF's
// isolate_session_state = false).
//
// A run signature (feeds, fetches, targets: runtime/graph_execution_state.h) is compiled once:
// 1. the step graph is pruned, rewritten, optimized and placed over all the cluster's devices:
//    this task's first ("/job:worker/replica:0/task:0/device:CPU:0" for the master of worker 0),
//    so nodes without a request run on the master's own task, as TF's default device does;
// 2. it is partitioned per device (passes/graph_partition.h: _Send/_Recv on every cross-device
//    edge, cross-task ones included); each feed's _Arg becomes a _Recv and each fetch's _Retval
//    a _Send with client_terminated = true, on the device where the placer put them, under the
//    rendezvous key "<device>;<incarnation>;<device>;<tensor name>;0:0";
// 3. the partitions of one task are registered with its worker as one graph (RegisterGraph).
// A step (Run, RunAsync) picks a random step id, calls RunGraph on every task of the signature
// at once (feeds sent to the task that receives them, fetches received from the task that sends
// them) and finishes when all have answered, with no thread of its own: the master's own task's
// RunGraph is a call into its Worker (an empty step finishes on the caller's thread), the others'
// answers arrive on gRPC's threads. Then CleanupGraph(step_id) on each of those tasks drops the
// step's state (after a step that succeeded, sent without waiting; Close waits for those still
// out). The first failure cancels the other calls (their steps' rendezvous are aborted) and is
// returned with its code and the failing task named: a task killed mid-step gives UNAVAILABLE
// "... /job:worker/replica:0/task:1 ...". A failed step returns only once every CleanupGraph has
// answered (each within 1 s): a cancelled call, or one that ended at the master's deadline, may
// still run on its task (a task's deadline starts when the call arrives; a stopped task runs its
// queued calls when it resumes), and until its tasks have dropped the step a late sender could
// complete it there (a ps applying the failed step's gradient after the client heard of the
// failure). Every call has a deadline: RunOptions.timeout_in_ms,
// else ConfigProto.operation_timeout_in_ms, else 60 s bounds the whole step
// (DEADLINE_EXCEEDED when it runs out).
//
// RunOptions.trace_level other than NO_TRACE returns every task's step stats (one DeviceStepStats
// per device of the step, runtime/node_exec_stats.h) in RunStepResponse.metadata, and
// output_partition_graphs the graphs each task ran (with their _Send/_Recv nodes).
//
// Close cancels the steps in flight (as TF's MasterSession::Close does: they end with CANCELLED
// "... session <handle> was closed" instead of waiting out their timeout), deregisters every
// graph and deletes the worker sessions (a worker that is gone is skipped). Thread-safe: steps
// of one session may run concurrently.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tensorflux/config.pb.h"
#include "tensorflux/devices/device_mgr.h"
#include "tensorflux/distributed/worker_interface.h"
#include "tensorflux/master.pb.h"
#include "tensorflux/runtime/graph_execution_state.h"

namespace tensorflux {

// What a master knows of its place: its task, its local devices and the workers of its cluster.
struct MasterEnv {
  std::string local_task;                  // "/job:worker/replica:0/task:0"
  const DeviceMgr* local_devices = nullptr;  // this task's devices (constant folding runs here)
  WorkerCacheInterface* worker_cache = nullptr;
  ServerDef server_def;                    // passed to CreateWorkerSession
};

class MasterSession {
 public:
  // Lists the cluster's devices and creates the worker sessions (see above).
  static StatusOr<std::unique_ptr<MasterSession>> Create(const MasterEnv* env,
                                                         const std::string& handle,
                                                         const ConfigProto& config);
  ~MasterSession();

  const std::string& handle() const { return handle_; }
  int64_t graph_version() const { return graph_version_.load(); }

  // Create/Extend's errors from GraphExecutionState; FAILED_PRECONDITION when
  // current_graph_version is not the session's version.
  Status CreateGraph(const GraphDef& graph);
  Status Extend(const ExtendSessionRequest& request, ExtendSessionResponse* response);
  // A step: `request`'s feed field is not read (the feeds are `feeds`) and `response`'s tensor
  // field is not written (the fetched tensors go to `fetched`, in request.fetch order, named by
  // fetch); the response gets the step's metadata. Waits for RunAsync's `done`.
  Status Run(const RunStepRequest& request, const NamedTensors& feeds, RunStepResponse* response,
             NamedTensors* fetched);
  // Run without waiting: `done` gets the step's status once every task's RunGraph has answered
  // (a failed step's: once their CleanupGraph have answered too, see above), on this thread
  // before RunAsync returns when they all finish inline (a step of cheap nodes on the master's
  // own task), else on the thread that finished the last one. Once the step's
  // signature is compiled nothing here waits for another thread, so a gRPC callback thread may
  // call it; compiling a new signature (placement, partitioning, RegisterGraph on each task)
  // blocks and runs through `run_blocking` (null: on this thread). `opts` (may be null):
  // StartCancel cancels the step's RunGraph calls (the step ends with the first call's error).
  // The session and request, feeds, response, fetched must stay alive until `done` has run.
  using BlockingRunner = std::function<void(std::function<void()>)>;
  void RunAsync(CallOptions* opts, const RunStepRequest& request, const NamedTensors& feeds,
                RunStepResponse* response, NamedTensors* fetched,
                const BlockingRunner& run_blocking, StatusCallback done);
  bool closed() const;
  Status Close();

  // Every device of the cluster: this task's, then the others'.
  std::vector<DeviceAttributes> ListDevices() const;
  // Number of signatures compiled (registered graphs), for tests.
  int NumCompiledSignatures() const;

 private:
  struct TaskPart {
    std::string task;
    std::shared_ptr<WorkerInterface> worker;
    std::string graph_handle;
    std::vector<int> feeds;    // indices into RunSignature::feeds received on this task
    std::vector<int> fetches;  // indices into RunSignature::fetches sent from this task
  };
  struct Compiled {
    RunSignature sig;
    std::vector<std::string> feed_keys;   // per sig.feeds
    std::vector<std::string> fetch_keys;  // per sig.fetches
    std::vector<TaskPart> parts;
  };

  struct Step;  // one step in flight (master_session.cc)

  MasterSession(const MasterEnv* env, std::string handle, const ConfigProto& config);
  Status ListClusterDevices();
  StatusOr<std::shared_ptr<Compiled>> GetOrCompile(const std::shared_ptr<const Graph>& graph,
                                                   RunSignature sig);
  // RunGraph on every task of step->c at once; FinishStep when the last one answers.
  void StartStep(std::shared_ptr<Step> step);
  void FinishStep(Step* step);
  // A failed step's status, naming its task(s).
  Status StepError(const Step& step) const;
  // CleanupGraph(step_id) on every task of the step, each call with deadline `timeout_ms`;
  // `then` (may be null) runs once all have answered.
  void CleanupStepAsync(const Compiled& c, int64_t step_id, int64_t timeout_ms,
                        std::function<void()> then);
  void WaitForCleanups();
  int64_t StepTimeoutMs(const RunOptions& options) const;

  const MasterEnv* env_;
  const std::string handle_;
  const ConfigProto config_;
  GraphExecutionState state_;
  std::atomic<int64_t> graph_version_{0};

  // The cluster's devices (Placer's view: real local devices, stand-ins for remote ones).
  std::vector<std::unique_ptr<Device>> remote_devices_;
  std::vector<Device*> devices_;
  std::vector<DeviceAttributes> device_attributes_;
  absl::flat_hash_map<std::string, uint64_t> incarnations_;  // device -> incarnation
  std::map<std::string, std::shared_ptr<WorkerInterface>> workers_;  // task -> worker

  std::mutex cleanup_mu_;
  std::condition_variable cleanup_cv_;
  int pending_cleanups_ = 0;  // CleanupGraph calls not finished

  mutable std::mutex mu_;
  bool closed_ = false;
  absl::flat_hash_map<std::string, std::shared_ptr<Compiled>> compiled_;
  // The steps whose RunGraph calls are out (StartStep to FinishStep): Close cancels them.
  absl::flat_hash_map<Step*, std::weak_ptr<Step>> running_;
};

// A fresh session handle (random, unguessable by other clients).
std::string NewSessionHandle();

}  // namespace tensorflux
