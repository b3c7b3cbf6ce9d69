// CheckNumerics (TF's array_ops registration): output = tensor when it holds no NaN and no
// Inf; otherwise INVALID_ARGUMENT "<message> : Tensor had NaN values" ("Inf values",
// "NaN and Inf values"). Its gradient checks the incoming gradient the same way.
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {

REGISTER_OP("CheckNumerics")
    .Input("tensor: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double}")
    .Attr("message: string")
    .SetIsStateful()
    .SetShapeFn(shape_inference::UnchangedShape)
    .Doc("tensor, after checking that it has no NaN or Inf values.");

}  // namespace tensorflux
