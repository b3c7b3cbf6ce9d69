// The gradient registry, GradContext (node building for gradient functions) and the
// AddSymbolicGradients driver. The driver follows the algorithm of TensorFlow's tf.gradients:
//   1. mark the nodes reachable forward from xs and backward from ys (only along edges carrying
//      floating-point tensors: integer tensors carry no gradient);
//   2. count, for every node between them, how many of its consumers will send it a gradient;
//   3. starting at the ys (seeded with grad_ys or OnesLike), process nodes in reverse
//      topological order: once all consumers contributed, sum each output's gradients with AddN
//      and call the node's gradient function to get gradients for its inputs.

#include "tensorflux/gradients/gradients.h"

#include <deque>
#include <type_traits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/framework/shape_inference.h"
#include "tensorflux/graph/algorithm.h"
#include "tensorflux/graph/static_shapes.h"

namespace tensorflux {

std::string GradOutput::name() const {
  if (node == nullptr) return "<none>";
  return absl::StrCat(node->name(), ":", index);
}

namespace {

// A gradient flows only through floating-point tensors and resource handles (a handle carries
// the gradient of the variable it names: ReadVariableOp passes its gradient to the handle, so
// gradients(loss, handle) is the gradient with respect to the variable's value, as in TF).
bool CarriesGradient(DataType dt) {
  return DataTypeIsFloating(BaseType(dt)) || BaseType(dt) == DT_RESOURCE;
}

// How many flattened inputs each OpDef input arg takes, given the attrs set so far (-1 when
// not yet known: an N * T or list(type) arg whose length attr is unset).
int ArgLength(const OpDef::ArgDef& arg, const GradAttrs& attrs) {
  auto find = [&](const std::string& name) -> const AttrValue* {
    for (const auto& [k, v] : attrs)
      if (k == name) return &v;
    return nullptr;
  };
  if (!arg.number_attr().empty()) {
    const AttrValue* a = find(arg.number_attr());
    return a != nullptr && a->value_case() == AttrValue::kI ? static_cast<int>(a->i()) : -1;
  }
  if (!arg.type_list_attr().empty()) {
    const AttrValue* a = find(arg.type_list_attr());
    return a != nullptr && a->value_case() == AttrValue::kList ? a->list().type_size() : -1;
  }
  return 1;
}

bool HasAttr(const GradAttrs& attrs, const std::string& name) {
  for (const auto& [k, v] : attrs)
    if (k == name) return true;
  return false;
}

// Adds node "<scope>/<op>[_N]" with `inputs` wired to its data inputs, inferring the type,
// number and type-list attrs of the OpDef's input args from the inputs.
StatusOr<Node*> AddGradNode(Graph* g, const std::string& scope, std::string_view op,
                            const std::vector<GradOutput>& inputs, GradAttrs attrs) {
  TX_ASSIGN_OR_RETURN(const OpDef* op_def, g->op_registry()->LookUpOpDef(op));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].valid())
      return errors::InvalidArgument("Op ", op, " in scope '", scope, "': input ", i,
                                     " is null");
  }
  // Lengths of the variable-length args: at most one may be unknown; it takes the rest.
  std::vector<int> lengths;
  int known = 0, unknown = -1;
  for (int a = 0; a < op_def->input_arg_size(); ++a) {
    int len = ArgLength(op_def->input_arg(a), attrs);
    if (len < 0) {
      if (unknown >= 0)
        return errors::InvalidArgument("Op ", op, ": cannot infer the lengths of "
                                       "several list inputs; set their attrs");
      unknown = a;
    } else {
      known += len;
    }
    lengths.push_back(len);
  }
  const int n_in = static_cast<int>(inputs.size());
  if (unknown >= 0) {
    if (n_in < known)
      return errors::InvalidArgument("Op ", op, " got ", n_in, " inputs, expected at least ",
                                     known);
    lengths[unknown] = n_in - known;
  } else if (n_in != known) {
    return errors::InvalidArgument("Op ", op, " got ", n_in, " inputs, expected ", known);
  }
  // Infer the attrs the inputs determine.
  int cursor = 0;
  for (int a = 0; a < op_def->input_arg_size(); ++a) {
    const OpDef::ArgDef& arg = op_def->input_arg(a);
    const int len = lengths[a];
    if (!arg.number_attr().empty() && !HasAttr(attrs, arg.number_attr()))
      attrs.emplace_back(arg.number_attr(), MakeAttr(static_cast<int64_t>(len)));
    if (!arg.type_attr().empty() && !HasAttr(attrs, arg.type_attr())) {
      if (len == 0)
        return errors::InvalidArgument("Op ", op, ": cannot infer attr '",
                                       arg.type_attr(), "' from an empty list");
      attrs.emplace_back(arg.type_attr(), MakeAttr(BaseType(inputs[cursor].dtype())));
    }
    if (!arg.type_list_attr().empty() && !HasAttr(attrs, arg.type_list_attr())) {
      std::vector<DataType> types;
      for (int k = 0; k < len; ++k) types.push_back(BaseType(inputs[cursor + k].dtype()));
      attrs.emplace_back(arg.type_list_attr(), MakeAttr(absl::Span<const DataType>(types)));
    }
    cursor += len;
  }
  NodeDef def;
  def.set_name(g->NewName(scope.empty() ? std::string(op)
                                        : absl::StrCat(scope, "/", std::string(op))));
  def.set_op(std::string(op));
  for (auto& [k, v] : attrs) (*def.mutable_attr())[k] = std::move(v);
  TX_ASSIGN_OR_RETURN(Node * node, g->AddNode(std::move(def)));
  for (int i = 0; i < n_in; ++i) {
    auto e = g->AddEdge(inputs[i].node, inputs[i].index, node, i);
    if (!e.ok()) {
      std::string name = node->name();
      g->RemoveNode(node);
      return errors::InvalidArgument("Node '", name, "' (op ", op, "): ",
                                     e.status().message());
    }
  }
  return node;
}

// A scalar tensor of `dtype` holding `value` (floating and integer types).
StatusOr<Tensor> ScalarTensor(double value, DataType dtype) {
  Tensor t;
  TX_RETURN_IF_ERROR(VisitPodType(dtype, "Gradient constant", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    TX_ASSIGN_OR_RETURN(t, Tensor::Allocate(BaseType(dtype), TensorShape()));
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      t.scalar<T>() = T(static_cast<float>(value));
    } else {
      t.scalar<T>() = static_cast<T>(value);
    }
    return OkStatus();
  }));
  return t;
}

StatusOr<GradOutput> AddConstNode(Graph* g, const std::string& scope, const Tensor& t) {
  NodeDef def;
  def.set_name(g->NewName(absl::StrCat(scope, "/Const")));
  def.set_op("Const");
  AddNodeAttr("dtype", t.dtype(), &def);
  AddNodeAttr("value", t, &def);
  TX_ASSIGN_OR_RETURN(Node * node, g->AddNode(std::move(def)));
  return GradOutput{node, 0};
}

}  // namespace

StatusOr<Node*> AddNodeFromInputs(Graph* g, std::string_view scope, std::string_view op,
                                  const std::vector<GradOutput>& inputs, GradAttrs attrs) {
  if (g == nullptr) return errors::InvalidArgument("AddNodeFromInputs: null graph");
  return AddGradNode(g, std::string(scope), op, inputs, std::move(attrs));
}

// ---------------------------------------------------------------- GradContext

GradContext::GradContext(Graph* g, Node* forward, std::vector<GradOutput> output_grads,
                         std::string name_scope)
    : graph_(g),
      forward_(forward),
      output_grads_(std::move(output_grads)),
      scope_(std::move(name_scope)) {
  output_grads_.resize(forward_->num_outputs());
}

GradOutput GradContext::input(int i) const {
  if (i < 0 || i >= forward_->num_inputs()) return {};
  auto e = forward_->input_edge(i);
  if (!e.ok()) return {};
  return GradOutput{(*e)->src(), (*e)->src_output()};
}

GradOutput GradContext::output(int i) const {
  if (i < 0 || i >= forward_->num_outputs()) return {};
  return GradOutput{forward_, i};
}

GradOutput GradContext::grad(int i) {
  if (i < 0 || i >= static_cast<int>(output_grads_.size())) return {};
  if (!output_grads_[i].valid()) {
    auto z = Op("ZerosLike", {output(i)});
    if (z.ok()) output_grads_[i] = *z;
  }
  return output_grads_[i];
}

StatusOr<GradOutput> GradContext::Op(std::string_view op, std::vector<GradOutput> inputs,
                                     GradAttrs attrs) {
  TX_ASSIGN_OR_RETURN(Node * n, AddGradNode(graph_, scope_, op, inputs, std::move(attrs)));
  if (n->num_outputs() < 1)
    return errors::InvalidArgument("Gradient op ", op, " has no outputs");
  return GradOutput{n, 0};
}

StatusOr<std::vector<GradOutput>> GradContext::OpN(std::string_view op,
                                                   std::vector<GradOutput> inputs,
                                                   GradAttrs attrs) {
  TX_ASSIGN_OR_RETURN(Node * n, AddGradNode(graph_, scope_, op, inputs, std::move(attrs)));
  std::vector<GradOutput> outs;
  for (int i = 0; i < n->num_outputs(); ++i) outs.push_back({n, i});
  return outs;
}

StatusOr<GradOutput> GradContext::Const(double value, DataType dtype) {
  TX_ASSIGN_OR_RETURN(Tensor t, ScalarTensor(value, dtype));
  return AddConstNode(graph_, scope_, t);
}

StatusOr<GradOutput> GradContext::Const(const Tensor& t) {
  return AddConstNode(graph_, scope_, t);
}

Status GradContext::ReduceForBroadcast(GradOutput gx, GradOutput gy,
                                       std::vector<GradOutput>* dx) {
  if (dx->size() < 2) dx->resize(2);
  GradOutput x = input(0), y = input(1);
  if (!x.valid() || !y.valid())
    return errors::InvalidArgument("ReduceForBroadcast: node '", forward_->name(),
                                   "' needs two connected inputs");
  if (!gx.valid() && !gy.valid()) {
    (*dx)[0] = (*dx)[1] = GradOutput{};
    return OkStatus();
  }
  // No broadcasting on a side whose shape is statically z's (or x and y are one tensor).
  const PartialTensorShape z_shape = StaticShape(output(0));
  auto unbroadcast = [&](GradOutput t) {
    if (x.node == y.node && x.index == y.index) return true;
    const PartialTensorShape s = StaticShape(t);
    return s.IsFullyDefined() && z_shape.IsFullyDefined() && s == z_shape;
  };
  const bool keep_x = !gx.valid() || unbroadcast(x);
  const bool keep_y = !gy.valid() || unbroadcast(y);
  if (keep_x && keep_y) {
    (*dx)[0] = gx;
    (*dx)[1] = gy;
    return OkStatus();
  }
  TX_ASSIGN_OR_RETURN(GradOutput sx, Op("Shape", {x}));
  TX_ASSIGN_OR_RETURN(GradOutput sy, Op("Shape", {y}));
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> r, OpN("BroadcastGradientArgs", {sx, sy}));
  if (r.size() != 2)
    return errors::Internal("BroadcastGradientArgs must have two outputs");
  auto reduce = [&](GradOutput g, GradOutput axes, GradOutput shape) -> StatusOr<GradOutput> {
    if (!g.valid()) return GradOutput{};
    TX_ASSIGN_OR_RETURN(GradOutput s, Op("Sum", {g, axes}, {{"keep_dims", MakeAttr(false)}}));
    return Op("Reshape", {s, shape});
  };
  if (keep_x) {
    (*dx)[0] = gx;
  } else {
    TX_ASSIGN_OR_RETURN((*dx)[0], reduce(gx, r[0], sx));
  }
  if (keep_y) {
    (*dx)[1] = gy;
  } else {
    TX_ASSIGN_OR_RETURN((*dx)[1], reduce(gy, r[1], sy));
  }
  return OkStatus();
}

PartialTensorShape GradContext::StaticShape(GradOutput t) const {
  if (static_shapes_ == nullptr || !t.valid()) return PartialTensorShape();
  const int id = t.node->id();
  if (id < 0 || id >= static_cast<int>(static_shapes_->size())) return PartialTensorShape();
  const auto& outs = (*static_shapes_)[id];
  if (t.index < 0 || t.index >= static_cast<int>(outs.size())) return PartialTensorShape();
  return outs[t.index];
}

// ---------------------------------------------------------------- registry

GradientRegistry* GradientRegistry::Global() {
  static GradientRegistry* r = new GradientRegistry;
  return r;
}

void GradientRegistry::Register(std::string op, GradFunc fn) {
  no_grad_.erase(op);
  fns_[std::move(op)] = std::move(fn);
}

void GradientRegistry::RegisterNoGradient(std::string op) {
  fns_.erase(op);
  no_grad_[std::move(op)] = true;
}

Status GradientRegistry::Lookup(std::string_view op, GradFunc* fn) const {
  std::string key(op);
  if (no_grad_.contains(key)) {
    *fn = nullptr;
    return OkStatus();
  }
  auto it = fns_.find(key);
  if (it == fns_.end()) return errors::NotFound("No gradient defined for op '", op, "'");
  *fn = it->second;
  return OkStatus();
}

// ---------------------------------------------------------------- AddSymbolicGradients

namespace {

// A scope "<name>" not yet used as a prefix of any node ("gradients", "gradients_1", ...).
std::string UniqueScope(const Graph& g, const std::string& name) {
  auto used = [&](const std::string& s) {
    if (g.FindNode(s) != nullptr) return true;
    const std::string prefix = s + "/";
    for (Node* n : g.nodes())
      if (absl::StartsWith(n->name(), prefix)) return true;
    return false;
  };
  if (!used(name)) return name;
  for (int i = 1;; ++i) {
    std::string s = absl::StrCat(name, "_", i);
    if (!used(s)) return s;
  }
}

Status CheckTensor(const Graph& g, const GradOutput& t, const char* what, size_t i) {
  if (!t.valid()) return errors::InvalidArgument("AddSymbolicGradients: ", what, "[", i, "] is null");
  if (g.FindNodeId(t.node->id()) != t.node)
    return errors::InvalidArgument("AddSymbolicGradients: ", what, "[", i, "] (node '",
                                   t.node->name(), "') is not in the graph");
  if (t.index < 0 || t.index >= t.node->num_outputs())
    return errors::InvalidArgument("AddSymbolicGradients: ", what, "[", i, "] names output ",
                                   t.index, " of node '", t.node->name(), "', which has ",
                                   t.node->num_outputs(), " outputs");
  return OkStatus();
}

}  // namespace

Status AddSymbolicGradients(Graph* g, const std::vector<GradOutput>& ys,
                            const std::vector<GradOutput>& xs,
                            const std::vector<GradOutput>& grad_ys,
                            std::vector<GradOutput>* grad_xs) {
  return AddSymbolicGradients(g, ys, xs, grad_ys, SymbolicGradientOptions(), grad_xs);
}

Status AddSymbolicGradients(Graph* g, const std::vector<GradOutput>& ys,
                            const std::vector<GradOutput>& xs,
                            const std::vector<GradOutput>& grad_ys,
                            const SymbolicGradientOptions& options,
                            std::vector<GradOutput>* grad_xs) {
  if (g == nullptr || grad_xs == nullptr)
    return errors::InvalidArgument("AddSymbolicGradients: null graph or output");
  for (size_t i = 0; i < ys.size(); ++i) TX_RETURN_IF_ERROR(CheckTensor(*g, ys[i], "ys", i));
  for (size_t i = 0; i < xs.size(); ++i) TX_RETURN_IF_ERROR(CheckTensor(*g, xs[i], "xs", i));
  if (!grad_ys.empty() && grad_ys.size() != ys.size())
    return errors::InvalidArgument("AddSymbolicGradients: ", grad_ys.size(), " grad_ys for ",
                                   ys.size(), " ys");
  for (size_t i = 0; i < grad_ys.size(); ++i) {
    if (!grad_ys[i].valid()) continue;
    TX_RETURN_IF_ERROR(CheckTensor(*g, grad_ys[i], "grad_ys", i));
    if (BaseType(grad_ys[i].dtype()) != BaseType(ys[i].dtype()))
      return errors::InvalidArgument("AddSymbolicGradients: grad_ys[", i, "] (",
                                     grad_ys[i].name(), ") has dtype ",
                                     DataTypeString(grad_ys[i].dtype()), " but ys[", i, "] (",
                                     ys[i].name(), ") has dtype ", DataTypeString(ys[i].dtype()));
  }
  for (size_t i = 0; i < options.stop_gradients.size(); ++i)
    TX_RETURN_IF_ERROR(CheckTensor(*g, options.stop_gradients[i], "stop_gradients", i));
  grad_xs->assign(xs.size(), GradOutput{});
  if (xs.empty() || ys.empty()) return OkStatus();

  const int n_ids = g->num_node_ids();  // nodes added below get larger ids: never visited
  std::vector<char> stop(n_ids, 0);
  for (const GradOutput& t : options.stop_gradients) stop[t.node->id()] = 1;
  auto gradient_edge = [](const Edge* e) {
    return !e->IsControlEdge() && CarriesGradient(e->src()->output_type(e->src_output()));
  };

  // Backward reachability from ys.
  std::vector<char> back(n_ids, 0);
  {
    std::vector<Node*> stack;
    for (const GradOutput& y : ys) {
      if (!CarriesGradient(y.dtype()) || back[y.node->id()]) continue;
      back[y.node->id()] = 1;
      stack.push_back(y.node);
    }
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      if (stop[n->id()]) continue;
      for (const Edge* e : n->in_edges()) {
        if (!gradient_edge(e) || back[e->src()->id()]) continue;
        back[e->src()->id()] = 1;
        stack.push_back(e->src());
      }
    }
  }
  // Forward reachability from xs. `through` marks nodes fed by an x (their gradient functions
  // run); `is_x` marks the xs' own nodes (their outputs' gradients are collected).
  std::vector<char> through(n_ids, 0), is_x(n_ids, 0);
  {
    std::vector<Node*> stack;
    auto visit_consumers = [&](Node* n, int only_output) {
      for (const Edge* e : n->out_edges()) {
        if (!gradient_edge(e)) continue;
        if (only_output >= 0 && e->src_output() != only_output) continue;
        if (through[e->dst()->id()]) continue;
        through[e->dst()->id()] = 1;
        stack.push_back(e->dst());
      }
    };
    for (const GradOutput& x : xs) {
      if (!CarriesGradient(x.dtype())) continue;
      is_x[x.node->id()] = 1;
      visit_consumers(x.node, x.index);
    }
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      visit_consumers(n, -1);
    }
  }
  auto between = [&](Node* n) {
    const int id = n->id();
    return id < n_ids && back[id] && (through[id] || is_x[id]);
  };
  auto runs_grad = [&](Node* n) {
    const int id = n->id();
    return id < n_ids && back[id] && through[id] && !stop[id];
  };

  // Pending counts: gradient-carrying edges from a node between to a node whose gradient runs.
  std::vector<int> pending(n_ids, 0);
  for (int id = 0; id < n_ids; ++id) {
    Node* n = g->FindNodeId(id);
    if (n == nullptr || !runs_grad(n)) continue;
    for (const Edge* e : n->in_edges())
      if (gradient_edge(e) && between(e->src())) ++pending[e->src()->id()];
  }

  const GradContext::StaticShapeTable static_shapes = InferStaticShapes(*g);
  const std::string scope = UniqueScope(*g, options.name.empty() ? "gradients" : options.name);
  // Gradients received by each (node, output).
  absl::flat_hash_map<int, std::vector<std::vector<GradOutput>>> received;
  auto contribute = [&](Node* n, int output, GradOutput grad) {
    auto& slots = received[n->id()];
    if (slots.empty()) slots.resize(n->num_outputs());
    slots[output].push_back(grad);
  };

  // Seeds.
  for (size_t i = 0; i < ys.size(); ++i) {
    const GradOutput& y = ys[i];
    if (!between(y.node) || !CarriesGradient(y.dtype())) continue;
    GradOutput seed = grad_ys.empty() ? GradOutput{} : grad_ys[i];
    if (!seed.valid()) {
      TX_ASSIGN_OR_RETURN(Node * ones,
                          AddGradNode(g, scope, "OnesLike", {y}, {}));
      seed = GradOutput{ones, 0};
    }
    contribute(y.node, y.index, seed);
  }

  // Ready nodes: between, with no pending consumers (the ys' nodes, in id order).
  std::deque<Node*> ready;
  int n_between = 0;
  for (int id = 0; id < n_ids; ++id) {
    Node* n = g->FindNodeId(id);
    if (n == nullptr || !between(n)) continue;
    ++n_between;
    if (pending[id] == 0) ready.push_back(n);
  }

  absl::flat_hash_map<int, std::vector<GradOutput>> summed;  // node id -> gradient per output
  int processed = 0;
  while (!ready.empty()) {
    Node* n = ready.front();
    ready.pop_front();
    ++processed;
    const std::string node_scope = absl::StrCat(scope, "/", n->name(), "_grad");
    // Sum each output's gradients.
    std::vector<GradOutput> out_grads(n->num_outputs());
    bool any_grad = false;
    auto it = received.find(n->id());
    if (it != received.end()) {
      for (int k = 0; k < n->num_outputs(); ++k) {
        std::vector<GradOutput>& parts = it->second[k];
        if (parts.empty()) continue;
        if (parts.size() == 1) {
          out_grads[k] = parts[0];
        } else {
          auto sum = AddGradNode(g, node_scope, "AddN", parts, {});
          if (!sum.ok())
            return errors::AttachNodeContext(sum.status(), n->name(), n->type_string());
          out_grads[k] = GradOutput{*sum, 0};
        }
        any_grad = true;
      }
      received.erase(it);
    }
    if (is_x[n->id()]) summed[n->id()] = out_grads;

    std::vector<GradOutput> dx;
    if (runs_grad(n) && any_grad) {
      GradFunc fn;
      Status s = GradientRegistry::Global()->Lookup(n->type_string(), &fn);
      if (!s.ok()) return errors::AttachNodeContext(s, n->name(), n->type_string());
      if (fn) {
        dx.resize(n->num_inputs());
        GradContext ctx(g, n, out_grads, node_scope);
        ctx.set_static_shapes(&static_shapes);
        s = fn(&ctx, &dx);
        if (!s.ok()) return errors::AttachNodeContext(s, n->name(), n->type_string());
        if (static_cast<int>(dx.size()) != n->num_inputs())
          return errors::Internal("Gradient function for op ", n->type_string(), " (node '",
                                  n->name(), "') returned ", dx.size(), " gradients for ",
                                  n->num_inputs(), " inputs");
      }
    }
    if (!runs_grad(n)) continue;
    for (const Edge* e : n->in_edges()) {
      if (!gradient_edge(e) || !between(e->src())) continue;
      Node* src = e->src();
      if (!dx.empty() && dx[e->dst_input()].valid()) {
        const GradOutput& d = dx[e->dst_input()];
        const DataType src_type = BaseType(src->output_type(e->src_output()));
        if (BaseType(d.dtype()) != src_type &&
            !(src_type == DT_RESOURCE && DataTypeIsFloating(BaseType(d.dtype()))))
          return errors::Internal("Gradient function for op ", n->type_string(), " (node '",
                                  n->name(), "') returned a ", DataTypeString(d.dtype()),
                                  " gradient for input ", e->dst_input(), " of type ",
                                  DataTypeString(src->output_type(e->src_output())));
        contribute(src, e->src_output(), d);
      }
      if (--pending[src->id()] == 0) ready.push_back(src);
    }
  }
  if (processed != n_between)
    return errors::InvalidArgument("AddSymbolicGradients: the graph between xs and ys has a "
                                   "cycle (", n_between - processed, " nodes never became ready)");

  for (size_t i = 0; i < xs.size(); ++i) {
    auto it = summed.find(xs[i].node->id());
    if (it == summed.end()) continue;
    (*grad_xs)[i] = it->second[xs[i].index];
  }
  return OkStatus();
}

}  // namespace tensorflux
