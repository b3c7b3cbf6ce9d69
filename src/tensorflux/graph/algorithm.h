// Graph algorithms: topological order, cycle detection, reachability and pruning.
#pragma once

#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux {

// Nodes in an order where every node comes after all its data and control inputs (Kahn's
// algorithm, ties broken by id, so the order is deterministic). INVALID_ARGUMENT naming the nodes
// on a cycle when there is one.
StatusOr<std::vector<Node*>> TopologicalOrder(const Graph& g);

// Nodes from which some node in `roots` is reachable over data and control edges (roots
// included), as a bool vector indexed by node id.
std::vector<bool> ReverseReachable(const Graph& g, const std::vector<Node*>& roots);

// Removes every node not in ReverseReachable(roots). Returns the number of nodes removed.
int PruneForTargets(Graph* g, const std::vector<Node*>& roots);

}  // namespace tensorflux
