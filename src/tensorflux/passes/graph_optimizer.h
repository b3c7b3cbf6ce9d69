// The master's graph optimizer: an ordered list of graph-to-graph passes run on the pruned,
// rewritten graph of one run signature (after feeds became _Arg and fetches _Retval), before
// placement. The passes, in order, each in its own file:
//
//   constant_folding             constant_folding.cc     nodes whose inputs are all Const run once
//                                                        on the CPU and become Const nodes
//   common_subgraph_elimination  cse.cc                  equal nodes (op, attrs, inputs, device)
//                                                        merged into one
//   arithmetic_optimization      arithmetic_simplifier.cc  x*1, 1*x, x+0, 0+x, x-0, Neg(Neg(x))
//                                                        and Identity nodes forwarded to x
//   model_pruning                dead_node_removal.cc    nodes that reach no fetch, target,
//                                                        preserved or stateful node removed
//   remapping                    remapper.cc             MatMul+BiasAdd(+Relu/Relu6/Elu) ->
//                                                        _FusedMatMul, Conv2D+BiasAdd(+Relu/Relu6/
//                                                        Elu) -> _FusedConv2D, MaxPoolGrad+ReluGrad
//                                                        (+BiasAddGrad) -> _FusedMaxPoolGrad
//
// Switches (TF's names, config.proto / rewriter_config.proto): a pass runs when its
// RewriterConfig Toggle is ON or AGGRESSIVE; never when OFF; at DEFAULT it runs when
// GraphOptions.optimizer_options.opt_level is L1 (the default) and disable_meta_optimizer is
// unset. Constant folding and CSE also run at DEFAULT when OptimizerOptions.do_constant_folding /
// do_common_subexpression_elimination is set (TF's classic optimizer flags). Model pruning is
// switched by RewriterConfig.disable_model_pruning (a bool in TF) besides the level.
//
// Rules every pass keeps: a preserved node (fed, fetched or targeted, see OptimizerContext), an
// _Arg or _Retval, a stateful op and an op with a reference input or output is never removed,
// merged or replaced (a preserved node's inputs may still be simplified). Results are identical
// with the passes on and off, except that x+0 with x = -0.0 gives -0.0 instead of +0.0 (as in
// TF's arithmetic optimizer) and the fused kernels' Elu may differ in the last bit.
//
// A pass that fails leaves the graph as it found it (each pass runs on a copy) and the error is
// recorded in its PassStats; with RewriterConfig.fail_on_optimizer_errors the error is returned.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "tensorflux/config.pb.h"
#include "tensorflux/core/status.h"
#include "tensorflux/devices/device.h"
#include "tensorflux/framework/device_base.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux {

// What the passes know about the step they optimize for.
struct OptimizerContext {
  // Node names that must keep their name and outputs: the nodes of fed tensors, fetched tensors
  // and targets. _Arg and _Retval nodes are always preserved.
  absl::flat_hash_set<std::string> preserved;
  // Runs the kernels of folded nodes; nullptr: constant folding makes a single-threaded CPU
  // device of its own.
  DeviceBase* cpu_device = nullptr;
  // Device types the graph may be placed on: a fused op is made only where it has a kernel on
  // every one of them that has kernels for all the nodes it replaces.
  std::vector<std::string> device_types = {"CPU"};
  // Largest constant folding may create, in bytes (TF's default, 10 MiB).
  int64_t max_constant_bytes = int64_t{10} << 20;

  // The preserved set of a run signature: the node part of every feed ("n:i" -> n), fetch and
  // target name.
  static OptimizerContext ForSignature(const std::vector<std::string>& feeds,
                                       const std::vector<std::string>& fetches,
                                       const std::vector<std::string>& targets);
  bool IsPreserved(const Node* n) const;
};

// One rewrite of a graph. Run returns the number of changes it made (0: graph unchanged).
class GraphPass {
 public:
  virtual ~GraphPass() = default;
  // TF's RewriterConfig field name ("constant_folding", "remapping", ...).
  virtual const char* name() const = 0;
  virtual StatusOr<int> Run(const OptimizerContext& ctx, Graph* g) const = 0;
};

// The passes in the order OptimizeGraph runs them.
std::unique_ptr<GraphPass> NewConstantFoldingPass();
std::unique_ptr<GraphPass> NewCommonSubgraphEliminationPass();
std::unique_ptr<GraphPass> NewArithmeticSimplifierPass();
std::unique_ptr<GraphPass> NewDeadNodeRemovalPass();
std::unique_ptr<GraphPass> NewRemapperPass();

// What one pass did (for `tensorflux inspect --optimize` and tests).
struct PassStats {
  std::string name;
  bool enabled = false;
  int nodes_before = 0;
  int nodes_after = 0;
  int changes = 0;
  Status status;  // a failed pass's error (the graph was left unchanged)
};

// Which passes GraphOptions switch on, by pass name order above.
struct PassSwitches {
  bool constant_folding = true;
  bool common_subgraph_elimination = true;
  bool arithmetic_optimization = true;
  bool model_pruning = true;
  bool remapping = true;
  bool fail_on_optimizer_errors = false;
  int64_t max_constant_bytes = 0;  // 0: OptimizerContext's default

  static PassSwitches FromGraphOptions(const GraphOptions& options);
  bool Enabled(const std::string& pass_name) const;
  bool AnyEnabled() const;
};

// Runs the enabled passes over `g` in order. `stats` (optional) gets one entry per pass, enabled
// or not. Errors: a pass's error only with fail_on_optimizer_errors (the graph is then left as
// that pass found it).
Status OptimizeGraph(const PassSwitches& switches, const OptimizerContext& ctx,
                     std::unique_ptr<Graph>* g, std::vector<PassStats>* stats = nullptr);

// What a session calls once per run signature, after the feed/fetch rewrite: switches from
// `options`, the signature's preserved nodes, the device types of `devices` (the session's), and
// kernels of folded nodes run on the first CPU device among them.
Status OptimizeGraphForRun(const GraphOptions& options, const std::vector<std::string>& feeds,
                           const std::vector<std::string>& fetches,
                           const std::vector<std::string>& targets,
                           const std::vector<Device*>& devices, std::unique_ptr<Graph>* g);

}  // namespace tensorflux
