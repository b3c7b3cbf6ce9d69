#include "tensorflux/distributed/master_session.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "tensorflux/distributed/cluster_spec.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/framework/rendezvous.h"
#include "tensorflux/passes/graph_partition.h"

namespace tensorflux {
namespace {

constexpr int64_t kDefaultStepTimeoutMs = 60000;
// How long Create waits for every task to answer GetStatus when the config sets no timeout
// (a task still starting is asked again until then): long enough for tasks started together,
// short enough that a session over a dead task fails soon (UNAVAILABLE naming it).
constexpr int64_t kDefaultConnectTimeoutMs = 10000;
// Deadline of a CleanupGraph call (a task that is gone has nothing to clean).
constexpr int64_t kCleanupTimeoutMs = 5000;
// A failed step answers once every task has dropped it (CleanupGraph answered), so that no task
// that answers still runs the step's partition after its client heard of the failure; a task
// that does not answer this soon (stopped, cut off) is not waited for further.
constexpr int64_t kFailedStepCleanupTimeoutMs = 1000;

uint64_t RandomU64() {
  static std::mutex mu;
  static std::mt19937_64 gen(std::random_device{}());
  std::lock_guard<std::mutex> l(mu);
  return gen();
}

// The Placer's view of a device of another task: name, type and attributes; it never runs a
// kernel (the master only places and partitions for it).
class RemoteDevice : public Device {
 public:
  explicit RemoteDevice(const DeviceAttributes& a)
      : Device(a.name(), a.memory_limit(), a.physical_device_desc()) {}
  Allocator* GetAllocator() override { return nullptr; }
};

// Runs fn(i) for i in [0, n) on their own threads and waits for all (n is the number of tasks: a
// handful). Used for the calls that have no async form worth wiring (setup and teardown).
template <typename Fn>
void ParallelFor(int n, Fn fn) {
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (int i = 0; i < n; ++i) threads.emplace_back([&fn, i] { fn(i); });
  for (std::thread& t : threads) t.join();
}

Status NameTask(const Status& s, const std::string& task, const char* what) {
  if (s.ok()) return s;
  return Status(s.code(), absl::StrCat(what, " on task ", task, " failed: ", s.message()));
}

// Turns the feed _Arg and fetch _Retval nodes of a partition into client-terminated _Recv and
// _Send nodes under the keys the master sends and receives; records which feeds and fetches the
// partition holds.
void RewriteArgsAndRetvals(const std::string& device, uint64_t incarnation,
                           const RunSignature& sig, GraphDef* part, std::vector<int>* feeds,
                           std::vector<int>* fetches) {
  for (NodeDef& n : *part->mutable_node()) {
    const bool is_arg = n.op() == "_Arg";
    if (!is_arg && n.op() != "_Retval") continue;
    const int index = static_cast<int>(n.attr().at("index").i());
    const DataType dtype = n.attr().at("T").type();
    const std::string& tensor_name = is_arg ? sig.feeds[index] : sig.fetches[index];
    n.mutable_attr()->erase("index");
    if (is_arg) {
      n.set_op("_Recv");
      n.mutable_attr()->erase("T");
      AddNodeAttr("tensor_type", dtype, &n);
      feeds->push_back(index);
    } else {
      n.set_op("_Send");
      fetches->push_back(index);
    }
    AddNodeAttr("tensor_name", tensor_name, &n);
    AddNodeAttr("send_device", device, &n);
    AddNodeAttr("send_device_incarnation", static_cast<int64_t>(incarnation), &n);
    AddNodeAttr("recv_device", device, &n);
    AddNodeAttr("client_terminated", true, &n);
  }
}

}  // namespace

std::string NewSessionHandle() {
  return absl::StrFormat("%016x%016x", RandomU64(), RandomU64());
}

MasterSession::MasterSession(const MasterEnv* env, std::string handle, const ConfigProto& config)
    : env_(env), handle_(std::move(handle)), config_(config), state_(config) {}

MasterSession::~MasterSession() {
  Close().IgnoreError();
  WaitForCleanups();
}

StatusOr<std::unique_ptr<MasterSession>> MasterSession::Create(const MasterEnv* env,
                                                               const std::string& handle,
                                                               const ConfigProto& config) {
  std::unique_ptr<MasterSession> s(new MasterSession(env, handle, config));
  TX_RETURN_IF_ERROR(s->ListClusterDevices());
  return s;
}

Status MasterSession::ListClusterDevices() {
  std::vector<std::string> tasks = env_->worker_cache->ListWorkers();
  const int n = static_cast<int>(tasks.size());
  std::vector<std::shared_ptr<WorkerInterface>> workers(n);
  std::vector<GetStatusResponse> status(n);
  std::vector<Status> results(n);
  const int64_t timeout_ms = config_.operation_timeout_in_ms() > 0
                                 ? config_.operation_timeout_in_ms()
                                 : kDefaultConnectTimeoutMs;
  ParallelFor(n, [&](int i) {
    auto w = env_->worker_cache->GetOrCreateWorker(tasks[i]);
    if (!w.ok()) {
      results[i] = w.status();
      return;
    }
    workers[i] = *w;
    // A task still starting refuses connections: ask again until the deadline. A refusal with
    // less than a pause left ends it (UNAVAILABLE): one more call with no time left would end
    // DEADLINE_EXCEEDED or UNAVAILABLE depending on the scheduling.
    constexpr auto kPause = std::chrono::milliseconds(50);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (true) {
      const int64_t left = std::chrono::duration_cast<std::chrono::milliseconds>(
                               deadline - std::chrono::steady_clock::now()).count();
      results[i] = workers[i]->GetStatus(GetStatusRequest(), &status[i], std::max<int64_t>(left, 1));
      if (results[i].ok() || results[i].code() != absl::StatusCode::kUnavailable) break;
      if (deadline - std::chrono::steady_clock::now() <= kPause) break;
      std::this_thread::sleep_for(kPause);
    }
    if (!results[i].ok()) return;
    CreateWorkerSessionRequest req;
    req.set_session_handle(handle_);
    *req.mutable_server_def() = env_->server_def;
    CreateWorkerSessionResponse resp;
    results[i] = workers[i]->CreateWorkerSession(req, &resp, timeout_ms);
  });
  for (int i = 0; i < n; ++i) {
    TX_RETURN_IF_ERROR(NameTask(results[i], tasks[i], "Listing the devices"));
    workers_[tasks[i]] = workers[i];
  }
  // This task's real devices first (the default place and the constant-folding device), then
  // stand-ins for the other tasks' devices.
  for (Device* d : env_->local_devices->ListDevices()) {
    devices_.push_back(d);
    device_attributes_.push_back(d->attributes());
  }
  for (int i = 0; i < n; ++i) {
    for (const DeviceAttributes& a : status[i].device_attributes()) {
      incarnations_[a.name()] = a.incarnation();
      if (tasks[i] == env_->local_task) continue;
      remote_devices_.push_back(std::make_unique<RemoteDevice>(a));
      devices_.push_back(remote_devices_.back().get());
      device_attributes_.push_back(a);
    }
  }
  return OkStatus();
}

Status MasterSession::CreateGraph(const GraphDef& graph) {
  TX_RETURN_IF_ERROR(state_.Create(graph));
  return OkStatus();
}

Status MasterSession::Extend(const ExtendSessionRequest& request,
                             ExtendSessionResponse* response) {
  std::lock_guard<std::mutex> l(mu_);
  if (closed_) return errors::Cancelled("Session ", handle_, " has been closed");
  if (request.current_graph_version() != graph_version_.load()) {
    return errors::FailedPrecondition("ExtendSession: current_graph_version ",
                                      request.current_graph_version(),
                                      " is not the session's graph version ",
                                      graph_version_.load());
  }
  TX_RETURN_IF_ERROR(state_.Extend(request.graph_def()));
  response->set_new_graph_version(++graph_version_);
  return OkStatus();
}

std::vector<DeviceAttributes> MasterSession::ListDevices() const { return device_attributes_; }

int MasterSession::NumCompiledSignatures() const {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int>(compiled_.size());
}

int64_t MasterSession::StepTimeoutMs(const RunOptions& options) const {
  if (options.timeout_in_ms() > 0) return options.timeout_in_ms();
  if (config_.operation_timeout_in_ms() > 0) return config_.operation_timeout_in_ms();
  return kDefaultStepTimeoutMs;
}

StatusOr<std::shared_ptr<MasterSession::Compiled>> MasterSession::GetOrCompile(
    const std::shared_ptr<const Graph>& graph, RunSignature sig) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return errors::Cancelled("Session ", handle_, " has been closed");
    auto it = compiled_.find(sig.key);
    if (it != compiled_.end()) return it->second;
  }
  TX_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, state_.BuildStepGraph(graph, sig, devices_));
  PartitionOptions popts;
  popts.get_incarnation = [this](const std::string& device) -> uint64_t {
    auto it = incarnations_.find(device);
    return it == incarnations_.end() ? 1 : it->second;
  };
  std::map<std::string, GraphDef> partitions;
  TX_RETURN_IF_ERROR(Partition(popts, *g, &partitions));

  auto c = std::make_shared<Compiled>();
  c->sig = std::move(sig);
  c->feed_keys.resize(c->sig.feeds.size());
  c->fetch_keys.resize(c->sig.fetches.size());
  std::map<std::string, GraphDef> by_task;
  std::map<std::string, TaskPart> parts;
  for (auto& [device, part] : partitions) {
    TX_ASSIGN_OR_RETURN(std::string task, ClusterSpec::TaskNameOf(device));
    const uint64_t incarnation = popts.get_incarnation(device);
    TaskPart& tp = parts[task];
    tp.task = task;
    std::vector<int> feeds, fetches;
    RewriteArgsAndRetvals(device, incarnation, c->sig, &part, &feeds, &fetches);
    for (int i : feeds) {
      c->feed_keys[i] = Rendezvous::CreateKey(device, incarnation, device, c->sig.feeds[i], {0, 0});
      tp.feeds.push_back(i);
    }
    for (int i : fetches) {
      c->fetch_keys[i] =
          Rendezvous::CreateKey(device, incarnation, device, c->sig.fetches[i], {0, 0});
      tp.fetches.push_back(i);
    }
    GraphDef& merged = by_task[task];
    if (merged.node_size() == 0) {
      *merged.mutable_versions() = part.versions();
      *merged.mutable_library() = part.library();
    }
    for (NodeDef& n : *part.mutable_node()) *merged.add_node() = std::move(n);
  }
  // Register each task's graph, in parallel.
  std::vector<TaskPart*> list;
  for (auto& [task, tp] : parts) {
    auto w = workers_.find(task);
    if (w == workers_.end()) {
      return errors::Internal("placed on task ", task, ", which is not in the cluster");
    }
    tp.worker = w->second;
    list.push_back(&tp);
  }
  std::vector<Status> results(list.size());
  const int64_t timeout_ms = StepTimeoutMs(RunOptions());
  ParallelFor(static_cast<int>(list.size()), [&](int i) {
    RegisterGraphRequest req;
    req.set_session_handle(handle_);
    req.set_create_worker_session_called(true);
    *req.mutable_graph_def() = std::move(by_task[list[i]->task]);
    *req.mutable_graph_options() = config_.graph_options();
    *req.mutable_config_proto() = config_;
    RegisterGraphResponse resp;
    results[i] = NameTask(list[i]->worker->RegisterGraph(req, &resp, timeout_ms), list[i]->task,
                          "RegisterGraph");
    list[i]->graph_handle = resp.graph_handle();
  });
  for (const Status& s : results) TX_RETURN_IF_ERROR(s);
  for (auto& [task, tp] : parts) c->parts.push_back(std::move(tp));

  std::lock_guard<std::mutex> l(mu_);
  if (closed_) return errors::Cancelled("Session ", handle_, " has been closed");
  auto [it, inserted] = compiled_.emplace(c->sig.key, c);
  // A concurrent compile of the same signature won: its graphs serve; ours are left to Close
  // (DeleteWorkerSession drops them).
  return it->second;
}

struct MasterSession::Step {
  struct Call {
    CallOptions opts;
    RunGraphRequest req;
    NamedTensors sends;
    RunGraphResponse resp;
    NamedTensors recvs;
    Status status;
  };
  std::shared_ptr<Compiled> c;
  int64_t step_id = 0;
  int64_t timeout_ms = 0;
  CallOptions* opts = nullptr;  // the caller's, may be null
  const RunStepRequest* request = nullptr;
  const NamedTensors* feeds = nullptr;
  RunStepResponse* response = nullptr;
  NamedTensors* fetched = nullptr;
  StatusCallback done;
  std::unique_ptr<Call[]> calls;  // one per c->parts
  std::mutex mu;
  int pending = 0;       // calls not answered
  int first_error = -1;  // the first call that failed
  std::atomic<bool> closed{false};  // cancelled by the session's Close

  void CancelCalls(int except) {
    for (int j = 0; j < static_cast<int>(c->parts.size()); ++j) {
      if (j != except) calls[j].opts.StartCancel();
    }
  }
};

void MasterSession::StartStep(std::shared_ptr<Step> step) {
  const Compiled& c = *step->c;
  const int n = static_cast<int>(c.parts.size());
  step->step_id = static_cast<int64_t>(RandomU64() >> 1);
  step->calls.reset(new Step::Call[n]);
  step->pending = n;
  const RunOptions& options = step->request->options();
  for (int i = 0; i < n; ++i) {
    const TaskPart& tp = c.parts[i];
    Step::Call& call = step->calls[i];
    call.opts.SetTimeout(step->timeout_ms);
    call.req.set_session_handle(handle_);
    call.req.set_create_worker_session_called(true);
    call.req.set_graph_handle(tp.graph_handle);
    call.req.set_step_id(step->step_id);
    call.req.mutable_exec_opts()->set_record_timeline(options.trace_level() !=
                                                      RunOptions::NO_TRACE);
    call.req.mutable_exec_opts()->set_record_partition_graphs(options.output_partition_graphs());
    call.sends.reserve(tp.feeds.size());
    for (int f : tp.feeds) {
      call.sends.emplace_back(c.feed_keys[f], (*step->feeds)[c.sig.feed_input[f]].second);
    }
    for (int f : tp.fetches) call.req.add_recv_key(c.fetch_keys[f]);
  }
  if (step->opts != nullptr) {
    // Runs at once when the caller cancelled already: the calls below then fail at once.
    step->opts->SetCancelCallback([step] { step->CancelCalls(-1); });
  }
  bool closed = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    running_.emplace(step.get(), step);
    closed = closed_;
  }
  if (closed) {  // closed since the signature was found: the calls below fail at once
    step->closed = true;
    step->CancelCalls(-1);
  }
  if (n == 0) return FinishStep(step.get());  // every fetch is a feed
  for (int i = 0; i < n; ++i) {
    Step::Call* call = &step->calls[i];
    c.parts[i].worker->RunGraphWithTensorsAsync(
        &call->opts, &call->req, &call->sends, &call->resp, &call->recvs,
        [this, step, i, call](const Status& s) {
          bool cancel_others = false;
          bool last = false;
          {
            std::lock_guard<std::mutex> l(step->mu);
            call->status = s;
            if (!s.ok() && step->first_error < 0) {
              step->first_error = i;
              cancel_others = true;
            }
            last = --step->pending == 0;
          }
          // The step cannot succeed: stop the other tasks' partitions now (outside the lock: a
          // cancelled in-process call may answer on this thread).
          if (cancel_others) step->CancelCalls(i);
          if (last) FinishStep(step.get());
        });
  }
}

Status MasterSession::StepError(const Step& step) const {
  const Compiled& c = *step.c;
  const int n = static_cast<int>(c.parts.size());
  const Status& s = step.calls[step.first_error].status;
  const std::string& task = c.parts[step.first_error].task;
  if (step.closed) {
    return errors::Cancelled("Step ", step.step_id, " was cancelled: session ", handle_,
                             " was closed (", task, ": ", s.message(), ")");
  }
  if (s.code() == absl::StatusCode::kDeadlineExceeded) {
    // Every task that had not answered by the deadline: the one that hangs (a stopped
    // process, a lost network) is among them even when another task, waiting for its
    // tensors, timed out first.
    std::vector<std::string> waiting;
    for (int i = 0; i < n; ++i) {
      if (!step.calls[i].status.ok()) waiting.push_back(c.parts[i].task);
    }
    return errors::DeadlineExceeded("Step ", step.step_id, " timed out after ", step.timeout_ms,
                                    " ms waiting for task", waiting.size() > 1 ? "s " : " ",
                                    absl::StrJoin(waiting, ", "), ": ", task, ": ",
                                    s.message());
  }
  return Status(s.code(), absl::StrCat("Step ", step.step_id, " failed on task ", task, ": ",
                                       s.message()));
}

void MasterSession::FinishStep(Step* step) {
  if (step->opts != nullptr) step->opts->ClearCancelCallback();
  {
    std::lock_guard<std::mutex> l(mu_);
    running_.erase(step);
  }
  const Compiled& c = *step->c;
  const int n = static_cast<int>(c.parts.size());
  const int64_t step_id = step->step_id;
  StatusCallback done = std::move(step->done);
  if (step->first_error >= 0) {
    // The step answers once its tasks have dropped it: the RunGraph calls the master cancelled
    // (and those that ended at their deadline) may still be running on their tasks, whose own
    // deadlines start later than the master's (gRPC sends the time left), and a task that was
    // stopped runs its step when it resumes. Until CleanupGraph reaches a task, what that one
    // sends could still complete the step there (a ps applying a gradient after the client got
    // DEADLINE_EXCEEDED); once a task has dropped the step, RecvTensor and RunGraph for it fail.
    Status failed = StepError(*step);
    return CleanupStepAsync(c, step_id, kFailedStepCleanupTimeoutMs,
                            [done = std::move(done), failed] { done(failed); });
  }
  CleanupStepAsync(c, step_id, kCleanupTimeoutMs, nullptr);
  // Gather the fetches by key, and each task's step stats and partition graphs when asked.
  RunMetadata* metadata = step->response->mutable_metadata();
  absl::flat_hash_map<std::string, Tensor*> by_key;
  for (int i = 0; i < n; ++i) {
    Step::Call& call = step->calls[i];
    for (auto& [key, t] : call.recvs) by_key[key] = &t;
    metadata->mutable_step_stats()->MergeFrom(call.resp.step_stats());
    for (const GraphDef& g : call.resp.partition_graph()) *metadata->add_partition_graphs() = g;
  }
  NamedTensors* fetched = step->fetched;
  fetched->clear();
  fetched->reserve(c.sig.sources.size());
  for (size_t i = 0; i < c.sig.sources.size(); ++i) {
    const RunSignature::Source& src = c.sig.sources[i];
    const std::string& name = step->request->fetch(static_cast<int>(i));
    if (src.from_feed) {
      fetched->emplace_back(name, (*step->feeds)[src.index].second);
      continue;
    }
    auto it = by_key.find(c.fetch_keys[src.index]);
    if (it == by_key.end()) {
      fetched->clear();
      return done(errors::Internal("Step ", step_id, ": no worker returned fetch '",
                                   c.sig.fetches[src.index], "'"));
    }
    fetched->emplace_back(name, *it->second);
  }
  done(OkStatus());
}

void MasterSession::CleanupStepAsync(const Compiled& c, int64_t step_id, int64_t timeout_ms,
                                     std::function<void()> then) {
  // A worker keeps a step's rendezvous until told (other tasks may still be receiving from it).
  // Close waits for the calls still out.
  struct Call {
    CallOptions opts;
    CleanupGraphRequest req;
    CleanupGraphResponse resp;
  };
  // `then` runs after the last call answers (the in-process worker answers inline).
  struct Pending {
    std::atomic<int> left;
    std::function<void()> then;
  };
  auto pending = std::make_shared<Pending>();
  pending->left = static_cast<int>(c.parts.size()) + 1;
  pending->then = std::move(then);
  auto one_done = [pending] {
    if (pending->left.fetch_sub(1, std::memory_order_acq_rel) == 1 && pending->then) {
      pending->then();
    }
  };
  {
    std::lock_guard<std::mutex> l(cleanup_mu_);
    pending_cleanups_ += static_cast<int>(c.parts.size());
  }
  for (const TaskPart& tp : c.parts) {
    auto* call = new Call;
    call->req.set_step_id(step_id);
    call->opts.SetTimeout(timeout_ms);
    tp.worker->CleanupGraphAsync(&call->opts, &call->req, &call->resp,
                                 [this, call, one_done](const Status&) {
                                   delete call;
                                   {
                                     std::lock_guard<std::mutex> l(cleanup_mu_);
                                     if (--pending_cleanups_ == 0) cleanup_cv_.notify_all();
                                   }
                                   // Not `this`: Close may have returned.
                                   one_done();
                                 });
  }
  one_done();
}

void MasterSession::WaitForCleanups() {
  std::unique_lock<std::mutex> l(cleanup_mu_);
  cleanup_cv_.wait(l, [this] { return pending_cleanups_ == 0; });
}

Status MasterSession::Run(const RunStepRequest& request, const NamedTensors& feeds,
                          RunStepResponse* response, NamedTensors* fetched) {
  absl::Notification finished;
  Status result;
  RunAsync(nullptr, request, feeds, response, fetched, nullptr, [&](const Status& s) {
    result = s;
    finished.Notify();
  });
  finished.WaitForNotification();
  return result;
}

void MasterSession::RunAsync(CallOptions* opts, const RunStepRequest& request,
                             const NamedTensors& feeds, RunStepResponse* response,
                             NamedTensors* fetched, const BlockingRunner& run_blocking,
                             StatusCallback done) {
  if (!request.partial_run_handle().empty()) {
    return done(errors::Unimplemented("partial runs are not supported"));
  }
  std::shared_ptr<const Graph> graph = state_.graph();
  if (closed()) return done(errors::Cancelled("Session ", handle_, " has been closed"));
  if (graph == nullptr) {
    return done(errors::FailedPrecondition("Session was not created with a graph before Run()"));
  }
  for (const auto& [name, t] : feeds) {
    if (!t.IsInitialized()) {
      return done(errors::InvalidArgument("Feed '", name, "' is an uninitialized tensor"));
    }
  }
  std::vector<std::string> fetches(request.fetch().begin(), request.fetch().end());
  std::vector<std::string> targets(request.target().begin(), request.target().end());
  StatusOr<RunSignature> sig = GraphExecutionState::MakeSignature(*graph, feeds, fetches, targets);
  if (!sig.ok()) return done(sig.status());
  auto step = std::make_shared<Step>();
  step->timeout_ms = StepTimeoutMs(request.options());
  step->opts = opts;
  step->request = &request;
  step->feeds = &feeds;
  step->response = response;
  step->fetched = fetched;
  step->done = std::move(done);
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = compiled_.find(sig->key);
    if (it != compiled_.end()) step->c = it->second;
  }
  if (step->c != nullptr) return StartStep(std::move(step));
  auto compile = [this, graph, sig = *std::move(sig), step]() {
    StatusOr<std::shared_ptr<Compiled>> c = GetOrCompile(graph, sig);
    if (!c.ok()) {
      StatusCallback failed = std::move(step->done);
      return failed(c.status());
    }
    step->c = *std::move(c);
    StartStep(step);
  };
  if (run_blocking) return run_blocking(std::move(compile));
  compile();
}

bool MasterSession::closed() const {
  std::lock_guard<std::mutex> l(mu_);
  return closed_;
}

Status MasterSession::Close() {
  std::vector<std::shared_ptr<WorkerInterface>> workers;
  std::vector<std::string> tasks;
  std::vector<std::shared_ptr<Step>> running;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return OkStatus();
    closed_ = true;
    compiled_.clear();
    for (auto& [task, w] : workers_) {
      tasks.push_back(task);
      workers.push_back(w);
    }
    for (auto& [raw, weak] : running_) {
      if (std::shared_ptr<Step> step = weak.lock()) running.push_back(std::move(step));
    }
  }
  // Outside the lock: a cancelled in-process call may finish its step (FinishStep) here.
  for (const std::shared_ptr<Step>& step : running) {
    step->closed = true;
    step->CancelCalls(-1);
  }
  running.clear();
  state_.Reset();
  WaitForCleanups();
  // Deleting the worker session drops its graphs and steps on that task.
  ParallelFor(static_cast<int>(workers.size()), [&](int i) {
    DeleteWorkerSessionRequest req;
    req.set_session_handle(handle_);
    DeleteWorkerSessionResponse resp;
    workers[i]->DeleteWorkerSession(req, &resp, 5000).IgnoreError();
  });
  return OkStatus();
}

}  // namespace tensorflux
