// PyFunc (TF's script_ops registration): runs a Python callable, registered by the Python
// package under `token`, on the op's inputs (as numpy arrays) and returns its results as the
// outputs. Stateful, so it is never constant-folded, deduplicated or pruned as pure. The token is
// only meaningful in the process that registered it (as in TF): a GraphDef with a PyFunc node
// cannot run elsewhere. Kernel: kernels/cpu/py_func_op.cc; Python: tx.py_func.
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {

REGISTER_OP("PyFunc")
    .Input("input: Tin")
    .Output("output: Tout")
    .Attr("token: string")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .SetIsStateful()
    .SetShapeFn(shape_inference::UnknownShape)
    .Doc("output = the Python callable registered as `token` applied to input (GIL-bound).");

}  // namespace tensorflux
