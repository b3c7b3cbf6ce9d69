// The in-memory graph: nodes (one per NodeDef, with its validated OpDef and flattened input and
// output types), data edges (src:output -> dst:input) and control edges (src -> dst, ordering
// only). Import from and export to GraphDef live in graph_def_io.h; algorithms in algorithm.h.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/types.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/function.pb.h"
#include "tensorflux/graph.pb.h"
#include "tensorflux/node_def.pb.h"
#include "tensorflux/versions.pb.h"

namespace tensorflux {

class Node;

// The control-edge slot marker.
inline constexpr int kControlSlot = -1;

class Edge {
 public:
  Node* src() const { return src_; }
  Node* dst() const { return dst_; }
  int id() const { return id_; }
  // kControlSlot for control edges.
  int src_output() const { return src_output_; }
  int dst_input() const { return dst_input_; }
  bool IsControlEdge() const { return src_output_ == kControlSlot; }
  std::string DebugString() const;

 private:
  friend class Graph;
  Node* src_ = nullptr;
  Node* dst_ = nullptr;
  int id_ = -1;
  int src_output_ = 0;
  int dst_input_ = 0;
};

class Node {
 public:
  int id() const { return id_; }
  const std::string& name() const { return def_.name(); }
  const std::string& type_string() const { return def_.op(); }
  // The NodeDef with attr defaults filled in. Its `input` field is NOT kept in sync with edges;
  // Graph::ToGraphDef rebuilds inputs from edges.
  const NodeDef& def() const { return def_; }
  const OpDef& op_def() const { return *op_def_; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  const DataTypeVector& input_types() const { return input_types_; }
  const DataTypeVector& output_types() const { return output_types_; }

  const std::vector<const Edge*>& in_edges() const { return in_edges_; }
  const std::vector<const Edge*>& out_edges() const { return out_edges_; }
  // The data edge into input `idx`; NOT_FOUND when unconnected.
  StatusOr<const Edge*> input_edge(int idx) const;

  const std::string& requested_device() const { return def_.device(); }
  const std::string& assigned_device_name() const { return assigned_device_; }
  void set_assigned_device_name(std::string d) { assigned_device_ = std::move(d); }
  void set_requested_device(std::string d) { def_.set_device(std::move(d)); }

  bool IsStateful() const { return op_def_->is_stateful(); }
  bool IsArg() const { return type_string() == "_Arg"; }
  bool IsRetval() const { return type_string() == "_Retval"; }
  bool IsConstant() const { return type_string() == "Const"; }
  bool IsPlaceholder() const { return type_string() == "Placeholder"; }

  // Replaces or adds an attr (for graph rewrites).
  template <typename T>
  void AddAttr(std::string_view name, T&& value) {
    AddNodeAttr(name, std::forward<T>(value), &def_);
  }
  const AttrValue* attr(std::string_view name) const { return FindAttr(def_, name); }

  std::string DebugString() const;

 private:
  friend class Graph;
  int id_ = -1;
  NodeDef def_;
  const OpDef* op_def_ = nullptr;
  DataTypeVector input_types_;
  DataTypeVector output_types_;
  std::vector<const Edge*> in_edges_;
  std::vector<const Edge*> out_edges_;
  std::string assigned_device_;
};

class Graph {
 public:
  explicit Graph(const OpRegistry* registry = OpRegistry::Global());
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Adds a node for `def` (its `input` list is ignored: add edges separately). Fills attr
  // defaults, validates attrs against the OpDef and computes input/output types.
  // NOT_FOUND for an unknown op; INVALID_ARGUMENT for a duplicate name or bad attrs; messages
  // name the node and op.
  StatusOr<Node*> AddNode(NodeDef def);
  // Removes the node and all its edges.
  void RemoveNode(Node* node);

  // Adds a data edge src:src_output -> dst:dst_input. INVALID_ARGUMENT when an index is out of
  // range, the input is already connected, or the types are incompatible (a ref output may feed a
  // non-ref input of the same base type).
  StatusOr<const Edge*> AddEdge(Node* src, int src_output, Node* dst, int dst_input);
  // Control edge src -> dst; a duplicate is not added twice (returns the existing edge).
  const Edge* AddControlEdge(Node* src, Node* dst);
  void RemoveEdge(const Edge* e);
  // Reconnects dst:dst_input to new_src:new_src_output.
  Status UpdateEdge(Node* new_src, int new_src_output, Node* dst, int dst_input);

  int num_nodes() const { return num_nodes_; }
  int num_edges() const { return num_edges_; }
  // Upper bound on node ids (for id-indexed arrays).
  int num_node_ids() const { return static_cast<int>(nodes_.size()); }
  // nullptr for removed ids.
  Node* FindNodeId(int id) const { return nodes_[id]; }
  Node* FindNode(std::string_view name) const;
  // Live nodes in id order.
  std::vector<Node*> nodes() const;

  const VersionDef& versions() const { return versions_; }
  void set_versions(const VersionDef& v) { versions_ = v; }
  const FunctionDefLibrary& library() const { return library_; }
  FunctionDefLibrary* mutable_library() { return &library_; }
  const OpRegistry* op_registry() const { return registry_; }

  // A node name not yet used, "prefix" or "prefix_N".
  std::string NewName(std::string_view prefix);

  // Nodes in id order; inputs are data inputs by dst_input ("src" for output 0, "src:k"
  // otherwise) followed by control inputs ("^src").
  void ToGraphDef(GraphDef* out) const;

  // Deep copy (same node names and ids' relative order).
  std::unique_ptr<Graph> Clone() const;

 private:
  const OpRegistry* registry_;
  std::vector<Node*> nodes_;  // by id; nullptr for removed
  std::vector<std::unique_ptr<Node>> node_storage_;
  std::vector<std::unique_ptr<Edge>> edge_storage_;
  std::vector<Edge*> edges_;  // by id; nullptr for removed
  absl::flat_hash_map<std::string, Node*> by_name_;
  int num_nodes_ = 0;
  int num_edges_ = 0;
  VersionDef versions_;
  FunctionDefLibrary library_;
};

}  // namespace tensorflux
