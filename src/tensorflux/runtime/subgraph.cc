// The feed/fetch rewrite and pruning of runtime/subgraph.h. Every name is checked before the
// graph is touched, so an error leaves `g` unchanged.
#include "tensorflux/runtime/subgraph.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/graph/algorithm.h"
#include "tensorflux/graph/graph_def_io.h"

namespace tensorflux {
namespace {

struct ResolvedTensor {
  Node* node = nullptr;
  int index = 0;
};

// `what` is "Feed" or "Fetch". INVALID_ARGUMENT for a malformed or control name, NOT_FOUND for a
// missing node or output.
StatusOr<ResolvedTensor> Resolve(const Graph& g, const std::string& name, const char* what) {
  auto id = ParseTensorName(name);
  if (!id.ok()) {
    return errors::InvalidArgument(what, " '", name, "': ", id.status().message());
  }
  if (id->IsControl()) {
    return errors::InvalidArgument(what, " '", name,
                                   "' must name a tensor ('node' or 'node:i'), not a control "
                                   "input");
  }
  Node* n = g.FindNode(id->node);
  if (n == nullptr) {
    return errors::NotFound(what, " tensor ", id->ToString(),
                            " was not found in the graph: no node named '", id->node, "'");
  }
  if (id->index >= n->num_outputs()) {
    return errors::NotFound(what, " tensor ", id->ToString(),
                            " was not found in the graph: node '", n->name(), "' (op ",
                            n->type_string(), ") has ", n->num_outputs(), " output",
                            n->num_outputs() == 1 ? "" : "s");
  }
  return ResolvedTensor{n, id->index};
}

std::string RewriteName(const char* prefix, const ResolvedTensor& t, size_t k) {
  return absl::StrCat(prefix, t.node->name(), "_", t.index, "_", k);
}

}  // namespace

Status RewriteGraphForExecution(Graph* g, const std::vector<std::string>& feeds,
                                const std::vector<std::string>& fetches,
                                const std::vector<std::string>& targets) {
  // ---- check every name first
  std::vector<ResolvedTensor> fed(feeds.size());
  absl::flat_hash_map<std::pair<int, int>, size_t> fed_index;  // (node id, output) -> feed k
  for (size_t k = 0; k < feeds.size(); ++k) {
    TX_ASSIGN_OR_RETURN(fed[k], Resolve(*g, feeds[k], "Feed"));
    const ResolvedTensor& t = fed[k];
    if (!fed_index.emplace(std::make_pair(t.node->id(), t.index), k).second) {
      return errors::InvalidArgument("Tensor ", t.node->name(), ":", t.index,
                                     " is fed more than once");
    }
  }
  std::vector<ResolvedTensor> fetched(fetches.size());
  for (size_t k = 0; k < fetches.size(); ++k) {
    TX_ASSIGN_OR_RETURN(fetched[k], Resolve(*g, fetches[k], "Fetch"));
  }
  std::vector<Node*> roots;
  roots.reserve(fetches.size() + targets.size());
  for (const std::string& t : targets) {
    if (t.empty() || t.find(':') != std::string::npos || t[0] == '^') {
      return errors::InvalidArgument("Target '", t,
                                     "' must be a node name (without ':index' or '^')");
    }
    Node* n = g->FindNode(t);
    if (n == nullptr) {
      return errors::NotFound("Target node '", t, "' was not found in the graph");
    }
    roots.push_back(n);
  }
  // A fed tensor cannot reach a consumer that takes it by reference (a variable's Assign) when
  // that consumer runs; consumers that pruning drops do not matter (TF 1.x programs feed a
  // variable's value to read it). Kept = reachable backwards from fetches and targets across
  // every in-edge except the data edges of fed tensors.
  {
    std::vector<char> kept(g->num_node_ids(), 0);
    std::vector<Node*> stack(roots.begin(), roots.end());
    for (const ResolvedTensor& f : fetched) {
      if (!fed_index.contains(std::make_pair(f.node->id(), f.index))) stack.push_back(f.node);
    }
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      if (kept[n->id()]) continue;
      kept[n->id()] = 1;
      for (const Edge* e : n->in_edges()) {
        if (e->IsControlEdge() ||
            !fed_index.contains(std::make_pair(e->src()->id(), e->src_output()))) {
          stack.push_back(e->src());
        }
      }
    }
    for (const ResolvedTensor& t : fed) {
      for (const Edge* e : t.node->out_edges()) {
        if (e->src_output() == t.index && kept[e->dst()->id()] &&
            IsRefType(e->dst()->input_type(e->dst_input()))) {
          return errors::InvalidArgument("Cannot feed ", t.node->name(), ":", t.index,
                                         ": node '", e->dst()->name(), "' (op ",
                                         e->dst()->type_string(),
                                         ") takes it by reference at input ", e->dst_input());
        }
      }
    }
  }

  // ---- feeds: an _Arg per fed tensor takes over that output's data out-edges
  std::vector<Node*> args(feeds.size(), nullptr);
  for (size_t k = 0; k < feeds.size(); ++k) {
    const ResolvedTensor& t = fed[k];
    NodeDef def;
    def.set_name(g->NewName(RewriteName("_arg_", t, k)));
    def.set_op("_Arg");
    AddNodeAttr("T", BaseType(t.node->output_type(t.index)), &def);
    AddNodeAttr("index", static_cast<int64_t>(k), &def);
    TX_ASSIGN_OR_RETURN(args[k], g->AddNode(std::move(def)));
    std::vector<std::pair<Node*, int>> consumers;
    for (const Edge* e : t.node->out_edges()) {
      // Reference consumers keep the variable: they are pruned (checked above).
      if (e->src_output() == t.index && !IsRefType(e->dst()->input_type(e->dst_input()))) {
        consumers.emplace_back(e->dst(), e->dst_input());
      }
    }
    for (const auto& [dst, input] : consumers) {
      TX_RETURN_IF_ERROR(g->UpdateEdge(args[k], 0, dst, input));
    }
  }

  // ---- fetches: a _Retval per fetched tensor (reading the _Arg when that tensor is fed)
  for (size_t k = 0; k < fetches.size(); ++k) {
    ResolvedTensor src = fetched[k];
    const ResolvedTensor named = src;
    auto it = fed_index.find(std::make_pair(src.node->id(), src.index));
    if (it != fed_index.end()) src = ResolvedTensor{args[it->second], 0};
    NodeDef def;
    def.set_name(g->NewName(RewriteName("_retval_", named, k)));
    def.set_op("_Retval");
    AddNodeAttr("T", BaseType(src.node->output_type(src.index)), &def);
    AddNodeAttr("index", static_cast<int64_t>(k), &def);
    TX_ASSIGN_OR_RETURN(Node * retval, g->AddNode(std::move(def)));
    TX_RETURN_IF_ERROR(g->AddEdge(src.node, src.index, retval, 0).status());
    roots.push_back(retval);
  }

  // ---- keep only what the fetches and targets need (data and control edges)
  PruneForTargets(g, roots);
  return OkStatus();
}

}  // namespace tensorflux
