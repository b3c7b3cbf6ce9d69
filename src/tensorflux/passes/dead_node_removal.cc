// Dead-node removal (graph_optimizer.h; TF grappler's model pruning): removes every node from
// which no root can be reached over data and control edges. Roots are the preserved nodes (fed,
// fetched, targeted), _Arg and _Retval nodes, and stateful nodes (a variable update or a
// random draw the step was asked to run stays even when the rewrites of earlier passes left it
// without consumers). The session already pruned the graph to its fetches and targets, so this
// pass removes what constant folding, CSE and simplification left behind (a Const whose only
// consumer was folded, the second Neg of Neg(Neg(x))).
#include <memory>
#include <vector>

#include "tensorflux/graph/algorithm.h"
#include "tensorflux/passes/graph_optimizer.h"

namespace tensorflux {
namespace {

class DeadNodeRemoval : public GraphPass {
 public:
  const char* name() const override { return "model_pruning"; }

  StatusOr<int> Run(const OptimizerContext& ctx, Graph* g) const override {
    std::vector<Node*> roots;
    for (Node* n : g->nodes()) {
      if (ctx.IsPreserved(n) || n->IsStateful()) roots.push_back(n);
    }
    return PruneForTargets(g, roots);
  }
};

}  // namespace

std::unique_ptr<GraphPass> NewDeadNodeRemovalPass() { return std::make_unique<DeadNodeRemoval>(); }

}  // namespace tensorflux
