#include "tensorflux/runtime/local_session.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "tensorflux/framework/call_frame.h"
#include "tensorflux/framework/cancellation.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/passes/graph_optimizer.h"
#include "tensorflux/passes/placer.h"
#include "tensorflux/runtime/subgraph.h"

namespace tensorflux {
namespace {

Status ClosedError() { return errors::Cancelled("Session has been closed."); }

}  // namespace

LocalSession::LocalSession(const SessionOptions& options)
    : options_(options), state_(options.config) {
  auto mgr = DeviceMgr::Create(options_.config);
  if (!mgr.ok()) {
    init_status_ = mgr.status();
    closed_ = true;
    return;
  }
  device_mgr_ = *std::move(mgr);
  host_device_ = device_mgr_->HostCPU();
  function_runtime_ = std::make_shared<FunctionRuntime>(host_device_);
  for (Device* d : device_mgr_->ListDevices()) {
    RegisterFunctionLibrary(d->resource_manager(), function_runtime_).IgnoreError();  // empty
  }
  if (options_.config.log_device_placement()) {
    LogPlacementLine("Device mapping:");
    for (Device* d : device_mgr_->ListDevices()) {
      LogPlacementLine(absl::StrCat(d->name(), " -> ", d->attributes().physical_device_desc()));
    }
  }
  // inter_op_parallelism_threads 0 ("the system picks"): a session whose only device is a CPU
  // runs its steps on the calling thread, as TF does for a negative value. Every oneDNN call
  // and ParallelFor of that thread already spreads over all cores on its one OpenMP team
  // (core/openmp_team.h), and oneDNN primitives run one at a time (dnnl_util::TeamGate), so
  // pool threads running nodes beside it only took cores from that team and added teams of
  // their own, each with threads that sleep and wake between regions; more than one team makes
  // libgomp cut every team's spin short. Measured on 2 cores (docs/PERFORMANCE.md, 2026-12-02):
  // the Fashion-MNIST CNN step 16% faster, the MLP step 1% (9% with a spin that spans the
  // gaps between its GEMMs). Sessions with more devices (a GPU, several CPU devices) keep one
  // pool thread per core, so that their partitions run at once.
  const int inter = options_.config.inter_op_parallelism_threads();
  const std::vector<Device*>& devices = device_mgr_->ListDevices();
  const bool one_cpu = devices.size() == 1 && devices[0]->device_type() == DEVICE_CPU;
  if (inter > 0 || (inter == 0 && !one_cpu)) {
    inter_op_pool_ = std::make_unique<ThreadPool>(
        "tx_inter_op", inter > 0 ? inter : ThreadPool::DefaultNumThreads());
  }
}

LocalSession::~LocalSession() {
  Close().IgnoreError();
  inter_op_pool_.reset();  // waits for scheduled work
}

Status LocalSession::Create(const GraphDef& graph) {
  std::lock_guard<std::mutex> l(mu_);
  TX_RETURN_IF_ERROR(init_status_);
  if (closed_) return ClosedError();
  TX_RETURN_IF_ERROR(state_.Create(graph));
  function_runtime_->AddLibrary(state_.library());
  return OkStatus();
}

Status LocalSession::Extend(const GraphDef& graph) {
  std::lock_guard<std::mutex> l(mu_);
  TX_RETURN_IF_ERROR(init_status_);
  if (closed_) return ClosedError();
  TX_RETURN_IF_ERROR(state_.Extend(graph));
  // Cached executors stay valid: new nodes cannot be inputs of existing ones.
  function_runtime_->AddLibrary(state_.library());
  return OkStatus();
}

Status LocalSession::Close() {
  // Cancel the running steps first: a Run starting after this finds its registration refused.
  close_cancellation_.StartCancel();
  std::lock_guard<std::mutex> l(mu_);
  closed_ = true;
  executors_.clear();
  state_.Reset();
  // A step still running keeps the resources it looked up.
  if (device_mgr_ != nullptr) device_mgr_->ClearResources();
  return OkStatus();
}

Status LocalSession::ListDevices(std::vector<DeviceAttributes>* response) {
  TX_RETURN_IF_ERROR(init_status_);
  *response = device_mgr_->ListDeviceAttributes();
  return OkStatus();
}

int LocalSession::NumCachedExecutors() const {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int>(executors_.size());
}

StatusOr<std::shared_ptr<LocalSession::ExecutorEntry>> LocalSession::GetOrCreateExecutor(
    const std::shared_ptr<const Graph>& graph, const RunSignature& sig) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return ClosedError();
    auto it = executors_.find(sig.key);
    if (it != executors_.end()) return it->second;
  }
  // Build outside the lock; if another thread built the same signature meanwhile, keep theirs.
  TX_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g,
                      state_.BuildStepGraph(graph, sig, device_mgr_->ListDevices()));
  ExecutorParams params;
  params.check_numerics = options_.config.check_numerics();
  PartitionOptions popts;
  popts.get_incarnation = [this](const std::string& device) -> uint64_t {
    auto d = device_mgr_->LookupDevice(device);
    return d.ok() ? (*d)->attributes().incarnation() : 0;
  };
  std::vector<DeviceBase*> devices(device_mgr_->ListDevices().begin(),
                                   device_mgr_->ListDevices().end());
  auto entry = std::make_shared<ExecutorEntry>();
  entry->placement = DevicePlacementLines(*g);
  TX_ASSIGN_OR_RETURN(entry->executor,
                      PartitionedExecutor::Create(params, devices, popts, std::move(g)));
  entry->num_retvals = static_cast<int>(sig.fetches.size());
  std::lock_guard<std::mutex> l(mu_);
  if (closed_) return ClosedError();
  auto [it, inserted] = executors_.emplace(sig.key, entry);
  return it->second;
}

Status LocalSession::Run(const RunOptions& run_options,
                         const std::vector<std::pair<std::string, Tensor>>& inputs,
                         const std::vector<std::string>& output_tensor_names,
                         const std::vector<std::string>& target_node_names,
                         std::vector<Tensor>* outputs, RunMetadata* run_metadata) {
  TX_RETURN_IF_ERROR(init_status_);
  std::shared_ptr<const Graph> graph;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return ClosedError();
    graph = state_.graph();
  }
  if (graph == nullptr) {
    return errors::FailedPrecondition("Session was not created with a graph before Run()");
  }
  if (outputs == nullptr && !output_tensor_names.empty()) {
    return errors::InvalidArgument("Session::Run: outputs must not be null when fetching");
  }
  TX_ASSIGN_OR_RETURN(RunSignature sig, GraphExecutionState::MakeSignature(
                                            *graph, inputs, output_tensor_names, target_node_names));
  TX_ASSIGN_OR_RETURN(std::shared_ptr<ExecutorEntry> entry, GetOrCreateExecutor(graph, sig));
  if (run_options.log_device_placement()) {
    for (const std::string& line : entry->placement) LogPlacementLine(line);
  }

  std::vector<Tensor> args;
  args.reserve(sig.feeds.size());
  for (int i : sig.feed_input) args.push_back(inputs[i].second);
  SimpleCallFrame frame(std::move(args), entry->num_retvals);
  CancellationManager cm;
  const CancellationManager::Token close_token = close_cancellation_.NewToken();
  if (!close_cancellation_.RegisterCallback(close_token, [&cm] { cm.StartCancel(); })) {
    return ClosedError();
  }
  Executor::Args ea;
  ea.step_id = next_step_id_.fetch_add(1, std::memory_order_relaxed);
  ea.call_frame = &frame;
  ea.cancellation_manager = &cm;
  ea.inter_op_pool = inter_op_pool_.get();
  if (run_metadata != nullptr && run_options.trace_level() != RunOptions::NO_TRACE) {
    ea.step_stats = run_metadata->mutable_step_stats();
  }
  const int64_t timeout_ms = run_options.timeout_in_ms() > 0
                                 ? run_options.timeout_in_ms()
                                 : options_.config.operation_timeout_in_ms();
  Status s;
  if (timeout_ms > 0) {
    // The executor runs cheap nodes on this thread, so a watchdog thread enforces the deadline.
    std::mutex wmu;
    std::condition_variable wcv;
    bool finished = false;
    std::atomic<bool> timed_out{false};
    std::thread watchdog([&] {
      std::unique_lock<std::mutex> l(wmu);
      if (!wcv.wait_for(l, std::chrono::milliseconds(timeout_ms), [&] { return finished; })) {
        timed_out.store(true);
        cm.StartCancel();
      }
    });
    s = entry->executor->Run(ea);
    {
      std::lock_guard<std::mutex> l(wmu);
      finished = true;
    }
    wcv.notify_one();
    watchdog.join();
    if (timed_out.load() && !s.ok()) {
      s = errors::DeadlineExceeded("Step ", ea.step_id, " timed out after ", timeout_ms,
                                   " ms: ", s.message());
    }
  } else {
    s = entry->executor->Run(ea);
  }
  // Waits for Close's callback if it is running: `cm` must outlive it.
  if (!close_cancellation_.DeregisterCallback(close_token) && !s.ok()) {
    s = errors::Cancelled("Step ", ea.step_id, " was cancelled: the session was closed: ",
                          s.message());
  }
  TX_RETURN_IF_ERROR(s);

  std::vector<Tensor> rets;
  TX_RETURN_IF_ERROR(frame.ConsumeRetvals(&rets));
  if (outputs != nullptr) {
    outputs->clear();
    outputs->reserve(sig.sources.size());
    for (const RunSignature::Source& src : sig.sources) {
      outputs->push_back(src.from_feed ? inputs[src.index].second : rets[src.index]);
    }
  }
  if (run_metadata != nullptr && run_options.output_partition_graphs()) {
    for (int i = 0; i < entry->executor->num_partitions(); ++i) {
      entry->executor->partition_graph(i).ToGraphDef(run_metadata->add_partition_graphs());
    }
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<Session>> NewLocalSession(const SessionOptions& options) {
  auto session = std::make_unique<LocalSession>(options);
  TX_RETURN_IF_ERROR(session->init_status());
  return std::unique_ptr<Session>(std::move(session));
}

}  // namespace tensorflux
