// Resource-variable ops (TensorFlow's resource_variable_ops): a variable is a Var in the
// device's ResourceMgr (framework/resource_var.h) named by a DT_RESOURCE scalar handle.
//
//   VarHandleOp         -> resource: resource scalar naming (container, shared_name or the node
//                          name); the Var itself is created by the first AssignVariableOp
//   ReadVariableOp      resource -> value: dtype, a snapshot of the current value
//   AssignVariableOp    resource, value: dtype; creates the variable when missing;
//                       validate_shape: the value's shape must equal the current one
//   AssignAddVariableOp / AssignSubVariableOp
//                       resource, value: dtype (same shape as the variable) -> no outputs
//   VarIsInitializedOp  resource -> is_initialized: bool scalar
//   DestroyResourceOp   resource; ignore_lookup_error: a missing resource is not an error
//
// Errors: reading an uninitialized (never assigned, or destroyed) variable is
// FAILED_PRECONDITION naming it ("Could not find variable v. This could mean that the variable
// has been deleted. ...", TF's text); AssignAdd/SubVariableOp on one is NOT_FOUND with that
// text (TF's code for them); the ResourceApply* optimizer ops say FAILED_PRECONDITION (TF:
// INTERNAL "Invalid variable reference", docs/TF_DIFFERENCES.md); a dtype or shape mismatch
// is INVALID_ARGUMENT.
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

using shape_inference::ScalarShape;

Status NoOutputs(InferenceContext* c) { return OkStatus(); }

// The handle input must be a scalar; the value's static shape is not known from a handle here.
Status HandleInput(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRank(0, 0));
  return OkStatus();
}

Status ReadShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(HandleInput(c));
  c->set_output(0, PartialTensorShape::UnknownRank());
  return OkStatus();
}

Status ScalarFromHandle(InferenceContext* c) {
  TX_RETURN_IF_ERROR(HandleInput(c));
  return ScalarShape(c);
}

}  // namespace

REGISTER_OP("VarHandleOp")
    .Output("resource: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .Attr("allowed_devices: list(string) = []")
    .SetIsStateful()
    .SetShapeFn(ScalarShape)
    .Doc("A handle to the variable (container, shared_name); shared_name '' means the node name.");

REGISTER_OP("ReadVariableOp")
    .Input("resource: resource")
    .Output("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful()
    .SetShapeFn(ReadShape)
    .Doc("The variable's current value (a snapshot: later updates do not change it).");

REGISTER_OP("AssignVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .Attr("validate_shape: bool = false")
    .SetIsStateful()
    .SetShapeFn(HandleInput)
    .Doc("Sets the variable to `value`; creates it when the handle names none yet.");

REGISTER_OP("AssignAddVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful()
    .SetShapeFn(HandleInput)
    .Doc("variable += value (same shape).");

REGISTER_OP("AssignSubVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful()
    .SetShapeFn(HandleInput)
    .Doc("variable -= value (same shape).");

REGISTER_OP("VarIsInitializedOp")
    .Input("resource: resource")
    .Output("is_initialized: bool")
    .SetShapeFn(ScalarFromHandle)
    .Doc("True when the variable exists and holds a value.");

REGISTER_OP("DestroyResourceOp")
    .Input("resource: resource")
    .Attr("ignore_lookup_error: bool = true")
    .SetIsStateful()
    .SetShapeFn(NoOutputs)
    .Doc("Deletes the resource the handle names (NOT_FOUND when missing, unless ignored).");

}  // namespace tensorflux
