// Topological order (Kahn's algorithm), reverse reachability and pruning (algorithm.h).
#include "tensorflux/graph/algorithm.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tensorflux {
namespace {

// Among the nodes Kahn's algorithm could not order, each has an in-edge from another unordered
// node, so walking such edges backwards from any of them must revisit a node: that loop is a
// cycle. Returns its names in edge direction, first node repeated at the end ("a -> b -> a").
std::string DescribeCycle(const Graph& g, const std::vector<int>& pending) {
  int start = -1;
  for (int id = 0; id < static_cast<int>(pending.size()); ++id) {
    if (pending[id] > 0) {
      start = id;
      break;
    }
  }
  if (start < 0) return "";
  std::vector<int> pos(pending.size(), -1);
  std::vector<const Node*> path;
  const Node* n = g.FindNodeId(start);
  while (n != nullptr && pos[n->id()] < 0) {
    pos[n->id()] = static_cast<int>(path.size());
    path.push_back(n);
    const Node* next = nullptr;
    for (const Edge* e : n->in_edges()) {
      if (pending[e->src()->id()] > 0) {
        next = e->src();
        break;
      }
    }
    n = next;
  }
  if (n == nullptr) return "";  // unreachable for a consistent graph
  // path[pos[n]..] was walked backwards; print it forwards, starting at its smallest id.
  std::vector<const Node*> cycle(path.rbegin(), path.rend() - pos[n->id()]);
  auto first = std::min_element(cycle.begin(), cycle.end(),
                                [](const Node* a, const Node* b) { return a->id() < b->id(); });
  std::rotate(cycle.begin(), first, cycle.end());
  std::vector<std::string> names;
  for (const Node* c : cycle) names.push_back(c->name());
  names.push_back(names.front());
  return absl::StrJoin(names, " -> ");
}

}  // namespace

StatusOr<std::vector<Node*>> TopologicalOrder(const Graph& g) {
  const int n = g.num_node_ids();
  std::vector<int> pending(n, 0);
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int id = 0; id < n; ++id) {
    const Node* node = g.FindNodeId(id);
    if (node == nullptr) continue;
    pending[id] = static_cast<int>(node->in_edges().size());
    if (pending[id] == 0) ready.push(id);
  }
  std::vector<Node*> order;
  order.reserve(g.num_nodes());
  while (!ready.empty()) {
    const int id = ready.top();
    ready.pop();
    Node* node = g.FindNodeId(id);
    order.push_back(node);
    for (const Edge* e : node->out_edges()) {
      if (--pending[e->dst()->id()] == 0) ready.push(e->dst()->id());
    }
  }
  if (static_cast<int>(order.size()) != g.num_nodes()) {
    const int left = g.num_nodes() - static_cast<int>(order.size());
    return errors::InvalidArgument("Graph contains a cycle: ", DescribeCycle(g, pending), " (",
                                   left, " node", left == 1 ? "" : "s",
                                   " cannot be ordered)");
  }
  return order;
}

std::vector<bool> ReverseReachable(const Graph& g, const std::vector<Node*>& roots) {
  std::vector<bool> seen(g.num_node_ids(), false);
  std::vector<const Node*> stack;
  for (const Node* r : roots) {
    if (r != nullptr && !seen[r->id()]) {
      seen[r->id()] = true;
      stack.push_back(r);
    }
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->in_edges()) {
      const Node* src = e->src();
      if (!seen[src->id()]) {
        seen[src->id()] = true;
        stack.push_back(src);
      }
    }
  }
  return seen;
}

int PruneForTargets(Graph* g, const std::vector<Node*>& roots) {
  const std::vector<bool> keep = ReverseReachable(*g, roots);
  int removed = 0;
  for (int id = 0; id < g->num_node_ids(); ++id) {
    Node* n = g->FindNodeId(id);
    if (n != nullptr && !keep[id]) {
      g->RemoveNode(n);
      ++removed;
    }
  }
  return removed;
}

}  // namespace tensorflux
