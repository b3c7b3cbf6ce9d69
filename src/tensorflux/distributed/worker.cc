#include "tensorflux/distributed/worker.h"

#include <chrono>
#include <utility>
#include <vector>

#include "tensorflux/devices/device_name_utils.h"
#include "tensorflux/framework/cancellation.h"
#include "tensorflux/framework/function.h"

namespace tensorflux {
namespace {

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status SessionNotFound(const std::string& handle, const std::string& task) {
  return errors::Aborted("Session handle is not found: '", handle, "' on ", task,
                         ". The worker may have restarted since the session was created.");
}

}  // namespace

StatusOr<std::unique_ptr<Worker>> Worker::Create(const WorkerOptions& options) {
  if (options.task_index < 0) {
    return errors::InvalidArgument("Bad task index ", options.task_index);
  }
  if (options.step_ttl_ms <= 0 || options.recv_timeout_ms <= 0) {
    return errors::InvalidArgument("WorkerOptions: step_ttl_ms and recv_timeout_ms must be > 0");
  }
  const std::string task_name =
      absl::StrCat("/job:", options.job_name, "/replica:0/task:", options.task_index);
  TX_ASSIGN_OR_RETURN(DeviceNameUtils::ParsedName parsed, DeviceNameUtils::Parse(task_name));
  (void)parsed;  // a bad job name fails to parse
  std::unique_ptr<Worker> w(new Worker(options, task_name));
  TX_ASSIGN_OR_RETURN(w->device_mgr_, DeviceMgr::Create(options.config, task_name));
  w->function_runtime_ = std::make_shared<FunctionRuntime>(w->device_mgr_->HostCPU());
  for (Device* d : w->device_mgr_->ListDevices()) {
    TX_RETURN_IF_ERROR(RegisterFunctionLibrary(d->resource_manager(), w->function_runtime_));
  }
  // TF's rule: 0 picks one thread per core; negative runs every op on the caller's thread
  // (RunGraph's, or the RPC thread that completes a _Recv). (A LocalSession whose only device
  // is a CPU runs on the caller for 0 too; a worker keeps its pool.)
  const int inter = options.config.inter_op_parallelism_threads();
  if (inter >= 0) {
    w->pool_ = std::make_unique<ThreadPool>("tx_worker",
                                            inter > 0 ? inter : ThreadPool::DefaultNumThreads());
  }
  w->legacy_session_ = std::make_shared<GraphMgr>(w->device_mgr_.get(), w->function_runtime_.get());
  return w;
}

Worker::Worker(const WorkerOptions& options, std::string task_name)
    : options_(options),
      task_name_(std::move(task_name)),
      rendezvous_mgr_(std::make_unique<RendezvousMgr>(task_name_, options.step_ttl_ms)) {}

Worker::~Worker() {
  rendezvous_mgr_->CleanupAll(errors::Aborted("Worker ", task_name_, " is shutting down"));
  pool_.reset();  // waits for the steps' scheduled work
  std::lock_guard<std::mutex> l(mu_);
  sessions_.clear();
  legacy_session_.reset();
}

void Worker::set_worker_cache(std::shared_ptr<WorkerCacheInterface> cache) {
  std::lock_guard<std::mutex> l(mu_);
  cache_ = std::move(cache);
}

int Worker::num_sessions() const {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int>(sessions_.size());
}

StatusOr<std::shared_ptr<GraphMgr>> Worker::FindSession(const std::string& handle,
                                                        bool create_called) const {
  std::lock_guard<std::mutex> l(mu_);
  if (!create_called) return legacy_session_;
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) return SessionNotFound(handle, task_name_);
  return it->second;
}

void Worker::GetStatusAsync(CallOptions*, const GetStatusRequest*, GetStatusResponse* response,
                            StatusCallback done) {
  response->clear_device_attributes();
  for (const DeviceAttributes& a : device_mgr_->ListDeviceAttributes()) {
    *response->add_device_attributes() = a;
  }
  done(OkStatus());
}

void Worker::CreateWorkerSessionAsync(CallOptions*, const CreateWorkerSessionRequest* request,
                                      CreateWorkerSessionResponse*, StatusCallback done) {
  if (request->session_handle().empty()) {
    return done(errors::InvalidArgument("CreateWorkerSession: empty session_handle"));
  }
  if (request->isolate_session_state()) {
    return done(errors::Unimplemented(
        "CreateWorkerSession: isolate_session_state is not supported; resources live in the "
        "worker's devices and are shared by sessions"));
  }
  std::lock_guard<std::mutex> l(mu_);
  auto [it, inserted] = sessions_.try_emplace(request->session_handle());
  if (!inserted) {
    return done(errors::AlreadyExists("CreateWorkerSession: session '",
                                      request->session_handle(), "' already exists on ",
                                      task_name_));
  }
  it->second = std::make_shared<GraphMgr>(device_mgr_.get(), function_runtime_.get());
  done(OkStatus());
}

void Worker::DeleteWorkerSessionAsync(CallOptions*, const DeleteWorkerSessionRequest* request,
                                      DeleteWorkerSessionResponse*, StatusCallback done) {
  std::shared_ptr<GraphMgr> dropped;  // destroyed outside the lock
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = sessions_.find(request->session_handle());
    if (it != sessions_.end()) {
      dropped = std::move(it->second);
      sessions_.erase(it);
    }
  }
  done(OkStatus());  // deleting a session that is gone is not an error (TF's behaviour)
}

void Worker::RegisterGraphAsync(CallOptions*, const RegisterGraphRequest* request,
                                RegisterGraphResponse* response, StatusCallback done) {
  StatusOr<std::shared_ptr<GraphMgr>> session =
      FindSession(request->session_handle(), request->create_worker_session_called());
  if (!session.ok()) return done(session.status());
  StatusOr<std::string> handle = (*session)->Register(*request);
  if (!handle.ok()) return done(handle.status());
  response->set_graph_handle(*handle);
  done(OkStatus());
}

void Worker::DeregisterGraphAsync(CallOptions*, const DeregisterGraphRequest* request,
                                  DeregisterGraphResponse*, StatusCallback done) {
  StatusOr<std::shared_ptr<GraphMgr>> session =
      FindSession(request->session_handle(), request->create_worker_session_called());
  if (!session.ok()) return done(session.status());
  done((*session)->Deregister(request->graph_handle()));
}

Status Worker::PrepareRunGraph(const RunGraphRequest& request, const NamedTensors* sends,
                               RemoteRendezvous* rendezvous,
                               std::vector<Rendezvous::ParsedKey>* keys) {
  for (const std::string& k : request.recv_key()) {
    StatusOr<Rendezvous::ParsedKey> key = Rendezvous::ParseKey(k);
    if (!key.ok()) return errors::InvalidArgument("RunGraph recv_key: ", key.status().message());
    keys->push_back(*std::move(key));
  }
  auto send = [rendezvous](const std::string& name, const Tensor& t) -> Status {
    StatusOr<Rendezvous::ParsedKey> key = Rendezvous::ParseKey(name);
    if (!key.ok()) return errors::InvalidArgument("RunGraph send: ", key.status().message());
    return rendezvous->SendFed(*key, t);
  };
  if (sends != nullptr) {
    if (request.send_size() > 0) {
      return errors::InvalidArgument("RunGraph: sends given both as tensors and in the request");
    }
    for (const auto& [name, t] : *sends) TX_RETURN_IF_ERROR(send(name, t));
    return OkStatus();
  }
  for (const NamedTensorProto& feed : request.send()) {
    StatusOr<Tensor> t = Tensor::FromProto(feed.tensor());
    if (!t.ok()) {
      return errors::InvalidArgument("RunGraph send '", feed.name(), "': ", t.status().message());
    }
    TX_RETURN_IF_ERROR(send(feed.name(), *t));
  }
  return OkStatus();
}

void Worker::RunGraphAsync(CallOptions* opts, const RunGraphRequest* request,
                           RunGraphResponse* response, StatusCallback done) {
  RunGraphImpl(opts, request, nullptr, response, nullptr, std::move(done));
}

void Worker::RunGraphWithTensorsAsync(CallOptions* opts, const RunGraphRequest* request,
                                      const NamedTensors* sends, RunGraphResponse* response,
                                      NamedTensors* recvs, StatusCallback done) {
  RunGraphImpl(opts, request, sends, response, recvs, std::move(done));
}

void Worker::RunGraphImpl(CallOptions* opts, const RunGraphRequest* request,
                          const NamedTensors* sends, RunGraphResponse* response,
                          NamedTensors* recvs, StatusCallback done) {
  if (request->is_partial()) {
    return done(errors::Unimplemented("RunGraph: partial runs (is_partial) are not supported"));
  }
  StatusOr<std::shared_ptr<GraphMgr>> session =
      FindSession(request->session_handle(), request->create_worker_session_called());
  if (!session.ok()) return done(session.status());
  StatusOr<std::shared_ptr<const GraphMgr::Item>> item = (*session)->Find(request->graph_handle());
  if (!item.ok()) return done(item.status());
  StatusOr<std::shared_ptr<RemoteRendezvous>> rendezvous =
      rendezvous_mgr_->FindOrCreate(request->step_id());
  if (!rendezvous.ok()) return done(rendezvous.status());
  {
    std::lock_guard<std::mutex> l(mu_);
    const int64_t timeout = opts->GetTimeout() > 0 ? opts->GetTimeout() : options_.recv_timeout_ms;
    (*rendezvous)->Initialize(cache_.get(), timeout);
  }
  // Everything the step needs after this call returns.
  struct Step {
    std::shared_ptr<const GraphMgr::Item> item;
    std::shared_ptr<RemoteRendezvous> rendezvous;
    std::shared_ptr<GraphMgr> session;  // keeps the item's session alive
    std::vector<Rendezvous::ParsedKey> recv_keys;
    CancellationManager cm;
  };
  auto step = std::make_shared<Step>();
  step->item = *std::move(item);
  step->rendezvous = *std::move(rendezvous);
  step->session = *std::move(session);
  step->rendezvous->StepStarted();
  Status prepared =
      PrepareRunGraph(*request, sends, step->rendezvous.get(), &step->recv_keys);
  if (!prepared.ok()) {
    step->rendezvous->StartAbort(prepared);
    step->rendezvous->StepFinished();
    return done(prepared);
  }
  opts->SetCancelCallback([step] {
    step->rendezvous->StartAbort(errors::Cancelled("RunGraph of step ",
                                                   step->rendezvous->step_id(),
                                                   " was cancelled"));
    step->cm.StartCancel();
  });
  Executor::Args args;
  args.step_id = request->step_id();
  args.cancellation_manager = &step->cm;
  args.rendezvous = step->rendezvous.get();
  args.inter_op_pool = pool_.get();
  if (request->exec_opts().record_timeline()) args.step_stats = response->mutable_step_stats();
  const bool record_graphs = request->exec_opts().record_partition_graphs();
  auto finish = [step, opts, response, recvs, record_graphs, done](Status s) {
    opts->ClearCancelCallback();
    struct Finished {  // whichever way this returns
      RemoteRendezvous* r;
      ~Finished() { r->StepFinished(); }
    } finished{step->rendezvous.get()};
    if (!s.ok()) {
      Status aborted = step->rendezvous->abort_status();
      if (!aborted.ok()) s = aborted;
      step->rendezvous->StartAbort(s);  // fails other workers' RecvTensor calls for the step
      return done(s);
    }
    // Take the fetched tensors: every _Send has run, so what is not there never will be.
    CancellationManager fetch_cm;
    std::vector<Status> got(step->recv_keys.size(), errors::Internal("not received"));
    response->clear_recv();
    if (recvs != nullptr) {
      recvs->clear();
      recvs->reserve(step->recv_keys.size());
    }
    for (size_t i = 0; i < step->recv_keys.size(); ++i) {
      const std::string& key = step->recv_keys[i].full_key;
      NamedTensorProto* proto = nullptr;
      if (recvs != nullptr) {
        recvs->emplace_back(key, Tensor());
      } else {
        proto = response->add_recv();
        proto->set_name(key);
      }
      Tensor* tensor = recvs != nullptr ? &recvs->back().second : nullptr;
      Rendezvous::Args a;
      a.cancellation_manager = &fetch_cm;
      step->rendezvous->RecvLocalAsync(
          step->recv_keys[i], a,
          [&got, i, proto, tensor](const Status& rs, const Rendezvous::Args&,
                                   const Rendezvous::Args&, const Tensor& t, bool) {
            got[i] = rs;
            if (!rs.ok()) return;
            if (tensor != nullptr) {
              *tensor = t;
            } else {
              t.AsProtoTensorContent(proto->mutable_tensor());
            }
          });
    }
    fetch_cm.StartCancel();
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i].code() == absl::StatusCode::kCancelled) {
        return done(errors::InvalidArgument("RunGraph: recv_key ", step->recv_keys[i].full_key,
                                            " was not sent by step ", step->rendezvous->step_id(),
                                            " of graph ", step->item->handle));
      }
      if (!got[i].ok()) return done(got[i]);
    }
    if (record_graphs) {
      for (int i = 0; i < step->item->executor->num_partitions(); ++i) {
        step->item->executor->partition_graph(i).ToGraphDef(response->add_partition_graph());
      }
    }
    done(OkStatus());
  };
  // Started on the calling thread (a gRPC callback thread or the in-process master's): _Recv
  // waits are asynchronous and a hop to the pool first would cost a wakeup. Not every long node
  // leaves this thread: of the expensive nodes a node makes ready the executor keeps one (the
  // one with the most expensive kernels after it) inline behind at most a few cheap ones, so a
  // heavy chain that waits on no _Recv (a MatMul chain on a variable) computes here and holds
  // the gRPC thread (docs/DISTRIBUTED.md, known limit).
  step->item->executor->RunAsync(args, finish);
}

void Worker::CleanupGraphAsync(CallOptions*, const CleanupGraphRequest* request,
                               CleanupGraphResponse*, StatusCallback done) {
  rendezvous_mgr_->Cleanup(request->step_id());
  done(OkStatus());
}

void Worker::CleanupAllAsync(CallOptions*, const CleanupAllRequest* request, CleanupAllResponse*,
                             StatusCallback done) {
  for (Device* d : device_mgr_->ListDevices()) {
    ResourceMgr* rm = d->resource_manager();
    if (request->container().empty()) {
      rm->Cleanup(rm->default_container());
    } else {
      for (const std::string& c : request->container()) rm->Cleanup(c);
    }
  }
  done(OkStatus());
}

void Worker::RecvTensorAsync(CallOptions* opts, const RecvTensorRequest* request,
                             TensorResponse* response, StatusCallback done) {
  StatusOr<Rendezvous::ParsedKey> key = Rendezvous::ParseKey(request->rendezvous_key());
  if (!key.ok()) return done(errors::InvalidArgument("RecvTensor: ", key.status().message()));
  StatusOr<Device*> device = device_mgr_->LookupDevice(key->src_device);
  if (!device.ok() || (*device)->name() != key->src_device) {
    return done(errors::InvalidArgument("RecvTensor: the key's send device ", key->src_device,
                                        " is not a device of ", task_name_));
  }
  if ((*device)->attributes().incarnation() != key->src_incarnation) {
    return done(errors::Aborted("RecvTensor: device ", key->src_device, " has incarnation ",
                                (*device)->attributes().incarnation(), ", the key expects ",
                                key->src_incarnation,
                                ": the worker restarted since the graph was registered"));
  }
  StatusOr<std::shared_ptr<RemoteRendezvous>> rendezvous =
      rendezvous_mgr_->FindOrCreate(request->step_id());
  if (!rendezvous.ok()) return done(rendezvous.status());
  auto cm = std::make_shared<CancellationManager>();
  // Before the wait starts: `opts` may be freed as soon as `done` has run.
  opts->SetCancelCallback([cm] { cm->StartCancel(); });
  Rendezvous::Args args;
  args.cancellation_manager = cm.get();
  (*rendezvous)
      ->RecvLocalAsync(*key, args,
                       [opts, cm, response, done](const Status& s, const Rendezvous::Args&,
                                                  const Rendezvous::Args&, const Tensor& t,
                                                  bool is_dead) {
                         opts->ClearCancelCallback();
                         if (s.ok()) {
                           response->tensor = t;
                           response->is_dead = is_dead;
                           response->send_start_micros = NowMicros();
                         }
                         done(s);
                       });
}

}  // namespace tensorflux
