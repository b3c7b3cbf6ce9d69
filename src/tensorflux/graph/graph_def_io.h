// GraphDef <-> Graph, and parsing of tensor and input names.
#pragma once

#include <string>
#include <string_view>

#include "tensorflux/core/status.h"
#include "tensorflux/graph.pb.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux {

// "node:3" -> {node, 3}; "node" -> {node, 0}; "^node" -> {node, kControlSlot}.
struct TensorId {
  std::string node;
  int index = 0;
  bool IsControl() const { return index == kControlSlot; }
  std::string ToString() const;  // "node:3", "^node"
  bool operator==(const TensorId& o) const { return node == o.node && index == o.index; }
};
// INVALID_ARGUMENT for an empty name, a bad index ("x:-1", "x:a"), or "^" with an index.
StatusOr<TensorId> ParseTensorName(std::string_view name);

struct ImportGraphDefOptions {
  // Prepended as "prefix/" to every imported node name (and to references between them).
  std::string prefix;
  // When importing into a non-empty graph, inputs may also name existing nodes.
  bool allow_existing_inputs = true;
};

// Builds `g` (empty, or holding nodes to import alongside) from `gdef`:
// - every op must be registered (NOT_FOUND "Op type not registered 'X' in node 'n'");
// - NodeDefs get their defaults and are validated (missing or ill-typed attrs);
// - inputs name existing nodes and outputs ("node", "node:i", "^node"); control inputs after data
//   inputs; data input count and edge types match the OpDef;
// - legacy rules: a Placeholder(WithDefault) `shape {}` attr with versions.producer < 22 means
//   unknown shape;
// - the graph must be acyclic (INVALID_ARGUMENT naming a node on the cycle).
// Errors are INVALID_ARGUMENT (NOT_FOUND for unknown ops) naming the node.
Status ImportGraphDef(const ImportGraphDefOptions& opts, const GraphDef& gdef, Graph* g);

// Convenience: a new graph from `gdef` with default options.
StatusOr<std::unique_ptr<Graph>> GraphFromGraphDef(const GraphDef& gdef);

// Reads a binary (.pb) or text (.pbtxt) GraphDef. Text format is chosen by the ".pbtxt"/".txt"
// extension, otherwise binary is tried first and text second. NOT_FOUND for a missing file,
// DATA_LOSS / INVALID_ARGUMENT for a file that parses as neither.
StatusOr<GraphDef> ReadGraphDefFile(const std::string& path);

}  // namespace tensorflux
