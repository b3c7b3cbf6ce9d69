// Scope: where C++ op wrappers put their nodes (TF's cc/framework/scope.h).
//
// A Scope holds a Graph shared by every Scope derived from the same root, a name prefix, the
// device to request, the control dependencies to add, and a Status shared by the whole tree:
//
//   Scope root = Scope::NewRootScope();
//   Scope layer = root.NewSubScope("layer1");           // nodes named "layer1/..."
//   auto w = ops::Const(layer.WithOpName("w"), {{1.f}});  // node "layer1/w"
//   auto y = ops::MatMul(layer.WithDevice("/cpu:0"), x, w);  // node "layer1/MatMul"
//
// Names are made unique per graph: a second "MatMul" in the same name scope becomes "MatMul_1",
// and a second NewSubScope("layer1") gives "layer1_1". Errors accumulate: the first failure
// (a bad attr, a dtype mismatch, a shape-inference error, an input from a failed op) is stored
// in the shared status, and every later op built from any Scope of the tree does nothing and
// yields empty Outputs. Check status() once at the end. Scopes are cheap to copy; they are not
// thread-safe (build a graph from one thread).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "tensorflux/cc/ops.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor_shape.h"
#include "tensorflux/graph.pb.h"

namespace tensorflux {

class Graph;

namespace internal {
class OpBuilder;
}

class Scope {
 public:
  Scope(const Scope& other);
  Scope& operator=(const Scope& other);
  ~Scope();

  // A scope on a new empty graph (GraphDef versions producer kScopeGraphProducer).
  static Scope NewRootScope();

  // A child name scope "prefix/child_scope_name" (made unique among names in this scope).
  // An empty name gives a scope with this scope's prefix.
  Scope NewSubScope(const std::string& child_scope_name) const;
  // The next op built from the returned scope is named `op_name` within this name scope
  // (made unique if taken). Pieces are concatenated: WithOpName("layer", 1) -> "layer1".
  template <typename... Ty>
  Scope WithOpName(Ty... fragments) const {
    return WithOpNameImpl(absl::StrCat(fragments...));
  }
  // A sub-scope whose prefix is `full_prefix` as given, not made unique: for the helper nodes of
  // a node named `full_prefix` ("op/arg", "variable/Assign").
  Scope NewSubScopeExact(const std::string& full_prefix) const;
  // The next op built from the returned scope is named `full_name` exactly, without the name
  // scope or uniquifying: for a name the caller reserved with GetUniqueNameForOp.
  Scope WithExactName(const std::string& full_name) const;
  // Adds control dependencies: every op built from the returned scope runs after these.
  Scope WithControlDependencies(absl::Span<const Operation> control_deps) const;
  Scope WithControlDependencies(const Output& control_dep) const;
  Scope WithNoControlDependencies() const;
  // Requested device for ops built from the returned scope, e.g. "/cpu:0".
  Scope WithDevice(const std::string& device) const;

  // The name an op of type `default_name` gets here: WithOpName's name if set, else the type,
  // prefixed by the name scope and made unique.
  std::string GetUniqueNameForOp(const std::string& default_name) const;

  // Records `s` if no error is recorded yet (the first error sticks).
  void UpdateStatus(const Status& s) const;
  Status status() const;
  bool ok() const;

  Graph* graph() const;
  std::shared_ptr<Graph> graph_as_shared_ptr() const;
  // The graph as a GraphDef; returns status() when an error was recorded.
  Status ToGraphDef(GraphDef* gdef) const;

  const std::string& name_prefix() const;
  const std::vector<Operation>& control_deps() const;
  const std::string& device() const;

  // Graph collections (TF's tf.add_to_collection / get_collection): named lists of operations
  // shared by every Scope of the tree, in insertion order; the training API keeps its variables
  // ("variables", "trainable_variables") and their initializers there. An empty list for an
  // unknown name.
  void AddToCollection(const std::string& name, const Operation& op) const;
  std::vector<Operation> GetCollection(const std::string& name) const;

  // The output shape computed by the op's shape function when the node was built (unknown rank
  // for nodes the Scope did not build, or when inference had too little information).
  PartialTensorShape GetInferredShape(const Output& o) const;

  // Records a static shape for `o` more precise than its op's shape function could infer (a
  // variable read: ReadVariableOp cannot see the shape its VarHandleOp declares); ops built
  // later from `o` infer their shapes from it. No-op for an empty Output.
  void RefineInferredShape(const Output& o, const PartialTensorShape& shape) const;
  // The graph version this API writes (producer >= 22: an empty Placeholder shape means scalar).
  static constexpr int kScopeGraphProducer = 27;

 private:
  friend class internal::OpBuilder;
  struct Shared;
  struct Impl;
  explicit Scope(std::unique_ptr<Impl> impl);
  Scope WithOpNameImpl(const std::string& op_name) const;
  void RecordShapes(const Node* n, std::vector<PartialTensorShape> shapes) const;

  std::unique_ptr<Impl> impl_;
};

}  // namespace tensorflux
