// Constant folding (graph_optimizer.h; TF's classic ConstantFold and grappler's constant_folding):
// in topological order, a node whose data inputs all come from Const nodes is computed once by
// its own CPU kernel, and each of its consumed outputs becomes a Const node. A one-output node's
// Const keeps the node's name (so errors and traces still name it); outputs of a multi-output
// node become "<node>/__cf__<i>". The Consts keep the node's requested device, its colocation
// attr (_class) and the control inputs of the node and of its input Consts, and its control
// consumers move to them. Folded Consts feed later nodes, so chains fold in one
// pass.
//
// Never folded: preserved (fed, fetched, targeted) nodes, stateful ops (random, variables, I/O),
// nodes with a reference, resource or variant input or output, internal ops ("_..."), nodes
// without data inputs, async kernels, ops without a CPU kernel, and nodes whose outputs would
// exceed OptimizerContext::max_constant_bytes (checked from the shape function before running
// when the output shapes are known, and on the computed values). A kernel that fails (a bad
// shape) is left in place, so the step reports the error as it would unoptimized.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/devices/cpu_device.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/framework/shape_inference.h"
#include "tensorflux/graph/algorithm.h"
#include "tensorflux/passes/graph_optimizer.h"
#include "tensorflux/passes/pass_util.h"

namespace tensorflux {
namespace {

using passes::ConstValue;

bool FoldableType(DataType t) {
  return !IsRefType(t) && t != DT_RESOURCE && t != DT_VARIANT && t != DT_INVALID;
}

// Bytes a tensor of this dtype and shape takes (strings: their characters).
int64_t ValueBytes(const Tensor& t) {
  if (t.dtype() != DT_STRING) return static_cast<int64_t>(t.TotalBytes());
  int64_t bytes = 0;
  for (const std::string& s : t.flat<std::string>()) bytes += static_cast<int64_t>(s.size());
  return bytes;
}

// The values of n's data inputs when every one comes from a Const; empty otherwise.
std::vector<Tensor> ConstInputs(const Node* n) {
  std::vector<Tensor> values(n->num_inputs());
  for (int i = 0; i < n->num_inputs(); ++i) {
    const Edge* e = passes::InEdge(n, i);
    if (e == nullptr) return {};
    std::optional<Tensor> v = ConstValue(e->src());
    if (!v.has_value()) return {};
    values[i] = *std::move(v);
  }
  return values;
}

bool IsCandidate(const OptimizerContext& ctx, const Node* n) {
  if (n->IsConstant() || n->num_inputs() == 0 || n->num_outputs() == 0) return false;
  if (n->type_string().starts_with("_")) return false;
  if (!passes::IsRewritable(ctx, n)) return false;
  for (DataType t : n->input_types())
    if (!FoldableType(t)) return false;
  for (DataType t : n->output_types())
    if (!FoldableType(t)) return false;
  return passes::NumDataConsumers(n) > 0;
}

class ConstantFolding : public GraphPass {
 public:
  const char* name() const override { return "constant_folding"; }

  StatusOr<int> Run(const OptimizerContext& ctx, Graph* g) const override {
    std::unique_ptr<CpuDevice> own;
    DeviceBase* device = ctx.cpu_device;
    if (device == nullptr) {
      own = std::make_unique<CpuDevice>("/job:localhost/replica:0/task:0/device:CPU:0", 1);
      device = own.get();
    }
    TX_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*g));
    int folded = 0;
    for (Node* n : order) {
      if (!IsCandidate(ctx, n)) continue;
      std::vector<Tensor> inputs = ConstInputs(n);
      if (inputs.empty()) continue;
      if (!ShapesFit(ctx, *g, n, inputs)) continue;
      std::vector<Tensor> outputs;
      if (!Compute(device, n, &inputs, &outputs)) continue;
      bool fits = true;
      for (const Tensor& t : outputs) fits = fits && ValueBytes(t) <= ctx.max_constant_bytes;
      if (!fits) continue;
      TX_RETURN_IF_ERROR(Replace(g, n, outputs));
      ++folded;
    }
    return folded;
  }

 private:
  // False when the op's shape function proves an output larger than the cap.
  static bool ShapesFit(const OptimizerContext& ctx, const Graph& g, const Node* n,
                        const std::vector<Tensor>& inputs) {
    auto reg = g.op_registry()->LookUp(n->type_string());
    if (!reg.ok()) return false;
    std::vector<PartialTensorShape> shapes;
    std::vector<const Tensor*> values;
    for (const Tensor& t : inputs) {
      shapes.emplace_back(t.shape());
      values.push_back(&t);
    }
    InferenceContext ic(n->def(), n->op_def(), std::move(shapes), std::move(values),
                        n->num_outputs());
    if (!(*reg)->shape_fn(&ic).ok()) return true;  // the kernel reports the error, unfolded
    for (int i = 0; i < n->num_outputs(); ++i) {
      const PartialTensorShape& s = ic.output(i);
      if (!s.IsFullyDefined() || n->output_type(i) == DT_STRING) continue;
      const double bytes = static_cast<double>(s.num_elements()) *
                           static_cast<double>(DataTypeSize(n->output_type(i)));
      if (bytes > static_cast<double>(ctx.max_constant_bytes)) return false;
    }
    return true;
  }

  // Runs n's CPU kernel on `inputs`. False when it cannot run here or fails.
  static bool Compute(DeviceBase* device, const Node* n, std::vector<Tensor>* inputs,
                      std::vector<Tensor>* outputs) {
    NodeDef def = n->def();
    def.clear_input();
    for (int i = 0; i < n->num_inputs(); ++i) def.add_input(absl::StrCat("input", i));
    std::unique_ptr<OpKernel> kernel;
    if (!CreateOpKernel(device, def, &kernel).ok() || kernel->IsAsync()) return false;
    OpKernelContext::Params params;
    params.op_kernel = kernel.get();
    params.device = device;
    params.inputs = inputs->data();
    params.num_inputs = static_cast<int>(inputs->size());
    OpKernelContext octx(&params);
    kernel->Compute(&octx);
    if (!octx.status().ok()) return false;
    auto& outs = octx.outputs();
    if (static_cast<int>(outs.size()) < n->num_outputs()) return false;
    for (int i = 0; i < n->num_outputs(); ++i) {
      if (!outs[i].IsInitialized() || outs[i].dtype() != n->output_type(i)) return false;
      outputs->push_back(std::move(outs[i]));
    }
    return true;
  }

  // Swaps n for one Const per consumed output.
  static Status Replace(Graph* g, Node* n, const std::vector<Tensor>& values) {
    const std::vector<passes::Consumer> consumers = passes::Consumers(n);
    // The Consts keep n's ordering and that of its input Consts (which may become dead).
    std::vector<Node*> controls = passes::ControlInputs(n);
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge()) continue;
      for (Node* c : passes::ControlInputs(e->src())) controls.push_back(c);
    }
    const std::string name = n->name();
    const std::string device = n->requested_device();
    const AttrValue* colocation = n->attr("_class");
    const AttrValue class_attr = colocation != nullptr ? *colocation : AttrValue();
    const int num_outputs = n->num_outputs();
    std::vector<bool> used(num_outputs, false);
    for (const passes::Consumer& c : consumers)
      if (c.slot != kControlSlot) used[c.slot] = true;
    g->RemoveNode(n);
    std::vector<std::pair<Node*, int>> to(num_outputs, {nullptr, 0});
    for (int i = 0; i < num_outputs; ++i) {
      if (!used[i]) continue;
      NodeDef def;
      def.set_name(num_outputs == 1 ? name : g->NewName(absl::StrCat(name, "/__cf__", i)));
      def.set_op("Const");
      def.set_device(device);
      AddNodeAttr("dtype", values[i].dtype(), &def);
      AddNodeAttr("value", values[i], &def);
      if (colocation != nullptr) (*def.mutable_attr())["_class"] = class_attr;
      TX_ASSIGN_OR_RETURN(Node * c, g->AddNode(std::move(def)));
      for (Node* ctl : controls) g->AddControlEdge(ctl, c);
      to[i] = {c, 0};
    }
    return passes::Reconnect(g, consumers, to, {});
  }
};

}  // namespace

std::unique_ptr<GraphPass> NewConstantFoldingPass() { return std::make_unique<ConstantFolding>(); }

}  // namespace tensorflux
