// Gradients of the activations (TensorFlow's nn_grad.py): each uses TF's backward op, with TF's
// choice of forward input or output as its second argument; and the gradients of those
// backward ops (second derivatives), as TF registers them.

#include "tensorflux/gradients/gradients.h"

namespace tensorflux {
namespace {

using GradList = std::vector<GradOutput>;

// ---------------------------------------------------------------- activations

// dx = B(dy, v) with v the forward input (use_output=false) or output.
Status BackwardOp(GradContext* c, GradList* dx, const char* op, bool use_output,
                  GradAttrs attrs = {}) {
  GradOutput v = use_output ? c->output(0) : c->input(0);
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op(op, {c->grad(0), v}, std::move(attrs)));
  return OkStatus();
}
Status ReluGrad(GradContext* c, GradList* dx) { return BackwardOp(c, dx, "ReluGrad", true); }
Status Relu6Grad(GradContext* c, GradList* dx) { return BackwardOp(c, dx, "Relu6Grad", false); }
Status EluGrad(GradContext* c, GradList* dx) { return BackwardOp(c, dx, "EluGrad", true); }
Status SeluGrad(GradContext* c, GradList* dx) { return BackwardOp(c, dx, "SeluGrad", true); }
Status SoftplusGrad(GradContext* c, GradList* dx) {
  return BackwardOp(c, dx, "SoftplusGrad", false);
}
Status LeakyReluGrad(GradContext* c, GradList* dx) {
  float alpha = 0.2f;
  TX_RETURN_IF_ERROR(c->GetAttr("alpha", &alpha));
  return BackwardOp(c, dx, "LeakyReluGrad", false, {{"alpha", MakeAttr(alpha)}});
}
REGISTER_GRADIENT("Relu", ReluGrad);
REGISTER_GRADIENT("Relu6", Relu6Grad);
REGISTER_GRADIENT("Elu", EluGrad);
REGISTER_GRADIENT("Selu", SeluGrad);
REGISTER_GRADIENT("Softplus", SoftplusGrad);
REGISTER_GRADIENT("LeakyRelu", LeakyReluGrad);

// ---------------------------------------------------------------- backward ops

// Piecewise-linear in `gradients` with a mask from `features`: d/dgradients applies the same
// op to the incoming gradient; d/dfeatures is 0 (away from the kinks).
Status MaskedGradGrad(GradContext* c, GradList* dx, GradAttrs attrs = {}) {
  GradOutput features = c->input(1);
  TX_ASSIGN_OR_RETURN((*dx)[0],
                      c->Op(c->op().type_string(), {c->grad(0), features}, std::move(attrs)));
  TX_ASSIGN_OR_RETURN((*dx)[1], c->Op("ZerosLike", {features}));
  return OkStatus();
}
Status ReluGradGrad(GradContext* c, GradList* dx) { return MaskedGradGrad(c, dx); }
Status LeakyReluGradGrad(GradContext* c, GradList* dx) {
  float alpha = 0.2f;
  TX_RETURN_IF_ERROR(c->GetAttr("alpha", &alpha));
  return MaskedGradGrad(c, dx, {{"alpha", MakeAttr(alpha)}});
}
REGISTER_GRADIENT("ReluGrad", ReluGradGrad);
REGISTER_GRADIENT("Relu6Grad", ReluGradGrad);
REGISTER_GRADIENT("LeakyReluGrad", LeakyReluGradGrad);

// b = outputs < 0 ? g * (outputs + k) : g * s (Elu: k = s = 1; Selu: k = scale * alpha,
// s = scale): d/dg = same op on the incoming gradient; d/doutputs = outputs < 0 ? g : 0.
Status EluSeluGradGrad(GradContext* c, GradList* dx) {
  GradOutput grad = c->grad(0), g = c->input(0), outputs = c->input(1);
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op(c->op().type_string(), {grad, outputs}));
  TX_ASSIGN_OR_RETURN(GradOutput zero, c->Const(0.0, BaseType(outputs.dtype())));
  TX_ASSIGN_OR_RETURN(GradOutput neg, c->Op("Less", {outputs, zero}));
  TX_ASSIGN_OR_RETURN(GradOutput gg, c->Op("Mul", {grad, g}));
  TX_ASSIGN_OR_RETURN(GradOutput zeros, c->Op("ZerosLike", {gg}));
  TX_ASSIGN_OR_RETURN((*dx)[1], c->Op("SelectV2", {neg, gg, zeros}));
  return OkStatus();
}
REGISTER_GRADIENT("EluGrad", EluSeluGradGrad);
REGISTER_GRADIENT("SeluGrad", EluSeluGradGrad);

// b = dy * sigmoid(x): d/ddy = SoftplusGrad(grad, x); d/dx = grad * dy / (e^-x + 2 + e^x).
Status SoftplusGradGrad(GradContext* c, GradList* dx) {
  GradOutput grad = c->grad(0), dy = c->input(0), x = c->input(1);
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("SoftplusGrad", {grad, x}));
  TX_ASSIGN_OR_RETURN(GradOutput two, c->Const(2.0, BaseType(x.dtype())));
  TX_ASSIGN_OR_RETURN(GradOutput ex, c->Op("Exp", {x}));
  TX_ASSIGN_OR_RETURN(GradOutput nx, c->Op("Neg", {x}));
  TX_ASSIGN_OR_RETURN(GradOutput enx, c->Op("Exp", {nx}));
  TX_ASSIGN_OR_RETURN(GradOutput s1, c->Op("AddV2", {enx, two}));
  TX_ASSIGN_OR_RETURN(GradOutput den, c->Op("AddV2", {s1, ex}));
  TX_ASSIGN_OR_RETURN(GradOutput num, c->Op("Mul", {grad, dy}));
  TX_ASSIGN_OR_RETURN((*dx)[1], c->Op("RealDiv", {num, den}));
  return OkStatus();
}
REGISTER_GRADIENT("SoftplusGrad", SoftplusGradGrad);

// z = B(y, dy), linear in dy: d/ddy = B(y, grad); d/dy = grad * dy * k * y^p per op:
//   TanhGrad       z = dy (1 - y^2)     d/dy = -2 dy y
//   SigmoidGrad    z = dy y (1 - y)     d/dy = dy (1 - 2y)
//   RsqrtGrad      z = -0.5 dy y^3      d/dy = -1.5 dy y^2
//   ReciprocalGrad z = -dy y^2          d/dy = -2 dy y
//   SqrtGrad       z = 0.5 dy / y       d/dy = -z / y
Status OutputGradGrad(GradContext* c, GradList* dx) {
  GradOutput grad = c->grad(0), y = c->input(0), dy = c->input(1);
  const std::string& op = c->op().type_string();
  const DataType dt = BaseType(y.dtype());
  TX_ASSIGN_OR_RETURN((*dx)[1], c->Op(op, {y, grad}));
  TX_ASSIGN_OR_RETURN(GradOutput gdy, c->Op("Mul", {grad, dy}));
  GradOutput d;  // d/dy without the grad * dy factor, except for SqrtGrad
  if (op == "TanhGrad" || op == "ReciprocalGrad") {
    TX_ASSIGN_OR_RETURN(GradOutput k, c->Const(-2.0, dt));
    TX_ASSIGN_OR_RETURN(d, c->Op("Mul", {k, y}));
  } else if (op == "SigmoidGrad") {
    TX_ASSIGN_OR_RETURN(GradOutput one, c->Const(1.0, dt));
    TX_ASSIGN_OR_RETURN(GradOutput two, c->Const(2.0, dt));
    TX_ASSIGN_OR_RETURN(GradOutput ty, c->Op("Mul", {two, y}));
    TX_ASSIGN_OR_RETURN(d, c->Op("Sub", {one, ty}));
  } else if (op == "RsqrtGrad") {
    TX_ASSIGN_OR_RETURN(GradOutput k, c->Const(-1.5, dt));
    TX_ASSIGN_OR_RETURN(GradOutput y2, c->Op("Square", {y}));
    TX_ASSIGN_OR_RETURN(d, c->Op("Mul", {k, y2}));
  } else {  // SqrtGrad: -(grad / y) * z
    TX_ASSIGN_OR_RETURN(GradOutput gy, c->Op("RealDiv", {grad, y}));
    TX_ASSIGN_OR_RETURN(GradOutput ngy, c->Op("Neg", {gy}));
    TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Mul", {ngy, c->output(0)}));
    return OkStatus();
  }
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Mul", {gdy, d}));
  return OkStatus();
}
REGISTER_GRADIENT("TanhGrad", OutputGradGrad);
REGISTER_GRADIENT("SigmoidGrad", OutputGradGrad);
REGISTER_GRADIENT("RsqrtGrad", OutputGradGrad);
REGISTER_GRADIENT("ReciprocalGrad", OutputGradGrad);
REGISTER_GRADIENT("SqrtGrad", OutputGradGrad);

}  // namespace
}  // namespace tensorflux
