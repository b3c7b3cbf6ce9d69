// Reference-variable ops (TensorFlow 1.x's state_ops), as TF 1.x graphs use them:
//
//   VariableV2 / Variable   -> ref: Ref(dtype), the variable (container, shared_name or the node
//                              name); its declared `shape` is the output's static shape
//   Assign                  ref: Ref(T), value: T -> output_ref: Ref(T); validate_shape: the
//                           value's shape must be compatible with the declared one and, once
//                           initialized, equal the current one (TF: "Assign requires shapes of
//                           both tensors to match")
//   AssignAdd / AssignSub   ref: Ref(T), value: T (same shape) -> output_ref: Ref(T)
//   IsVariableInitialized   ref: Ref(dtype) -> is_initialized: bool scalar
//
// How a ref edge runs here (one storage class with resource variables, no second kind of
// value): see framework/resource_var.h. A non-ref consumer (Identity, a fetch) reads the value
// under the variable's lock when it starts; reading an uninitialized variable is
// FAILED_PRECONDITION "Attempting to use uninitialized value NAME".
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

Status VariableShape(InferenceContext* c) {
  PartialTensorShape shape;
  TX_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  c->set_output(0, std::move(shape));
  return OkStatus();
}

// Output 0 is the ref input's shape merged with the value's (INVALID_ARGUMENT when they differ
// and validate_shape is set).
Status AssignShape(InferenceContext* c) {
  bool validate = true;
  TX_RETURN_IF_ERROR(c->GetAttr("validate_shape", &validate));
  const PartialTensorShape& ref = c->input(0);
  const PartialTensorShape& value = c->input(1);
  if (validate && !ref.IsCompatibleWith(value)) {
    return c->Error("Node '", c->node_def().name(), "' (op ", c->node_def().op(),
                    "): shapes must be equal; the variable is ", ref.DebugString(),
                    " and the value ", value.DebugString());
  }
  c->set_output(0, !validate || ref.unknown_rank() ? value : ref);
  return OkStatus();
}

}  // namespace

namespace {
// VariableV2 and its older spelling Variable: same attrs and behaviour.
OpDefBuilder& VariableSpec(OpDefBuilder&& b) {
  return b.Output("ref: Ref(dtype)")
      .Attr("shape: shape")
      .Attr("dtype: type")
      .Attr("container: string = ''")
      .Attr("shared_name: string = ''")
      .SetIsStateful()
      .SetShapeFn(VariableShape)
      .Doc("A reference variable (uninitialized until assigned); shared_name '' is the node name.");
}
const register_op::OpRegistrar kVariableV2 = VariableSpec(OpDefBuilder("VariableV2"));
const register_op::OpRegistrar kVariable = VariableSpec(OpDefBuilder("Variable"));
}  // namespace

REGISTER_OP("Assign")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: type")
    .Attr("validate_shape: bool = true")
    .Attr("use_locking: bool = true")
    .SetAllowsUninitializedInput()
    .SetShapeFn(AssignShape)
    .Doc("ref = value; returns the variable.");

namespace {
// AssignAdd and AssignSub: ref op= value (same shape); returns the variable.
OpDefBuilder& AssignUpdateSpec(OpDefBuilder&& b) {
  return b.Input("ref: Ref(T)")
      .Input("value: T")
      .Output("output_ref: Ref(T)")
      .Attr("T: {half, bfloat16, float, double, int32, int64}")
      .Attr("use_locking: bool = false")
      .SetShapeFn(shape_inference::MergeAllInputsShape);
}
const register_op::OpRegistrar kAssignAdd =
    AssignUpdateSpec(OpDefBuilder("AssignAdd")).Doc("ref += value (same shape).");
const register_op::OpRegistrar kAssignSub =
    AssignUpdateSpec(OpDefBuilder("AssignSub")).Doc("ref -= value (same shape).");
}  // namespace

REGISTER_OP("IsVariableInitialized")
    .Input("ref: Ref(dtype)")
    .Output("is_initialized: bool")
    .Attr("dtype: type")
    .SetAllowsUninitializedInput()
    .SetShapeFn(shape_inference::ScalarShape)
    .Doc("True when the reference variable holds a value.");

}  // namespace tensorflux
