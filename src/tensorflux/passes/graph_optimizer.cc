// The pass list, its switches and the loop that runs it (graph_optimizer.h).
#include "tensorflux/passes/graph_optimizer.h"

#include <algorithm>
#include <utility>

#include "tensorflux/graph/graph_def_io.h"

namespace tensorflux {
namespace {

using Toggle = RewriterConfig::Toggle;

// A RewriterConfig toggle resolved against the level: DEFAULT follows `by_default`.
bool Resolve(Toggle t, bool by_default) {
  switch (t) {
    case RewriterConfig::OFF:
      return false;
    case RewriterConfig::DEFAULT:
      return by_default;
    default:  // ON, AGGRESSIVE, EXPERIMENTAL_*
      return true;
  }
}

}  // namespace

OptimizerContext OptimizerContext::ForSignature(const std::vector<std::string>& feeds,
                                                const std::vector<std::string>& fetches,
                                                const std::vector<std::string>& targets) {
  OptimizerContext ctx;
  for (const auto* names : {&feeds, &fetches}) {
    for (const std::string& name : *names) {
      auto id = ParseTensorName(name);
      ctx.preserved.insert(id.ok() ? id->node : name);
    }
  }
  for (const std::string& t : targets) ctx.preserved.insert(t);
  return ctx;
}

bool OptimizerContext::IsPreserved(const Node* n) const {
  return n->IsArg() || n->IsRetval() || preserved.contains(n->name());
}

PassSwitches PassSwitches::FromGraphOptions(const GraphOptions& options) {
  const GraphOptions::OptimizerOptions& oo = options.optimizer_options();
  const RewriterConfig& rc = options.rewrite_options();
  const bool level_on = oo.opt_level() != GraphOptions::OptimizerOptions::L0;
  const bool by_default = level_on && !rc.disable_meta_optimizer();
  PassSwitches s;
  s.constant_folding = Resolve(rc.constant_folding(), by_default || oo.do_constant_folding());
  s.common_subgraph_elimination =
      Resolve(rc.common_subgraph_elimination(),
              by_default || oo.do_common_subexpression_elimination());
  s.arithmetic_optimization = Resolve(rc.arithmetic_optimization(), by_default);
  s.model_pruning = by_default && !rc.disable_model_pruning();
  s.remapping = Resolve(rc.remapping(), by_default);
  s.fail_on_optimizer_errors = rc.fail_on_optimizer_errors();
  s.max_constant_bytes = oo.max_folded_constant_in_bytes();
  return s;
}

bool PassSwitches::Enabled(const std::string& pass_name) const {
  if (pass_name == "constant_folding") return constant_folding;
  if (pass_name == "common_subgraph_elimination") return common_subgraph_elimination;
  if (pass_name == "arithmetic_optimization") return arithmetic_optimization;
  if (pass_name == "model_pruning") return model_pruning;
  if (pass_name == "remapping") return remapping;
  return false;
}

bool PassSwitches::AnyEnabled() const {
  return constant_folding || common_subgraph_elimination || arithmetic_optimization ||
         model_pruning || remapping;
}

Status OptimizeGraph(const PassSwitches& switches, const OptimizerContext& ctx_in,
                     std::unique_ptr<Graph>* g, std::vector<PassStats>* stats) {
  OptimizerContext ctx = ctx_in;
  if (switches.max_constant_bytes > 0) ctx.max_constant_bytes = switches.max_constant_bytes;
  std::unique_ptr<GraphPass> passes[] = {NewConstantFoldingPass(),
                                         NewCommonSubgraphEliminationPass(),
                                         NewArithmeticSimplifierPass(), NewDeadNodeRemovalPass(),
                                         NewRemapperPass()};
  for (const auto& pass : passes) {
    PassStats st;
    st.name = pass->name();
    st.enabled = switches.Enabled(st.name);
    st.nodes_before = st.nodes_after = (*g)->num_nodes();
    if (st.enabled) {
      // A copy, so that a pass failing halfway leaves nothing half-rewritten.
      std::unique_ptr<Graph> work = (*g)->Clone();
      StatusOr<int> changes = pass->Run(ctx, work.get());
      if (changes.ok()) {
        st.changes = *changes;
        if (*changes > 0) *g = std::move(work);
        st.nodes_after = (*g)->num_nodes();
      } else {
        st.status = changes.status();
        if (switches.fail_on_optimizer_errors) {
          if (stats != nullptr) stats->push_back(st);
          return changes.status();
        }
      }
    }
    if (stats != nullptr) stats->push_back(std::move(st));
  }
  return OkStatus();
}

Status OptimizeGraphForRun(const GraphOptions& options, const std::vector<std::string>& feeds,
                           const std::vector<std::string>& fetches,
                           const std::vector<std::string>& targets,
                           const std::vector<Device*>& devices, std::unique_ptr<Graph>* g) {
  const PassSwitches switches = PassSwitches::FromGraphOptions(options);
  if (!switches.AnyEnabled()) return OkStatus();
  OptimizerContext ctx = OptimizerContext::ForSignature(feeds, fetches, targets);
  ctx.device_types.clear();
  for (Device* d : devices) {
    if (ctx.cpu_device == nullptr && d->device_type() == DEVICE_CPU) ctx.cpu_device = d;
    if (std::find(ctx.device_types.begin(), ctx.device_types.end(), d->device_type()) ==
        ctx.device_types.end()) {
      ctx.device_types.push_back(d->device_type());
    }
  }
  if (ctx.device_types.empty()) ctx.device_types.push_back(DEVICE_CPU);
  return OptimizeGraph(switches, ctx, g);
}

}  // namespace tensorflux
