// Static output shapes of a graph's nodes, by running each op's shape function in topological
// order (framework/shape_inference.h) with the values of Const inputs passed along.
#pragma once

#include <vector>

#include "tensorflux/core/tensor_shape.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux {

// table[node id][output] is the node's inferred output shape. Nodes whose shape function fails
// (or the whole table, when the graph has a cycle) get unknown shapes; removed ids get no entry.
using StaticShapeTable = std::vector<std::vector<PartialTensorShape>>;
StaticShapeTable InferStaticShapes(const Graph& g);

}  // namespace tensorflux
