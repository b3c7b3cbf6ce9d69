// Internal to passes/: the graph edits and node tests the optimization passes share.
#pragma once

#include <optional>
#include <vector>

#include "tensorflux/core/tensor.h"
#include "tensorflux/graph/graph.h"
#include "tensorflux/passes/graph_optimizer.h"

namespace tensorflux {
namespace passes {

// True when some input or output of `n` is a reference (TF 1.x variable) type.
bool HasRefEndpoint(const Node* n);

// True when the pass may remove, merge or replace `n`: not preserved, not stateful, no reference
// endpoint.
bool IsRewritable(const OptimizerContext& ctx, const Node* n);

// The value of a Const node, or nullopt (not a Const, or a value that does not parse).
std::optional<Tensor> ConstValue(const Node* n);

// The data edge into input `i` of `n` (nullptr when unconnected).
const Edge* InEdge(const Node* n, int i);
// The node's control-input sources.
std::vector<Node*> ControlInputs(const Node* n);
// Number of data out-edges from output `slot` of `n`; any slot when slot < 0.
int NumDataConsumers(const Node* n, int slot = -1);
bool HasControlOutputs(const Node* n);

// A consumer of a node's output: output `slot` (kControlSlot: a control edge) feeds input
// `dst_input` of `dst`.
struct Consumer {
  int slot;
  Node* dst;
  int dst_input;
};
std::vector<Consumer> Consumers(const Node* n);

// Connects each consumer to to_outputs[slot] (AddEdge: the old edges must be gone); control
// consumers get a control edge from every node in to_outputs. Each consumer also gets a control
// edge from every node in `extra_controls`. INTERNAL when a data consumer's slot has no
// replacement or the types differ.
Status Reconnect(Graph* g, const std::vector<Consumer>& consumers,
                 const std::vector<std::pair<Node*, int>>& to_outputs,
                 const std::vector<Node*>& extra_controls);

// Moves every consumer of n to to_outputs (as Reconnect) and removes n. With
// `move_control_inputs` the consumers also get n's control inputs, so the ordering n imposed
// survives when the replacement does not carry it.
Status ReplaceNode(Graph* g, Node* n, const std::vector<std::pair<Node*, int>>& to_outputs,
                   bool move_control_inputs);

// ReplaceNode for a one-output node forwarded to src:src_output (x*1 -> x, Identity(x) -> x),
// moving n's control inputs to its consumers.
Status ForwardNode(Graph* g, Node* n, Node* src, int src_output);

}  // namespace passes
}  // namespace tensorflux
