// Shape inference over a whole graph (static_shapes.h).
#include "tensorflux/graph/static_shapes.h"

#include <utility>

#include "tensorflux/core/tensor.h"
#include "tensorflux/framework/shape_inference.h"
#include "tensorflux/graph/algorithm.h"

namespace tensorflux {

StaticShapeTable InferStaticShapes(const Graph& g) {
  StaticShapeTable shapes(g.num_node_ids());
  auto order = TopologicalOrder(g);
  if (!order.ok()) return shapes;
  std::vector<Tensor> values(g.num_node_ids());
  for (Node* n : *order) {
    shapes[n->id()].assign(n->num_outputs(), PartialTensorShape());
    if (n->IsConstant()) {
      Tensor t;
      if (GetNodeAttr(n->def(), "value", &t).ok()) values[n->id()] = t;
    }
    auto reg = g.op_registry()->LookUp(n->type_string());
    if (!reg.ok()) continue;
    std::vector<PartialTensorShape> in_shapes(n->num_inputs());
    std::vector<const Tensor*> in_values(n->num_inputs(), nullptr);
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge()) continue;
      const auto& src = shapes[e->src()->id()];
      if (e->src_output() < static_cast<int>(src.size()))
        in_shapes[e->dst_input()] = src[e->src_output()];
      const Tensor& v = values[e->src()->id()];
      if (v.IsInitialized() && e->src_output() == 0) in_values[e->dst_input()] = &v;
    }
    InferenceContext ctx(n->def(), n->op_def(), std::move(in_shapes), std::move(in_values),
                         n->num_outputs());
    if ((*reg)->shape_fn(&ctx).ok()) shapes[n->id()] = ctx.outputs();
  }
  return shapes;
}

}  // namespace tensorflux
