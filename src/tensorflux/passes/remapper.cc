// Op fusion (graph_optimizer.h; TF grappler's remapper): a contraction followed by BiasAdd and
// optionally an activation becomes one fused node that computes them in one pass over the
// output (kernels/cpu/fused_epilogue.h):
//
//   MatMul -> BiasAdd [-> Relu | Relu6 | Elu | LeakyRelu]  =>  _FusedMatMul(a, b, bias)
//   Conv2D -> BiasAdd [-> Relu | Relu6 | Elu | LeakyRelu]  =>  _FusedConv2D(input, filter, bias)
//
// with TF's attrs: the contraction's own (transpose_a/b; strides, padding, explicit_paddings,
// data_format, dilations, use_cudnn_on_gpu), T, num_args = 1, fused_ops = ["BiasAdd"] or
// ["BiasAdd", "<activation>"], leakyrelu_alpha = the LeakyRelu's alpha. The fused node takes the
// name, requested device and colocation attr (_class) of the last node of the chain, so its
// consumers (and a fetch of it) are unaffected, and the control inputs of every node of the chain.
//
// A chain is fused only when every intermediate output (the contraction's, and the BiasAdd's
// when an activation follows) has exactly one consumer, no control consumer and is not
// preserved; all nodes have the same requested device and colocation; the dtype is one the
// fused op takes; Conv2D's data_format equals BiasAdd's; and the fused op has a kernel on every
// device type of the session that has kernels for all the nodes it replaces. Fusion runs after
// autodiff (in the master), so the fused ops need no gradient.
//
// In the gradient of a ReLU followed by max pooling (not a TF fusion; ops/pooling_ops.cc):
//
//   MaxPoolGrad(y, pooled, g) -> ReluGrad(., y) [-> BiasAddGrad]
//       =>  _FusedMaxPoolGrad(y, pooled, g)
//
// when the ReluGrad's features are the MaxPoolGrad's orig_input (the ReLU's output y), the
// MaxPoolGrad's only consumer is that ReluGrad, the windows do not overlap (strides >= ksize) and
// T is float or double; the BiasAddGrad (a consumer of the ReluGrad, NHWC, not preserved) is
// optional. The fused node takes MaxPoolGrad's attrs and the ReluGrad's name, device and
// colocation: the ReluGrad's consumers read its output 0, the BiasAddGrad's its output 1, and it
// gets the control inputs of the nodes it replaces. The same device-kernel condition applies.
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/graph/algorithm.h"
#include "tensorflux/passes/graph_optimizer.h"
#include "tensorflux/passes/pass_util.h"

namespace tensorflux {
namespace {

struct Chain {
  Node* contraction = nullptr;  // MatMul or Conv2D
  Node* bias_add = nullptr;
  Node* activation = nullptr;  // may be null
  Node* last() const { return activation != nullptr ? activation : bias_add; }
};

// MaxPoolGrad -> ReluGrad [-> BiasAddGrad] (see the file comment).
struct PoolGradChain {
  Node* pool_grad = nullptr;
  Node* relu_grad = nullptr;
  Node* bias_grad = nullptr;  // may be null
};

bool IsActivation(const std::string& op) {
  return op == "Relu" || op == "Relu6" || op == "Elu" || op == "LeakyRelu";
}

// The single data consumer of n's output 0 when n's outputs feed only it (no control consumer,
// n not preserved); nullptr otherwise.
Node* SoleConsumer(const OptimizerContext& ctx, const Node* n) {
  if (!passes::IsRewritable(ctx, n) || passes::HasControlOutputs(n)) return nullptr;
  if (passes::NumDataConsumers(n) != 1) return nullptr;
  for (const Edge* e : n->out_edges())
    if (!e->IsControlEdge() && e->src_output() == 0) return e->dst();
  return nullptr;
}

// Same requested device and colocation constraints (_class).
bool SamePlacement(const Node* a, const Node* b) {
  if (a->requested_device() != b->requested_device()) return false;
  const AttrValue* ca = a->attr("_class");
  const AttrValue* cb = b->attr("_class");
  if (ca == nullptr || cb == nullptr) return ca == cb;
  return ca->SerializeAsString() == cb->SerializeAsString();
}

std::string AttrString(const Node* n, const char* name, const char* fallback) {
  std::string v = fallback;
  if (n->attr(name) != nullptr) (void)GetNodeAttr(n->def(), name, &v);
  return v;
}

// The fused NodeDef for `c` (inputs are edges, added by the caller).
NodeDef FusedDef(const Chain& c) {
  const bool matmul = c.contraction->type_string() == "MatMul";
  NodeDef def;
  def.set_name(c.last()->name());
  def.set_op(matmul ? "_FusedMatMul" : "_FusedConv2D");
  def.set_device(c.last()->requested_device());
  if (const AttrValue* colocation = c.last()->attr("_class")) {
    (*def.mutable_attr())["_class"] = *colocation;
  }
  const char* copied_matmul[] = {"transpose_a", "transpose_b", "T"};
  const char* copied_conv[] = {"strides", "padding", "explicit_paddings", "data_format",
                               "dilations", "use_cudnn_on_gpu", "T"};
  auto copy = [&](const char* name) {
    if (const AttrValue* a = c.contraction->attr(name)) (*def.mutable_attr())[name] = *a;
  };
  if (matmul) {
    for (const char* a : copied_matmul) copy(a);
  } else {
    for (const char* a : copied_conv) copy(a);
  }
  AddNodeAttr("num_args", int64_t{1}, &def);
  std::vector<std::string> ops = {"BiasAdd"};
  if (c.activation != nullptr) {
    ops.push_back(c.activation->type_string());
    if (const AttrValue* alpha = c.activation->attr("alpha")) {
      (*def.mutable_attr())["leakyrelu_alpha"] = *alpha;
    }
  }
  AddNodeAttr("fused_ops", ops, &def);
  return def;
}

class Remapper : public GraphPass {
 public:
  const char* name() const override { return "remapping"; }

  StatusOr<int> Run(const OptimizerContext& ctx, Graph* g) const override {
    TX_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*g));
    std::vector<int> ids;  // by id: a fusion removes nodes later in the order
    for (const Node* n : order) ids.push_back(n->id());
    int fused = 0;
    for (int id : ids) {
      Node* n = g->FindNodeId(id);
      if (n == nullptr) continue;
      if (std::optional<PoolGradChain> pc = MatchPoolGrad(ctx, n)) {
        NodeDef def = PoolGradDef(*pc);
        if (!KernelsCover(ctx, {pc->pool_grad, pc->relu_grad, pc->bias_grad}, def)) continue;
        TX_RETURN_IF_ERROR(FusePoolGrad(g, *pc, std::move(def)));
        ++fused;
        continue;
      }
      std::optional<Chain> chain = Match(ctx, n);
      if (!chain.has_value()) continue;
      NodeDef def = FusedDef(*chain);
      if (!KernelsCover(ctx, {chain->contraction, chain->bias_add, chain->activation}, def)) {
        continue;
      }
      TX_RETURN_IF_ERROR(Fuse(g, *chain, std::move(def)));
      ++fused;
    }
    return fused;
  }

 private:
  static std::optional<Chain> Match(const OptimizerContext& ctx, Node* n) {
    const std::string& op = n->type_string();
    if (op != "MatMul" && op != "Conv2D") return std::nullopt;
    Chain c;
    c.contraction = n;
    c.bias_add = SoleConsumer(ctx, n);
    if (c.bias_add == nullptr || c.bias_add->type_string() != "BiasAdd") return std::nullopt;
    const Edge* in0 = passes::InEdge(c.bias_add, 0);
    if (in0 == nullptr || in0->src() != n || in0->src_output() != 0) return std::nullopt;
    if (c.bias_add->IsStateful() || passes::HasRefEndpoint(c.bias_add)) return std::nullopt;
    const DataType t = n->output_type(0);
    if (t != DT_FLOAT && t != DT_DOUBLE && t != DT_HALF && t != DT_BFLOAT16) return std::nullopt;
    if (op == "Conv2D" && AttrString(n, "data_format", "NHWC") !=
                              AttrString(c.bias_add, "data_format", "NHWC")) {
      return std::nullopt;
    }
    if (!SamePlacement(n, c.bias_add)) return std::nullopt;
    Node* act = SoleConsumer(ctx, c.bias_add);
    if (act != nullptr && IsActivation(act->type_string()) && SamePlacement(n, act) &&
        !act->IsStateful() && !passes::HasRefEndpoint(act)) {
      c.activation = act;
    }
    return c;
  }

  // False when some device type has kernels for every node replaced (nullptr entries: none) but
  // not the fused op.
  static bool KernelsCover(const OptimizerContext& ctx, std::initializer_list<Node*> replaced,
                           const NodeDef& fused) {
    const KernelRegistry* reg = KernelRegistry::Global();
    for (const std::string& type : ctx.device_types) {
      bool originals = true;
      for (Node* m : replaced) {
        if (m != nullptr && !reg->FindKernel(m->def(), type).ok()) originals = false;
      }
      if (originals && !reg->FindKernel(fused, type).ok()) return false;
    }
    return true;
  }

  static Status Fuse(Graph* g, const Chain& c, NodeDef def) {
    const Edge* a = passes::InEdge(c.contraction, 0);
    const Edge* b = passes::InEdge(c.contraction, 1);
    const Edge* bias = passes::InEdge(c.bias_add, 1);
    if (a == nullptr || b == nullptr || bias == nullptr) {
      return errors::Internal("Fusion of '", c.last()->name(), "': an input is unconnected");
    }
    const std::pair<Node*, int> inputs[3] = {{a->src(), a->src_output()},
                                             {b->src(), b->src_output()},
                                             {bias->src(), bias->src_output()}};
    std::vector<Node*> controls;
    for (Node* m : {c.contraction, c.bias_add, c.activation}) {
      if (m == nullptr) continue;
      for (Node* ctl : passes::ControlInputs(m)) controls.push_back(ctl);
    }
    const std::vector<passes::Consumer> consumers = passes::Consumers(c.last());
    for (Node* m : {c.activation, c.bias_add, c.contraction}) {
      if (m != nullptr) g->RemoveNode(m);
    }
    TX_ASSIGN_OR_RETURN(Node * f, g->AddNode(std::move(def)));
    for (int i = 0; i < 3; ++i) {
      TX_RETURN_IF_ERROR(g->AddEdge(inputs[i].first, inputs[i].second, f, i).status());
    }
    for (Node* ctl : controls) g->AddControlEdge(ctl, f);
    return passes::Reconnect(g, consumers, {{f, 0}}, {});
  }

  static std::optional<PoolGradChain> MatchPoolGrad(const OptimizerContext& ctx, Node* n) {
    if (n->type_string() != "MaxPoolGrad") return std::nullopt;
    const DataType t = n->output_type(0);
    if (t != DT_FLOAT && t != DT_DOUBLE) return std::nullopt;
    std::vector<int32_t> ksize, strides;
    if (!GetNodeAttr(n->def(), "ksize", &ksize).ok() ||
        !GetNodeAttr(n->def(), "strides", &strides).ok() || ksize.size() != 4 ||
        strides.size() != 4 || strides[1] < ksize[1] || strides[2] < ksize[2]) {
      return std::nullopt;
    }
    PoolGradChain c;
    c.pool_grad = n;
    c.relu_grad = SoleConsumer(ctx, n);
    if (c.relu_grad == nullptr || c.relu_grad->type_string() != "ReluGrad") return std::nullopt;
    const Edge* grads = passes::InEdge(c.relu_grad, 0);
    const Edge* features = passes::InEdge(c.relu_grad, 1);
    const Edge* orig_input = passes::InEdge(n, 0);
    if (grads == nullptr || grads->src() != n || grads->src_output() != 0 ||
        features == nullptr || orig_input == nullptr || features->src() != orig_input->src() ||
        features->src_output() != orig_input->src_output()) {
      return std::nullopt;
    }
    if (c.relu_grad->IsStateful() || passes::HasRefEndpoint(c.relu_grad) ||
        !SamePlacement(n, c.relu_grad)) {
      return std::nullopt;
    }
    for (const Edge* e : c.relu_grad->out_edges()) {
      Node* b = e->dst();
      if (e->IsControlEdge() || b->type_string() != "BiasAddGrad" || e->dst_input() != 0) continue;
      if (passes::IsRewritable(ctx, b) && !passes::HasControlOutputs(b) &&
          AttrString(b, "data_format", "NHWC") == "NHWC" && SamePlacement(n, b)) {
        c.bias_grad = b;
        break;
      }
    }
    return c;
  }

  // _FusedMaxPoolGrad with MaxPoolGrad's attrs, named and placed as the ReluGrad.
  static NodeDef PoolGradDef(const PoolGradChain& c) {
    NodeDef def;
    def.set_name(c.relu_grad->name());
    def.set_op("_FusedMaxPoolGrad");
    def.set_device(c.relu_grad->requested_device());
    if (const AttrValue* colocation = c.relu_grad->attr("_class")) {
      (*def.mutable_attr())["_class"] = *colocation;
    }
    for (const char* name :
         {"ksize", "strides", "padding", "explicit_paddings", "data_format", "T"}) {
      if (const AttrValue* a = c.pool_grad->attr(name)) (*def.mutable_attr())[name] = *a;
    }
    return def;
  }

  static Status FusePoolGrad(Graph* g, const PoolGradChain& c, NodeDef def) {
    std::pair<Node*, int> inputs[3];
    for (int i = 0; i < 3; ++i) {
      const Edge* e = passes::InEdge(c.pool_grad, i);
      if (e == nullptr) {
        return errors::Internal("Fusion of '", c.relu_grad->name(), "': an input is unconnected");
      }
      inputs[i] = {e->src(), e->src_output()};
    }
    std::vector<Node*> controls;
    for (Node* m : {c.pool_grad, c.relu_grad, c.bias_grad}) {
      if (m == nullptr) continue;
      for (Node* ctl : passes::ControlInputs(m)) controls.push_back(ctl);
    }
    std::vector<passes::Consumer> bias_consumers;
    if (c.bias_grad != nullptr) {
      bias_consumers = passes::Consumers(c.bias_grad);
      g->RemoveNode(c.bias_grad);
    }
    const std::vector<passes::Consumer> consumers = passes::Consumers(c.relu_grad);
    g->RemoveNode(c.relu_grad);
    g->RemoveNode(c.pool_grad);
    TX_ASSIGN_OR_RETURN(Node * f, g->AddNode(std::move(def)));
    for (int i = 0; i < 3; ++i) {
      TX_RETURN_IF_ERROR(g->AddEdge(inputs[i].first, inputs[i].second, f, i).status());
    }
    for (Node* ctl : controls) g->AddControlEdge(ctl, f);
    TX_RETURN_IF_ERROR(passes::Reconnect(g, consumers, {{f, 0}}, {}));
    return passes::Reconnect(g, bias_consumers, {{f, 1}}, {});
  }
};

}  // namespace

std::unique_ptr<GraphPass> NewRemapperPass() { return std::make_unique<Remapper>(); }

}  // namespace tensorflux
