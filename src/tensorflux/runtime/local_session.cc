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

// Placement logs (log_device_placement, soft placement notes) go to stderr, as TF's do.
void LogLine(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

// Resolves a feed or fetch name against the graph. NOT_FOUND when the node or output is missing.
StatusOr<std::pair<const Node*, TensorId>> ResolveTensor(const Graph& g, const std::string& name,
                                                         const char* what) {
  auto parsed = ParseTensorName(name);
  if (!parsed.ok()) {
    return errors::InvalidArgument(what, " '", name, "' is not a valid tensor name: ",
                                   parsed.status().message());
  }
  TensorId id = *std::move(parsed);
  if (id.IsControl()) {
    return errors::InvalidArgument(what, " '", name,
                                   "' names a control input; it must name a tensor \"node:i\"");
  }
  const Node* n = g.FindNode(id.node);
  if (n == nullptr) {
    return errors::NotFound(what, " tensor '", name, "' not found: the graph has no node '",
                            id.node, "'");
  }
  if (id.index >= n->num_outputs()) {
    return errors::NotFound(what, " tensor '", name, "' not found: node '", id.node, "' (op ",
                            n->type_string(), ") has ", n->num_outputs(), " outputs");
  }
  return std::make_pair(n, std::move(id));
}

Status CheckFeed(const Node* n, const TensorId& id, const Tensor& t) {
  const std::string name = id.ToString();
  const DataType want = BaseType(n->output_type(id.index));
  if (!t.IsInitialized()) {
    return errors::InvalidArgument("Feed for tensor '", name, "' is an uninitialized tensor");
  }
  if (t.dtype() != want) {
    return errors::InvalidArgument("Feed for tensor '", name, "' must be a ",
                                   DataTypeString(want), " tensor, got ",
                                   DataTypeString(t.dtype()));
  }
  if (n->IsPlaceholder() || n->type_string() == "PlaceholderWithDefault") {
    PartialTensorShape declared;
    if (n->attr("shape") != nullptr && GetNodeAttr(n->def(), "shape", &declared).ok() &&
        declared.dims() > 0 && !declared.IsCompatibleWith(PartialTensorShape(t.shape()))) {
      return errors::InvalidArgument("Feed for tensor '", name, "' has shape ",
                                     t.shape().DebugString(),
                                     ", which is incompatible with the shape ",
                                     declared.DebugString(), " that placeholder '", n->name(),
                                     "' declares");
    }
  }
  return OkStatus();
}

}  // namespace

LocalSession::LocalSession(const SessionOptions& options) : options_(options) {
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
    LogLine("Device mapping:");
    for (Device* d : device_mgr_->ListDevices()) {
      LogLine(absl::StrCat(d->name(), " -> ", d->attributes().physical_device_desc()));
    }
  }
  const int inter = options_.config.inter_op_parallelism_threads();
  if (inter >= 0) {
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
  if (graph_ != nullptr) {
    return errors::FailedPrecondition(
        "Session::Create: this session already has a graph; use Extend to add nodes");
  }
  if (graph.node_size() == 0) return OkStatus();  // nothing to create yet (TF does the same)
  return ExtendLocked(graph);
}

Status LocalSession::Extend(const GraphDef& graph) {
  std::lock_guard<std::mutex> l(mu_);
  TX_RETURN_IF_ERROR(init_status_);
  if (closed_) return ClosedError();
  return ExtendLocked(graph);
}

Status LocalSession::ExtendLocked(const GraphDef& ext) {
  GraphDef merged = graph_def_;
  if (graph_ != nullptr) {
    for (const NodeDef& n : ext.node()) {
      if (graph_->FindNode(n.name()) != nullptr) {
        return errors::InvalidArgument("GraphDef argument to Extend includes node '", n.name(),
                                       "', which was created by a previous call to Create or "
                                       "Extend in this session");
      }
    }
    const int have = graph_def_.versions().producer();
    const int got = ext.versions().producer();
    if (have != 0 && got != 0 && have != got) {
      return errors::InvalidArgument("Cannot extend a GraphDef of producer version ", have,
                                     " with one of producer version ", got);
    }
    if (have == 0 && ext.has_versions()) *merged.mutable_versions() = ext.versions();
    for (const NodeDef& n : ext.node()) *merged.add_node() = n;
    merged.mutable_library()->MergeFrom(ext.library());
  } else {
    merged = ext;
  }
  TX_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, GraphFromGraphDef(merged));
  function_runtime_->AddLibrary(merged.library());
  graph_def_ = std::move(merged);
  graph_ = std::shared_ptr<const Graph>(std::move(g));
  // Cached executors stay valid: new nodes cannot be inputs of existing ones.
  return OkStatus();
}

Status LocalSession::Close() {
  std::lock_guard<std::mutex> l(mu_);
  closed_ = true;
  executors_.clear();
  {
    std::lock_guard<std::mutex> pl(placement_mu_);
    stateful_placements_.clear();
    whole_graph_placed_.reset();
  }
  graph_.reset();
  graph_def_.Clear();
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

Status LocalSession::PlaceStepGraph(Graph* g, const std::shared_ptr<const Graph>& full) {
  PlacerOptions opts;
  opts.allow_soft_placement =
      !options_.config.has_allow_soft_placement() || options_.config.allow_soft_placement();
  std::vector<std::string> notes, ignored;
  {
    std::lock_guard<std::mutex> l(placement_mu_);
    // A stateful node not placed yet: place the whole graph once (per graph version) so that
    // its device does not depend on which signature ran first. When the whole graph cannot be
    // placed (a node elsewhere lacks a kernel, conflicting requests without soft placement),
    // the step graph is placed alone and reports its own errors.
    const std::vector<Node*> nodes = g->nodes();
    const bool unplaced = std::any_of(nodes.begin(), nodes.end(), [&](const Node* n) {
      return n->IsStateful() && !n->IsArg() && !n->IsRetval() &&
             !stateful_placements_.contains(n->name());
    });
    if (unplaced && full != whole_graph_placed_) {
      PlaceStatefulNodes(*full, device_mgr_->ListDevices(), opts, &stateful_placements_)
          .IgnoreError();
      whole_graph_placed_ = full;
    }
    for (Node* n : g->nodes()) {
      auto it = stateful_placements_.find(n->name());
      if (it != stateful_placements_.end()) n->set_assigned_device_name(it->second);
    }
    TX_RETURN_IF_ERROR(PlaceGraph(g, device_mgr_->ListDevices(), opts, &notes, &ignored));
    for (const Node* n : g->nodes()) {
      if (n->IsStateful() && !n->IsArg() && !n->IsRetval()) {
        stateful_placements_[n->name()] = n->assigned_device_name();
      }
    }
  }
  // A graph recorded for other devices (a GPU-trained model on a CPU) would give a note per
  // node: the first few say why, a count says how many more (all with log_device_placement).
  constexpr size_t kMaxNotes = 5;
  const bool all = options_.config.log_device_placement();
  for (size_t i = 0; i < notes.size() && (all || i < kMaxNotes); ++i) LogLine(notes[i]);
  if (!all && notes.size() > kMaxNotes) {
    LogLine(absl::StrCat("... and ", notes.size() - kMaxNotes,
                         " more nodes placed by soft placement away from their requested "
                         "devices (ConfigProto.log_device_placement lists them all)"));
  }
  if (options_.config.log_device_placement()) {
    for (const std::string& line : ignored) LogLine(line);
    for (const std::string& line : DevicePlacementLines(*g)) LogLine(line);
  }
  return OkStatus();
}

StatusOr<std::shared_ptr<LocalSession::ExecutorEntry>> LocalSession::GetOrCreateExecutor(
    const std::shared_ptr<const Graph>& graph, const std::string& key,
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return ClosedError();
    auto it = executors_.find(key);
    if (it != executors_.end()) return it->second;
  }
  // Build outside the lock; if another thread built the same signature meanwhile, keep theirs.
  std::unique_ptr<Graph> g = graph->Clone();
  TX_RETURN_IF_ERROR(RewriteGraphForExecution(g.get(), feeds, fetches, targets));
  TX_RETURN_IF_ERROR(OptimizeGraphForRun(options_.config.graph_options(), feeds, fetches, targets,
                                         device_mgr_->ListDevices(), &g));
  TX_RETURN_IF_ERROR(PlaceStepGraph(g.get(), graph));
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
  entry->num_retvals = static_cast<int>(fetches.size());
  std::lock_guard<std::mutex> l(mu_);
  if (closed_) return ClosedError();
  auto [it, inserted] = executors_.emplace(key, entry);
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
    graph = graph_;
  }
  if (graph == nullptr) {
    return errors::FailedPrecondition("Session was not created with a graph before Run()");
  }
  if (outputs == nullptr && !output_tensor_names.empty()) {
    return errors::InvalidArgument("Session::Run: outputs must not be null when fetching");
  }

  // Feeds: canonical "node:i" names, checked, then sorted for the cache key.
  const int num_feeds = static_cast<int>(inputs.size());
  std::vector<std::pair<std::string, int>> feed_order;  // (canonical name, index in inputs)
  feed_order.reserve(num_feeds);
  absl::flat_hash_map<std::string, int> fed;  // canonical name -> index in inputs
  for (int i = 0; i < num_feeds; ++i) {
    TX_ASSIGN_OR_RETURN(auto resolved, ResolveTensor(*graph, inputs[i].first, "Feed"));
    TX_RETURN_IF_ERROR(CheckFeed(resolved.first, resolved.second, inputs[i].second));
    std::string canon = resolved.second.ToString();
    if (!fed.emplace(canon, i).second) {
      return errors::InvalidArgument("Tensor '", canon, "' is fed more than once");
    }
    feed_order.emplace_back(std::move(canon), i);
  }
  std::sort(feed_order.begin(), feed_order.end());

  // Fetches: a fed tensor comes straight from the feed; the others become unique _Retvals.
  struct Source {
    bool from_feed;
    int index;
  };
  std::vector<Source> sources;
  sources.reserve(output_tensor_names.size());
  std::vector<std::string> fetches;
  absl::flat_hash_map<std::string, int> retval_of;
  for (const std::string& name : output_tensor_names) {
    TX_ASSIGN_OR_RETURN(auto resolved, ResolveTensor(*graph, name, "Fetch"));
    std::string canon = resolved.second.ToString();
    auto f = fed.find(canon);
    if (f != fed.end()) {
      sources.push_back({true, f->second});
      continue;
    }
    auto [it, inserted] = retval_of.emplace(canon, static_cast<int>(fetches.size()));
    if (inserted) fetches.push_back(canon);
    sources.push_back({false, it->second});
  }
  std::vector<std::string> targets = target_node_names;
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());

  std::vector<std::string> feeds;
  feeds.reserve(feed_order.size());
  for (auto& f : feed_order) feeds.push_back(f.first);
  std::string key = absl::StrCat(absl::StrJoin(feeds, ","), "\x01", absl::StrJoin(fetches, ","),
                                 "\x01", absl::StrJoin(targets, ","));
  TX_ASSIGN_OR_RETURN(std::shared_ptr<ExecutorEntry> entry,
                      GetOrCreateExecutor(graph, key, feeds, fetches, targets));
  if (run_options.log_device_placement()) {
    for (const std::string& line : entry->placement) LogLine(line);
  }

  std::vector<Tensor> args;
  args.reserve(feed_order.size());
  for (auto& f : feed_order) args.push_back(inputs[f.second].second);
  SimpleCallFrame frame(std::move(args), entry->num_retvals);
  CancellationManager cm;
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
  TX_RETURN_IF_ERROR(s);

  std::vector<Tensor> rets;
  TX_RETURN_IF_ERROR(frame.ConsumeRetvals(&rets));
  if (outputs != nullptr) {
    outputs->clear();
    outputs->reserve(sources.size());
    for (const Source& src : sources) {
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

StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options) {
  if (!options.target.empty()) {
    return errors::InvalidArgument("No session implementation for target '", options.target,
                                   "': only the in-process target \"\" is supported");
  }
  auto session = std::make_unique<LocalSession>(options);
  TX_RETURN_IF_ERROR(session->init_status());
  return std::unique_ptr<Session>(std::move(session));
}

}  // namespace tensorflux
