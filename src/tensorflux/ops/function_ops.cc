// _Arg and _Retval: the nodes a session's feed/fetch rewrite (runtime/subgraph.h) puts in place of
// fed and fetched tensors. An _Arg reads argument `index` of the run's call frame; a _Retval
// writes return value `index`. Signatures follow TF's ops of the same names (both stateful, so no
// graph optimization merges or folds them). Kernels are registered by the runtime.
#include <vector>

#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

// Unknown, unless the rewrite or a client recorded the shape in `_output_shapes`.
Status ArgShape(InferenceContext* c) {
  if (FindAttr(c->node_def(), "_output_shapes") != nullptr) {
    std::vector<PartialTensorShape> shapes;
    if (c->GetAttr("_output_shapes", &shapes).ok() && shapes.size() == 1) {
      c->set_output(0, shapes[0]);
      return OkStatus();
    }
  }
  return shape_inference::UnknownShape(c);
}

Status NoOutputs(InferenceContext* c) { return OkStatus(); }

}  // namespace

REGISTER_OP("_Arg")
    .Output("output: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .SetIsStateful()
    .SetShapeFn(ArgShape)
    .Doc("Argument `index` of the current run (a fed tensor); dtype T, any shape.");

REGISTER_OP("_Retval")
    .Input("input: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .SetIsStateful()
    .SetShapeFn(NoOutputs)
    .Doc("Return value `index` of the current run (a fetched tensor); dtype T, any shape.");

}  // namespace tensorflux
