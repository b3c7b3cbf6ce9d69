// The feed/fetch rewrite and pruning a session does before running a graph (TF's
// subgraph::RewriteGraphForExecution, with _Arg/_Retval nodes):
// - each fed tensor "n:i" gets an _Arg node (attr index = its position in `feeds`, T = the base
//   type) and only the data out-edges of output i of n move to it; n itself stays, so control
//   edges still pull it in. Consumers that take n:i by reference (Assign of a variable) stay on
//   n: feeding a variable's value is fine unless such a consumer survives pruning
//   (INVALID_ARGUMENT naming it);
// - each fetched tensor gets a _Retval node (index = position in `fetches`);
// - the graph is pruned to the nodes the _Retval nodes and `targets` need over data and control
//   edges.
#pragma once

#include <string>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux {

// NOT_FOUND for a feed, fetch or target naming a missing node or output index;
// INVALID_ARGUMENT for a malformed name, a tensor fed twice, or a fed tensor that a kept node
// takes by reference.
Status RewriteGraphForExecution(Graph* g, const std::vector<std::string>& feeds,
                                const std::vector<std::string>& fetches,
                                const std::vector<std::string>& targets);

}  // namespace tensorflux
