// Gradients of the basic array ops of array_ops.cc (Reshape, Identity*, PlaceholderWithDefault,
// Fill), of ReadVariableOp and CheckNumerics, and the ops through which no gradient flows (shape
// queries, constants, *Like).

#include "tensorflux/core/tensor.h"
#include "tensorflux/gradients/gradients.h"

namespace tensorflux {
namespace {

using GradList = std::vector<GradOutput>;

// Identity-like ops: the gradient passes through unchanged.
Status PassThroughGrad(GradContext* c, GradList* dx) {
  for (int i = 0; i < c->num_inputs() && i < c->num_outputs(); ++i) (*dx)[i] = c->grad(i);
  return OkStatus();
}
REGISTER_GRADIENT("Identity", PassThroughGrad);
REGISTER_GRADIENT("IdentityN", PassThroughGrad);
REGISTER_GRADIENT("PlaceholderWithDefault", PassThroughGrad);
// value = ReadVariableOp(resource): the gradient goes to the handle (TF's _ReadGrad).
REGISTER_GRADIENT("ReadVariableOp", PassThroughGrad);

// output = CheckNumerics(tensor): the gradient is checked too (TF's _CheckNumericsGrad).
Status CheckNumericsGrad(GradContext* c, GradList* dx) {
  std::string message;
  TX_RETURN_IF_ERROR(c->GetAttr("message", &message));
  TX_ASSIGN_OR_RETURN(
      (*dx)[0],
      c->Op("CheckNumerics", {c->grad(0)},
            {{"message", MakeAttr(absl::StrCat("Not a number (NaN) or infinity (Inf) values "
                                               "detected in gradient. ", message))}}));
  return OkStatus();
}
REGISTER_GRADIENT("CheckNumerics", CheckNumericsGrad);

// output = Reshape(tensor, shape): d tensor = Reshape(d output, Shape(tensor)); none for shape.
Status ReshapeGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN(GradOutput shape, c->Op("Shape", {c->input(0)}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Reshape", {c->grad(0), shape}));
  return OkStatus();
}
REGISTER_GRADIENT("Reshape", ReshapeGrad);

// output = Fill(dims, value): d value = sum of d output over all elements; none for dims.
Status FillGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN(GradOutput flat_shape,
                      c->Const(Tensor::FromVector<int32_t>({-1}, TensorShape({1}))));
  TX_ASSIGN_OR_RETURN(GradOutput flat, c->Op("Reshape", {c->grad(0), flat_shape}));
  TX_ASSIGN_OR_RETURN(GradOutput axis, c->Const(0.0, DT_INT32));
  TX_ASSIGN_OR_RETURN((*dx)[1], c->Op("Sum", {flat, axis}, {{"keep_dims", MakeAttr(false)}}));
  return OkStatus();
}
REGISTER_GRADIENT("Fill", FillGrad);

REGISTER_NO_GRADIENT("Shape");
REGISTER_NO_GRADIENT("Size");
REGISTER_NO_GRADIENT("Rank");
REGISTER_NO_GRADIENT("ZerosLike");
REGISTER_NO_GRADIENT("OnesLike");
REGISTER_NO_GRADIENT("Const");
REGISTER_NO_GRADIENT("Placeholder");
REGISTER_NO_GRADIENT("NoOp");

}  // namespace
}  // namespace tensorflux
