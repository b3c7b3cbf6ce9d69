// Graphviz DOT of a Graph (for `tensorflux inspect --dot` and debugging): one box per node
// labelled with its name and op, solid arrows for data edges (labelled "k" when they leave
// output k > 0), dashed arrows for control edges. Nodes are grouped into one cluster per device:
// the assigned device when the node has one (after placement), else the requested device;
// nodes with neither stay outside the clusters.
#pragma once

#include <string>

#include "tensorflux/graph/graph.h"

namespace tensorflux {

std::string GraphToDot(const Graph& g, const std::string& title = "graph");

}  // namespace tensorflux
