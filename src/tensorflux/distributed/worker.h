// Worker: one task's WorkerService, in process (TF's Worker + WorkerEnv + SessionMgr). The gRPC
// service (distributed/grpc_worker_service.h) serves it to other processes; a master in the same
// process calls it directly through WorkerInterface.
//
// Devices: the task's own, from WorkerOptions.config.device_count through the device factories,
// named "/job:J/replica:0/task:T/device:CPU:i" (GPUs too when a GPU factory is registered).
// Variables and other resources live in those devices' ResourceMgrs: they persist across steps
// and sessions until CleanupAll empties their containers (TF's behaviour without
// isolate_session_state).
//
// Sessions: CreateWorkerSession(handle) makes a session (graphs are scoped to it);
// DeleteWorkerSession drops it with its graphs. Calls with create_worker_session_called = false
// use the worker's legacy session, handle "". A call naming a session this worker does not have
// is ABORTED ("Session handle is not found ... the worker may have restarted"), which tells the
// master to recreate its session. isolate_session_state = true is UNIMPLEMENTED.
//
// Steps: RunGraph(step_id, graph_handle) runs one registered graph's step with the step's
// RemoteRendezvous (distributed/remote_rendezvous.h): `send` tensors are fed into it first,
// `recv_key` tensors are taken from it after the step (INVALID_ARGUMENT for a key the step did
// not send). The first error aborts the step's rendezvous, releasing this worker's receivers
// and failing other workers' RecvTensor calls for the step; cancelling the call (or a RecvTensor
// deadline) does the same. RecvTensor calls to other tasks take the call's timeout
// (CallOptions, the RPC's deadline on a server), else WorkerOptions.recv_timeout_ms. The step's
// rendezvous lives until CleanupGraph(step_id), so other workers can still take what it sent
// (or until it has been idle for WorkerOptions.step_ttl_ms).
// step_stats (exec_opts.record_timeline) and partition graphs (record_partition_graphs) are
// returned when asked. is_partial is UNIMPLEMENTED; store_errors_in_response_body is ignored
// (errors are the call's status); request_id is not checked for retries.
//
// RecvTensor(step_id, key): the key's send device must be a device of this worker with the
// incarnation in the key (ABORTED otherwise: the worker restarted since the graph was
// registered); waits (asynchronously) until the step sends the key, the step is cleaned up or
// aborted, or the call is cancelled. The tensor shares the sender's buffer.
//
// CleanupAll(containers) empties those resource containers on every device (none: the default
// container). Malformed requests (bad keys, bad tensors) are INVALID_ARGUMENT.
//
// One task's server, put together (tests/unit/distributed/worker_test_util.h does this):
//   TuneMallocForLargeTransfers();                        // first thing in main (grpc_channel.h)
//   auto worker = Worker::Create({.job_name = "worker", .task_index = 1, ...}).value();
//   auto channels = std::shared_ptr<GrpcChannelCache>(GrpcChannelCache::Create(cluster, opts)...);
//   worker->set_worker_cache(std::make_shared<GrpcWorkerCache>(channels, worker->task_name(),
//                                                              worker.get()));
//   GrpcWorkerService service(worker.get(), {.auth_token = token});
//   grpc::ServerBuilder b;  b.RegisterService(service.service());  // + the master service
//   b.SetMaxReceiveMessageSize(-1);  b.SetMaxSendMessageSize(-1);
// Shut the server down before destroying the service and the worker.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "tensorflux/config.pb.h"
#include "tensorflux/core/threadpool.h"
#include "tensorflux/devices/device_mgr.h"
#include "tensorflux/distributed/graph_mgr.h"
#include "tensorflux/distributed/remote_rendezvous.h"
#include "tensorflux/distributed/worker_interface.h"
#include "tensorflux/runtime/function_runtime.h"

namespace tensorflux {

struct WorkerOptions {
  std::string job_name = "localhost";
  int task_index = 0;
  // device_count, inter_op_parallelism_threads (0: one per core), intra_op (kernels).
  ConfigProto config;
  // Deadline of a RecvTensor call to another task when the step's call has none.
  int64_t recv_timeout_ms = 60000;
  // A step's rendezvous that no RunGraph is running and nothing used for this long is dropped
  // (its master died before CleanupGraph; distributed/remote_rendezvous.h). > 0.
  int64_t step_ttl_ms = 600000;
};

class Worker : public WorkerInterface {
 public:
  // INVALID_ARGUMENT for a bad job name, task index or device_count.
  static StatusOr<std::unique_ptr<Worker>> Create(const WorkerOptions& options);
  ~Worker() override;

  // How this worker reaches the other tasks (RecvTensor). Set before the first step that
  // receives from another task; must outlive the worker's steps.
  void set_worker_cache(std::shared_ptr<WorkerCacheInterface> cache);

  // "/job:J/replica:0/task:T".
  const std::string& task_name() const { return task_name_; }
  const DeviceMgr* device_mgr() const { return device_mgr_.get(); }
  // Aborts every step this worker holds with `reason` (their receivers and the RecvTensor calls
  // waiting on them, other tasks' and this task's, fail with it), and fails every later
  // RunGraph and RecvTensor with it. A server that shuts down calls it with UNAVAILABLE first,
  // so that the other tasks see a task going away (which a MonitoredTrainingSession recovers
  // from) rather than gRPC's CANCELLED.
  void StartShutdown(const Status& reason) { rendezvous_mgr_->Shutdown(reason); }
  // Live step rendezvous and sessions (besides the legacy one); for tests.
  int num_steps() const { return rendezvous_mgr_->num_steps(); }
  int num_sessions() const;

  void GetStatusAsync(CallOptions* opts, const GetStatusRequest* request,
                      GetStatusResponse* response, StatusCallback done) override;
  void CreateWorkerSessionAsync(CallOptions* opts, const CreateWorkerSessionRequest* request,
                                CreateWorkerSessionResponse* response,
                                StatusCallback done) override;
  void DeleteWorkerSessionAsync(CallOptions* opts, const DeleteWorkerSessionRequest* request,
                                DeleteWorkerSessionResponse* response,
                                StatusCallback done) override;
  void RegisterGraphAsync(CallOptions* opts, const RegisterGraphRequest* request,
                          RegisterGraphResponse* response, StatusCallback done) override;
  void DeregisterGraphAsync(CallOptions* opts, const DeregisterGraphRequest* request,
                            DeregisterGraphResponse* response, StatusCallback done) override;
  void RunGraphAsync(CallOptions* opts, const RunGraphRequest* request,
                     RunGraphResponse* response, StatusCallback done) override;
  void RunGraphWithTensorsAsync(CallOptions* opts, const RunGraphRequest* request,
                                const NamedTensors* sends, RunGraphResponse* response,
                                NamedTensors* recvs, StatusCallback done) override;
  void CleanupGraphAsync(CallOptions* opts, const CleanupGraphRequest* request,
                         CleanupGraphResponse* response, StatusCallback done) override;
  void CleanupAllAsync(CallOptions* opts, const CleanupAllRequest* request,
                       CleanupAllResponse* response, StatusCallback done) override;
  void RecvTensorAsync(CallOptions* opts, const RecvTensorRequest* request,
                       TensorResponse* response, StatusCallback done) override;

 private:
  Worker(const WorkerOptions& options, std::string task_name);

  // The session `handle` names (the legacy one when !create_called).
  StatusOr<std::shared_ptr<GraphMgr>> FindSession(const std::string& handle,
                                                  bool create_called) const;
  // Both RunGraphs: the sends from `sends` when given, else from the request's send field; the
  // received tensors into `recvs` when given, else into the response's recv field.
  void RunGraphImpl(CallOptions* opts, const RunGraphRequest* request, const NamedTensors* sends,
                    RunGraphResponse* response, NamedTensors* recvs, StatusCallback done);
  // Everything RunGraph does before the executors start; fills `keys` with the parsed recv keys.
  Status PrepareRunGraph(const RunGraphRequest& request, const NamedTensors* sends,
                         RemoteRendezvous* rendezvous, std::vector<Rendezvous::ParsedKey>* keys);

  const WorkerOptions options_;
  const std::string task_name_;
  // Declared before the devices so it is destroyed after them (resources may use it).
  std::shared_ptr<FunctionRuntime> function_runtime_;
  std::unique_ptr<DeviceMgr> device_mgr_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<RendezvousMgr> rendezvous_mgr_;

  mutable std::mutex mu_;
  std::shared_ptr<WorkerCacheInterface> cache_;
  std::shared_ptr<GraphMgr> legacy_session_;
  absl::flat_hash_map<std::string, std::shared_ptr<GraphMgr>> sessions_;
};

}  // namespace tensorflux
