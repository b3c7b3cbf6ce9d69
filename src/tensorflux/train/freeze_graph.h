// Freezing a trained graph for inference (TF 1.x's tf.compat.v1.graph_util):
//   ExtractSubGraph     the nodes the destination nodes depend on (data and control inputs),
//   ConvertVariablesToConstants
//                       that subgraph with each variable replaced by a Const holding the value the
//                       session has now (resource VarHandleOp and ref VariableV2/Variable), so the
//                       result runs without a checkpoint, initializers or the optimizer,
//   RemoveTrainingNodes Identity nodes spliced out and CheckNumerics nodes dropped (their inputs
//                       rewired), except nodes named in `protected_nodes`.
// Node order of the input GraphDef is kept; versions and the function library are copied.
//
// Resource variables: each VarHandleOp becomes Const(dtype = its dtype attr) and each
// ReadVariableOp of it becomes Identity(T = dtype). Any other consumer of a frozen handle
// (AssignVariableOp, ResourceApply*, ResourceGather ...) in the subgraph is INVALID_ARGUMENT
// naming it: an inference subgraph must not update or gather from variables (use the
// allowlist/denylist to keep such a variable a variable).
#pragma once

#include <string>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/graph.pb.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {

// NOT_FOUND naming a destination that is not a node of `graph_def`; INVALID_ARGUMENT for a
// malformed input name.
StatusOr<GraphDef> ExtractSubGraph(const GraphDef& graph_def,
                                   const std::vector<std::string>& dest_nodes);

StatusOr<GraphDef> RemoveTrainingNodes(const GraphDef& graph_def,
                                       const std::vector<std::string>& protected_nodes = {});

struct FreezeOptions {
  // When non-empty, only these variables (node names) are converted.
  std::vector<std::string> variable_names_allowlist;
  // These variables stay variables.
  std::vector<std::string> variable_names_denylist;
};

// `session` must hold `graph_def`'s nodes with its variables initialized: their values are read
// in one Run (through an existing ReadVariableOp of each resource variable when the graph has
// one, else through one added to the session's graph with Extend, named
// "<variable>/_freeze_read"). Errors: ExtractSubGraph's; the Run's (FAILED_PRECONDITION for an
// uninitialized variable); INVALID_ARGUMENT as above.
StatusOr<GraphDef> ConvertVariablesToConstants(Session* session, const GraphDef& graph_def,
                                               const std::vector<std::string>& output_node_names,
                                               const FreezeOptions& options = {});

}  // namespace tensorflux
