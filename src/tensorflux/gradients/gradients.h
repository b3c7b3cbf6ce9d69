// Symbolic differentiation (what tf.gradients does): a registry with one gradient function per
// differentiable op, and AddSymbolicGradients, which walks back from ys to xs adding the backward
// nodes to the graph.
//
// A gradient function receives the forward node and the gradients flowing into its outputs, and
// returns one gradient per forward input (a null Output for "no gradient", e.g. for an integer
// shape input):
//
//   Status MulGrad(GradContext* c, std::vector<GradOutput>* dx) {
//     TX_ASSIGN_OR_RETURN(GradOutput gx, c->Op("Mul", {c->grad(0), c->input(1)}));
//     TX_ASSIGN_OR_RETURN(GradOutput gy, c->Op("Mul", {c->input(0), c->grad(0)}));
//     return c->ReduceForBroadcast(gx, gy, dx);  // BroadcastGradientArgs + Sum + Reshape
//   }
//   REGISTER_GRADIENT("Mul", MulGrad);
//   REGISTER_NO_GRADIENT("Shape");   // integer / comparison / shape ops: no gradient flows
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tensorflux/attr_value.pb.h"
#include "tensorflux/core/status.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux {

// One output of a node in a Graph; node == nullptr means "none" (no gradient).
struct GradOutput {
  Node* node = nullptr;
  int index = 0;
  bool valid() const { return node != nullptr; }
  DataType dtype() const { return node->output_type(index); }
  std::string name() const;  // "node:index"
};

// Attrs for GradContext::Op: {{"transpose_a", MakeAttr(true)}, ...}.
using GradAttrs = std::vector<std::pair<std::string, AttrValue>>;
template <typename T>
AttrValue MakeAttr(T&& v) {
  AttrValue a;
  SetAttrValue(std::forward<T>(v), &a);
  return a;
}

class GradContext {
 public:
  GradContext(Graph* g, Node* forward, std::vector<GradOutput> output_grads,
              std::string name_scope);

  Graph* graph() const { return graph_; }
  const Node& op() const { return *forward_; }
  int num_inputs() const { return forward_->num_inputs(); }
  int num_outputs() const { return forward_->num_outputs(); }
  // The forward node's data input i (the tensor feeding it) and output i.
  GradOutput input(int i) const;
  GradOutput output(int i) const;
  // Gradient flowing into forward output i. When no gradient reaches that output, this is a
  // ZerosLike(output(i)) node, so gradient functions never see a null here.
  GradOutput grad(int i);
  // True when a gradient reaches forward output i (before grad(i) substitutes zeros), so a
  // gradient function can skip terms that would only multiply zeros (TF's _is_zeros_tensor).
  bool has_grad(int i) const {
    return i >= 0 && i < static_cast<int>(output_grads_.size()) && output_grads_[i].valid();
  }
  template <typename T>
  Status GetAttr(std::string_view name, T* v) const {
    return GetNodeAttr(forward_->def(), name, v);
  }

  // Adds a node "<scope>/<op>[_N]" (scope = "gradients/<forward name>_grad"). Type attrs named by
  // the OpDef's input args (type_attr, number_attr, type_list_attr) are inferred from `inputs`
  // when `attrs` does not set them. Returns output 0, or all outputs with OpN.
  StatusOr<GradOutput> Op(std::string_view op, std::vector<GradOutput> inputs,
                          GradAttrs attrs = {});
  StatusOr<std::vector<GradOutput>> OpN(std::string_view op, std::vector<GradOutput> inputs,
                                        GradAttrs attrs = {});
  // A scalar Const of `dtype` holding `value`.
  StatusOr<GradOutput> Const(double value, DataType dtype);
  // A Const holding `t`.
  StatusOr<GradOutput> Const(const Tensor& t);

  // For a broadcasting binary op z = f(x, y) with unreduced gradients gx (shape of z) and gy,
  // sets (*dx)[0], (*dx)[1] to them summed over the broadcast axes and reshaped to x's and y's
  // shapes (Shape, BroadcastGradientArgs, Sum, Reshape). Null gx/gy stay null. A side whose
  // static shape is fully known and equal to z's (no broadcasting) is passed through unchanged.
  Status ReduceForBroadcast(GradOutput gx, GradOutput gy, std::vector<GradOutput>* dx);

  // The static shape of a tensor of the forward graph, from shape inference over the graph
  // when AddSymbolicGradients started (unknown rank when not known or not computed).
  PartialTensorShape StaticShape(GradOutput t) const;
  // Per node id, the static shapes of its outputs (set by AddSymbolicGradients).
  using StaticShapeTable = std::vector<std::vector<PartialTensorShape>>;
  void set_static_shapes(const StaticShapeTable* shapes) { static_shapes_ = shapes; }

 private:
  Graph* graph_;
  Node* forward_;
  std::vector<GradOutput> output_grads_;
  std::string scope_;
  const StaticShapeTable* static_shapes_ = nullptr;
};

// Fills `dx` (sized num_inputs by the caller) with one gradient per forward data input.
using GradFunc = std::function<Status(GradContext* c, std::vector<GradOutput>* dx)>;

class GradientRegistry {
 public:
  static GradientRegistry* Global();
  void Register(std::string op, GradFunc fn);
  // Ops whose outputs carry no gradient (integer, comparison, shape ops, StopGradient).
  void RegisterNoGradient(std::string op);
  // NOT_FOUND "No gradient defined for op 'X'" (the message names the op).
  // `*fn` is left empty for a no-gradient op.
  Status Lookup(std::string_view op, GradFunc* fn) const;

 private:
  absl::flat_hash_map<std::string, GradFunc> fns_;
  absl::flat_hash_map<std::string, bool> no_grad_;
};

// Adds nodes computing d(sum of ys)/d(xs) to `g` (TF's tf.gradients / AddSymbolicGradients):
// - grad_ys[i] seeds ys[i] (empty grad_ys, or a null entry: OnesLike(ys[i]));
// - gradients of a tensor used several times are summed with AddN;
// - only nodes on a path from xs to ys are differentiated; integer-typed tensors and
//   no-gradient ops stop the flow;
// - (*grad_xs)[i] is null when ys do not depend on xs[i].
// Errors: NOT_FOUND for a differentiable op on the path with no registered gradient (naming op and
// node); INVALID_ARGUMENT for mismatched grad_ys dtypes or null xs/ys.
Status AddSymbolicGradients(Graph* g, const std::vector<GradOutput>& ys,
                            const std::vector<GradOutput>& xs,
                            const std::vector<GradOutput>& grad_ys,
                            std::vector<GradOutput>* grad_xs);

// Adds a node "<scope>/<op>[_N]" ("<op>[_N]" for an empty scope) fed by `inputs`, inferring
// type, number and type-list attrs from them as GradContext::Op does (for building graphs in
// tests, tools and bindings). NOT_FOUND for an unknown op; INVALID_ARGUMENT for a null input,
// a wrong input count, or attrs the node rejects.
StatusOr<Node*> AddNodeFromInputs(Graph* g, std::string_view scope, std::string_view op,
                                  const std::vector<GradOutput>& inputs, GradAttrs attrs = {});

// Options for the AddSymbolicGradients overload below (tf.gradients' name and stop_gradients).
struct SymbolicGradientOptions {
  // Scope of the added nodes; made unique ("gradients_1", ...) when a node already uses it.
  std::string name = "gradients";
  // Tensors held constant: their nodes receive gradients but pass none to their inputs.
  std::vector<GradOutput> stop_gradients;
};
Status AddSymbolicGradients(Graph* g, const std::vector<GradOutput>& ys,
                            const std::vector<GradOutput>& xs,
                            const std::vector<GradOutput>& grad_ys,
                            const SymbolicGradientOptions& options,
                            std::vector<GradOutput>* grad_xs);

namespace gradient_registration {
struct GradientRegistrar {
  GradientRegistrar(const char* op, GradFunc fn) {
    GradientRegistry::Global()->Register(op, std::move(fn));
  }
  explicit GradientRegistrar(const char* op) { GradientRegistry::Global()->RegisterNoGradient(op); }
};
}  // namespace gradient_registration

}  // namespace tensorflux

#define TX_GRAD_UNIQ_(a, b) a##b
#define TX_GRAD_UNIQ(a, b) TX_GRAD_UNIQ_(a, b)
#define REGISTER_GRADIENT(op, fn)                                                    \
  static ::tensorflux::gradient_registration::GradientRegistrar TX_GRAD_UNIQ(        \
      grad_registrar_, __COUNTER__) [[maybe_unused]](op, fn)
#define REGISTER_NO_GRADIENT(op)                                                     \
  static ::tensorflux::gradient_registration::GradientRegistrar TX_GRAD_UNIQ(        \
      grad_registrar_, __COUNTER__) [[maybe_unused]](op)
