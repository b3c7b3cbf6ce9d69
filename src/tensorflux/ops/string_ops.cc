// String ops TF 1.x Saver graphs use: StringJoin (TF's string_ops registration: inputs N*string,
// attr separator).
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

// Scalars broadcast; the non-scalar inputs must agree, and give the output shape.
Status StringJoinShape(InferenceContext* c) {
  PartialTensorShape out = PartialTensorShape::Scalar();
  bool any_non_scalar = false;
  for (int i = 0; i < c->num_inputs(); ++i) {
    const PartialTensorShape& s = c->input(i);
    if (s.dims() == 0) continue;
    if (!any_non_scalar) {
      out = s;
      any_non_scalar = true;
      continue;
    }
    auto merged = out.MergeWith(s);
    if (!merged.ok())
      return c->Error("StringJoin '", c->node_def().name(), "': input ", i, " has shape ",
                      s.DebugString(), ", incompatible with ", out.DebugString());
    out = *merged;
  }
  c->set_output(0, out);
  return OkStatus();
}

}  // namespace

REGISTER_OP("StringJoin")
    .Input("inputs: N * string")
    .Attr("N: int")
    .Attr("separator: string = ''")
    .Output("output: string")
    .SetShapeFn(StringJoinShape)
    .Doc("Element-wise concatenation of the inputs with `separator` between them; scalar inputs "
         "are repeated, the others must have one shape, which the output has.");

}  // namespace tensorflux
