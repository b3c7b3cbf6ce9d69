// Graph edits shared by the optimization passes (pass_util.h).
#include "tensorflux/passes/pass_util.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/node_def_util.h"

namespace tensorflux {
namespace passes {

bool HasRefEndpoint(const Node* n) {
  for (DataType t : n->input_types())
    if (IsRefType(t)) return true;
  for (DataType t : n->output_types())
    if (IsRefType(t)) return true;
  return false;
}

bool IsRewritable(const OptimizerContext& ctx, const Node* n) {
  return !ctx.IsPreserved(n) && !n->IsStateful() && !HasRefEndpoint(n);
}

std::optional<Tensor> ConstValue(const Node* n) {
  if (!n->IsConstant()) return std::nullopt;
  Tensor t;
  if (!GetNodeAttr(n->def(), "value", &t).ok()) return std::nullopt;
  if (t.dtype() != n->output_type(0)) return std::nullopt;
  return t;
}

const Edge* InEdge(const Node* n, int i) {
  for (const Edge* e : n->in_edges())
    if (!e->IsControlEdge() && e->dst_input() == i) return e;
  return nullptr;
}

std::vector<Node*> ControlInputs(const Node* n) {
  std::vector<Node*> out;
  for (const Edge* e : n->in_edges())
    if (e->IsControlEdge()) out.push_back(e->src());
  return out;
}

int NumDataConsumers(const Node* n, int slot) {
  int count = 0;
  for (const Edge* e : n->out_edges())
    if (!e->IsControlEdge() && (slot < 0 || e->src_output() == slot)) ++count;
  return count;
}

bool HasControlOutputs(const Node* n) {
  for (const Edge* e : n->out_edges())
    if (e->IsControlEdge()) return true;
  return false;
}

std::vector<Consumer> Consumers(const Node* n) {
  std::vector<Consumer> out;
  out.reserve(n->out_edges().size());
  for (const Edge* e : n->out_edges()) out.push_back({e->src_output(), e->dst(), e->dst_input()});
  return out;
}

Status Reconnect(Graph* g, const std::vector<Consumer>& consumers,
                 const std::vector<std::pair<Node*, int>>& to_outputs,
                 const std::vector<Node*>& extra_controls) {
  for (const Consumer& c : consumers) {
    if (c.slot == kControlSlot) {
      for (const auto& [to, slot] : to_outputs)
        if (to != nullptr) g->AddControlEdge(to, c.dst);
    } else {
      if (c.slot >= static_cast<int>(to_outputs.size()) || to_outputs[c.slot].first == nullptr) {
        return errors::Internal("Rewrite lost output ", c.slot, " consumed by '", c.dst->name(),
                                "' input ", c.dst_input);
      }
      auto added = g->AddEdge(to_outputs[c.slot].first, to_outputs[c.slot].second, c.dst,
                              c.dst_input);
      if (!added.ok()) return errors::Internal("Rewrite failed: ", added.status().message());
    }
    for (Node* extra : extra_controls) g->AddControlEdge(extra, c.dst);
  }
  return OkStatus();
}

Status ReplaceNode(Graph* g, Node* n, const std::vector<std::pair<Node*, int>>& to_outputs,
                   bool move_control_inputs) {
  const std::vector<Consumer> consumers = Consumers(n);
  const std::vector<Node*> controls = move_control_inputs ? ControlInputs(n) : std::vector<Node*>{};
  g->RemoveNode(n);
  return Reconnect(g, consumers, to_outputs, controls);
}

Status ForwardNode(Graph* g, Node* n, Node* src, int src_output) {
  return ReplaceNode(g, n, {{src, src_output}}, /*move_control_inputs=*/true);
}

}  // namespace passes
}  // namespace tensorflux
