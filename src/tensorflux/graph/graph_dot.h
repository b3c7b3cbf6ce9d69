// Graphviz DOT of a Graph (for `tensorflux inspect --dot` and debugging): one box per node
// labelled with its name and op, solid arrows for data edges (labelled "k" when they leave
// output k > 0), dashed arrows for control edges. Nodes are grouped into one cluster per device:
// the assigned device when the node has one (after placement), else the requested device;
// nodes with neither stay outside the clusters.
#pragma once

#include <map>
#include <string>

#include "tensorflux/graph.pb.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux {

std::string GraphToDot(const Graph& g, const std::string& title = "graph");

// DOT of a partitioned graph (passes/graph_partition.h: device name -> that device's GraphDef):
// one cluster per device with its partition's nodes, _Send/_Recv included, the edges of each
// partition from its NodeDef inputs (same styles as above), and a dotted arrow from each _Send
// to the _Recv of the same tensor_name (the cross-device transfer).
std::string PartitionsToDot(const std::map<std::string, GraphDef>& partitions,
                            const std::string& title = "graph");

}  // namespace tensorflux
