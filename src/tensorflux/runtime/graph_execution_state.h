// GraphExecutionState: the master's graph logic shared by LocalSession (in process) and the
// distributed MasterSession (distributed/master_session.h), after TF's GraphExecutionState.
//
// It keeps a session's GraphDef (Create, then Extend with new node names), validates a run's
// feeds, fetches and targets into a RunSignature (canonical names and the executor cache key),
// and builds the step graph of a signature: feed/fetch rewrite and pruning
// (runtime/subgraph.h: _Arg/_Retval), the graph passes (passes/graph_optimizer.h) and placement
// over the devices it is given (passes/placer.h). Stateful nodes (variables, iterators) keep the
// device of their first placement for the state's life, across signatures and Extend; that first
// placement is the whole graph's (every reader, assign and optimizer update of the variable
// taken into account), made when a step first needs a stateful node not placed yet, so the
// order in which signatures run does not change where a variable lives.
//
// Errors (the caller returns them from Session::Create/Extend/Run):
// - Create: FAILED_PRECONDITION when a graph exists; the import's error (NOT_FOUND unknown op,
//   INVALID_ARGUMENT bad node or cycle).
// - Extend: INVALID_ARGUMENT for a node name already in the graph or a different producer
//   version; the import's error.
// - MakeSignature: NOT_FOUND for a feed or fetch naming a missing node or output;
//   INVALID_ARGUMENT for a malformed name, a control input ("^n"), a tensor fed twice, a feed
//   of the wrong dtype ("Feed for tensor 'x:0' must be a float tensor, got int32") or of a shape
//   incompatible with its Placeholder's declared shape (a placeholder declared scalar accepts
//   any shape, as TF's C API does).
// - BuildStepGraph: RewriteGraphForExecution's, the passes' and the Placer's errors.
// Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tensorflux/config.pb.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/devices/device.h"
#include "tensorflux/graph.pb.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux {

// A run's feeds, fetches and targets in canonical form.
struct RunSignature {
  // Fed tensors "node:i", sorted; feed_input[k] is the index in the run's inputs of feeds[k].
  std::vector<std::string> feeds;
  std::vector<int> feed_input;
  // Tensors the step graph computes and returns ("node:i", unique, in first-fetch order); a
  // fetch of a fed tensor is answered from the feed and is not among them.
  std::vector<std::string> fetches;
  // Per requested fetch: from_feed (index into the run's inputs) or an index into `fetches`.
  struct Source {
    bool from_feed;
    int index;
  };
  std::vector<Source> sources;
  // Target node names, sorted, unique.
  std::vector<std::string> targets;
  // feeds, fetches and targets joined: the key of a cached step graph.
  std::string key;
};

class GraphExecutionState {
 public:
  explicit GraphExecutionState(const ConfigProto& config);

  Status Create(const GraphDef& graph);
  Status Extend(const GraphDef& graph);

  // The current graph; null before a graph is created. Extend swaps in a new Graph; a graph
  // taken earlier stays valid (and its step graphs too: new nodes cannot feed old ones).
  std::shared_ptr<const Graph> graph() const;
  // The merged function library (GraphDef.library) of every Create/Extend.
  FunctionDefLibrary library() const;

  // Checks the run against `graph` (see above).
  static StatusOr<RunSignature> MakeSignature(
      const Graph& graph, const std::vector<std::pair<std::string, Tensor>>& inputs,
      const std::vector<std::string>& output_tensor_names,
      const std::vector<std::string>& target_node_names);

  // The step graph of `sig`: `graph` (a graph() of this state) cloned, rewritten (_Arg i =
  // sig.feeds[i], _Retval j = sig.fetches[j]), optimized for `devices` and placed on them
  // (`devices` in preference order; stateful placements pinned). Placement notes go to stderr as
  // LocalSession documents.
  StatusOr<std::unique_ptr<Graph>> BuildStepGraph(const std::shared_ptr<const Graph>& graph,
                                                  const RunSignature& sig,
                                                  const std::vector<Device*>& devices);

  // Forgets the graph and the stateful placements (Session::Close).
  void Reset();

 private:
  Status ExtendLocked(const GraphDef& graph);  // mu_ held
  // Places `g` (a step graph of `full`), pinning stateful nodes where the whole graph's
  // placement put them (passes/placer.h: PlaceStatefulNodes).
  Status PlaceStepGraph(Graph* g, const std::shared_ptr<const Graph>& full,
                        const std::vector<Device*>& devices);

  const ConfigProto config_;
  mutable std::mutex mu_;  // guards graph_def_, graph_
  GraphDef graph_def_;
  std::shared_ptr<const Graph> graph_;
  std::mutex placement_mu_;  // serializes placements; guards stateful_placements_
  absl::flat_hash_map<std::string, std::string> stateful_placements_;  // node -> device
  std::shared_ptr<const Graph> whole_graph_placed_;  // the graph PlaceStatefulNodes last had
};

// Writes `line` to stderr (placement logs, as TF's go there).
void LogPlacementLine(const std::string& line);

}  // namespace tensorflux
