#include "tensorflux/runtime/graph_execution_state.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/passes/graph_optimizer.h"
#include "tensorflux/passes/placer.h"
#include "tensorflux/runtime/subgraph.h"

namespace tensorflux {
namespace {

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

void LogPlacementLine(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

GraphExecutionState::GraphExecutionState(const ConfigProto& config) : config_(config) {}

Status GraphExecutionState::Create(const GraphDef& graph) {
  std::lock_guard<std::mutex> l(mu_);
  if (graph_ != nullptr) {
    return errors::FailedPrecondition(
        "Session::Create: this session already has a graph; use Extend to add nodes");
  }
  if (graph.node_size() == 0) return OkStatus();  // nothing to create yet (TF does the same)
  return ExtendLocked(graph);
}

Status GraphExecutionState::Extend(const GraphDef& graph) {
  std::lock_guard<std::mutex> l(mu_);
  return ExtendLocked(graph);
}

Status GraphExecutionState::ExtendLocked(const GraphDef& ext) {
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
  graph_def_ = std::move(merged);
  graph_ = std::shared_ptr<const Graph>(std::move(g));
  return OkStatus();
}

std::shared_ptr<const Graph> GraphExecutionState::graph() const {
  std::lock_guard<std::mutex> l(mu_);
  return graph_;
}

FunctionDefLibrary GraphExecutionState::library() const {
  std::lock_guard<std::mutex> l(mu_);
  return graph_def_.library();
}

void GraphExecutionState::Reset() {
  {
    std::lock_guard<std::mutex> l(mu_);
    graph_.reset();
    graph_def_.Clear();
  }
  std::lock_guard<std::mutex> pl(placement_mu_);
  stateful_placements_.clear();
  whole_graph_placed_.reset();
}

StatusOr<RunSignature> GraphExecutionState::MakeSignature(
    const Graph& graph, const std::vector<std::pair<std::string, Tensor>>& inputs,
    const std::vector<std::string>& output_tensor_names,
    const std::vector<std::string>& target_node_names) {
  RunSignature sig;
  // Feeds: canonical "node:i" names, checked, then sorted for the cache key.
  std::vector<std::pair<std::string, int>> feed_order;  // (canonical name, index in inputs)
  feed_order.reserve(inputs.size());
  absl::flat_hash_map<std::string, int> fed;  // canonical name -> index in inputs
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
    TX_ASSIGN_OR_RETURN(auto resolved, ResolveTensor(graph, inputs[i].first, "Feed"));
    TX_RETURN_IF_ERROR(CheckFeed(resolved.first, resolved.second, inputs[i].second));
    std::string canon = resolved.second.ToString();
    if (!fed.emplace(canon, i).second) {
      return errors::InvalidArgument("Tensor '", canon, "' is fed more than once");
    }
    feed_order.emplace_back(std::move(canon), i);
  }
  std::sort(feed_order.begin(), feed_order.end());
  for (auto& [name, index] : feed_order) {
    sig.feeds.push_back(name);
    sig.feed_input.push_back(index);
  }

  // Fetches: a fed tensor comes straight from the feed; the others become unique _Retvals.
  absl::flat_hash_map<std::string, int> retval_of;
  for (const std::string& name : output_tensor_names) {
    TX_ASSIGN_OR_RETURN(auto resolved, ResolveTensor(graph, name, "Fetch"));
    std::string canon = resolved.second.ToString();
    auto f = fed.find(canon);
    if (f != fed.end()) {
      sig.sources.push_back({true, f->second});
      continue;
    }
    auto [it, inserted] = retval_of.emplace(canon, static_cast<int>(sig.fetches.size()));
    if (inserted) sig.fetches.push_back(canon);
    sig.sources.push_back({false, it->second});
  }
  sig.targets = target_node_names;
  std::sort(sig.targets.begin(), sig.targets.end());
  sig.targets.erase(std::unique(sig.targets.begin(), sig.targets.end()), sig.targets.end());
  sig.key = absl::StrCat(absl::StrJoin(sig.feeds, ","), "\x01", absl::StrJoin(sig.fetches, ","),
                         "\x01", absl::StrJoin(sig.targets, ","));
  return sig;
}

StatusOr<std::unique_ptr<Graph>> GraphExecutionState::BuildStepGraph(
    const std::shared_ptr<const Graph>& graph, const RunSignature& sig,
    const std::vector<Device*>& devices) {
  std::unique_ptr<Graph> g = graph->Clone();
  TX_RETURN_IF_ERROR(RewriteGraphForExecution(g.get(), sig.feeds, sig.fetches, sig.targets));
  TX_RETURN_IF_ERROR(OptimizeGraphForRun(config_.graph_options(), sig.feeds, sig.fetches,
                                         sig.targets, devices, &g));
  TX_RETURN_IF_ERROR(PlaceStepGraph(g.get(), graph, devices));
  return g;
}

Status GraphExecutionState::PlaceStepGraph(Graph* g, const std::shared_ptr<const Graph>& full,
                                           const std::vector<Device*>& devices) {
  PlacerOptions opts;
  opts.allow_soft_placement = !config_.has_allow_soft_placement() || config_.allow_soft_placement();
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
      PlaceStatefulNodes(*full, devices, opts, &stateful_placements_).IgnoreError();
      whole_graph_placed_ = full;
    }
    for (Node* n : g->nodes()) {
      auto it = stateful_placements_.find(n->name());
      if (it != stateful_placements_.end()) n->set_assigned_device_name(it->second);
    }
    TX_RETURN_IF_ERROR(PlaceGraph(g, devices, opts, &notes, &ignored));
    for (const Node* n : g->nodes()) {
      if (n->IsStateful() && !n->IsArg() && !n->IsRetval()) {
        stateful_placements_[n->name()] = n->assigned_device_name();
      }
    }
  }
  // A graph recorded for other devices (a GPU-trained model on a CPU) would give a note per
  // node: the first few say why, a count says how many more (all with log_device_placement).
  constexpr size_t kMaxNotes = 5;
  const bool all = config_.log_device_placement();
  for (size_t i = 0; i < notes.size() && (all || i < kMaxNotes); ++i) LogPlacementLine(notes[i]);
  if (!all && notes.size() > kMaxNotes) {
    LogPlacementLine(absl::StrCat("... and ", notes.size() - kMaxNotes,
                                  " more nodes placed by soft placement away from their requested "
                                  "devices (ConfigProto.log_device_placement lists them all)"));
  }
  if (all) {
    for (const std::string& line : ignored) LogPlacementLine(line);
    for (const std::string& line : DevicePlacementLines(*g)) LogPlacementLine(line);
  }
  return OkStatus();
}

}  // namespace tensorflux
