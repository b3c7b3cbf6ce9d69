// Gradients of the basic arithmetic ops, MatMul and Cast (the formulas of TensorFlow's
// math_grad.py). Binary ops broadcast, so their gradients go through ReduceForBroadcast.
// The rest of the elementwise family (Pow, Tanh, Sigmoid, Relu, ...) is in cwise_grad.cc.

#include "tensorflux/gradients/gradients.h"

namespace tensorflux {
namespace {

using GradList = std::vector<GradOutput>;

// ---------------------------------------------------------------- binary, broadcasting

// z = x + y: dx = dz, dy = dz.
Status AddGrad(GradContext* c, GradList* dx) {
  GradOutput g = c->grad(0);
  return c->ReduceForBroadcast(g, g, dx);
}
REGISTER_GRADIENT("Add", AddGrad);
REGISTER_GRADIENT("AddV2", AddGrad);

// z = x - y: dx = dz, dy = -dz.
Status SubGrad(GradContext* c, GradList* dx) {
  GradOutput g = c->grad(0);
  TX_ASSIGN_OR_RETURN(GradOutput neg, c->Op("Neg", {g}));
  return c->ReduceForBroadcast(g, neg, dx);
}
REGISTER_GRADIENT("Sub", SubGrad);

// z = x * y: dx = dz * y, dy = x * dz.
Status MulGrad(GradContext* c, GradList* dx) {
  GradOutput g = c->grad(0);
  TX_ASSIGN_OR_RETURN(GradOutput gx, c->Op("Mul", {g, c->input(1)}));
  TX_ASSIGN_OR_RETURN(GradOutput gy, c->Op("Mul", {c->input(0), g}));
  return c->ReduceForBroadcast(gx, gy, dx);
}
REGISTER_GRADIENT("Mul", MulGrad);

// z = x / y: dx = dz / y, dy = dz * (-x / y / y).
Status RealDivGrad(GradContext* c, GradList* dx) {
  GradOutput g = c->grad(0), x = c->input(0), y = c->input(1);
  TX_ASSIGN_OR_RETURN(GradOutput gx, c->Op("RealDiv", {g, y}));
  TX_ASSIGN_OR_RETURN(GradOutput negx, c->Op("Neg", {x}));
  TX_ASSIGN_OR_RETURN(GradOutput q1, c->Op("RealDiv", {negx, y}));
  TX_ASSIGN_OR_RETURN(GradOutput q2, c->Op("RealDiv", {q1, y}));
  TX_ASSIGN_OR_RETURN(GradOutput gy, c->Op("Mul", {g, q2}));
  return c->ReduceForBroadcast(gx, gy, dx);
}
REGISTER_GRADIENT("RealDiv", RealDivGrad);

// z = max(x, y) (resp. min): the gradient goes to x where x >= y (x <= y), else to y; ties go
// to x, as in TensorFlow.
Status MinMaxGrad(GradContext* c, GradList* dx, const char* compare) {
  GradOutput g = c->grad(0), x = c->input(0), y = c->input(1);
  TX_ASSIGN_OR_RETURN(GradOutput mask, c->Op(compare, {x, y}));
  TX_ASSIGN_OR_RETURN(GradOutput fmask,
                      c->Op("Cast", {mask}, {{"DstT", MakeAttr(BaseType(g.dtype()))}}));
  TX_ASSIGN_OR_RETURN(GradOutput gx, c->Op("Mul", {g, fmask}));
  TX_ASSIGN_OR_RETURN(GradOutput gy, c->Op("Sub", {g, gx}));
  return c->ReduceForBroadcast(gx, gy, dx);
}
Status MaximumGrad(GradContext* c, GradList* dx) { return MinMaxGrad(c, dx, "GreaterEqual"); }
Status MinimumGrad(GradContext* c, GradList* dx) { return MinMaxGrad(c, dx, "LessEqual"); }
REGISTER_GRADIENT("Maximum", MaximumGrad);
REGISTER_GRADIENT("Minimum", MinimumGrad);

// ---------------------------------------------------------------- unary

Status NegGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Neg", {c->grad(0)}));
  return OkStatus();
}
REGISTER_GRADIENT("Neg", NegGrad);

// y = x^2: dx = dy * 2x.
Status SquareGrad(GradContext* c, GradList* dx) {
  GradOutput x = c->input(0);
  TX_ASSIGN_OR_RETURN(GradOutput two, c->Const(2.0, BaseType(x.dtype())));
  TX_ASSIGN_OR_RETURN(GradOutput two_x, c->Op("Mul", {two, x}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Mul", {c->grad(0), two_x}));
  return OkStatus();
}
REGISTER_GRADIENT("Square", SquareGrad);

// y = sqrt(x): dx = SqrtGrad(y, dy) = dy * 0.5 / y.
Status SqrtGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("SqrtGrad", {c->output(0), c->grad(0)}));
  return OkStatus();
}
REGISTER_GRADIENT("Sqrt", SqrtGrad);

// y = e^x: dx = dy * y.
Status ExpGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Mul", {c->grad(0), c->output(0)}));
  return OkStatus();
}
REGISTER_GRADIENT("Exp", ExpGrad);

// y = ln(x): dx = dy / x.
Status LogGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("RealDiv", {c->grad(0), c->input(0)}));
  return OkStatus();
}
REGISTER_GRADIENT("Log", LogGrad);

// Cast between floating types: the gradient is cast back; none through integer or bool types.
Status CastGrad(GradContext* c, GradList* dx) {
  DataType src, dst;
  TX_RETURN_IF_ERROR(c->GetAttr("SrcT", &src));
  TX_RETURN_IF_ERROR(c->GetAttr("DstT", &dst));
  if (!DataTypeIsFloating(src) || !DataTypeIsFloating(dst)) return OkStatus();
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Cast", {c->grad(0)}, {{"DstT", MakeAttr(src)}}));
  return OkStatus();
}
REGISTER_GRADIENT("Cast", CastGrad);

// ---------------------------------------------------------------- MatMul

// C = op(A) op(B), op = optional transpose. With G = dC:
//   (ta, tb) = (F, F): dA = G B^T,     dB = A^T G
//   (F, T):            dA = G B,       dB = G^T A
//   (T, F):            dA = B G^T,     dB = A G
//   (T, T):            dA = B^T G^T,   dB = G^T A^T
Status MatMulGrad(GradContext* c, GradList* dx) {
  bool ta = false, tb = false;
  TX_RETURN_IF_ERROR(c->GetAttr("transpose_a", &ta));
  TX_RETURN_IF_ERROR(c->GetAttr("transpose_b", &tb));
  GradOutput g = c->grad(0), a = c->input(0), b = c->input(1);
  auto mm = [&](GradOutput l, GradOutput r, bool tl, bool tr) {
    return c->Op("MatMul", {l, r}, {{"transpose_a", MakeAttr(tl)}, {"transpose_b", MakeAttr(tr)}});
  };
  if (!ta && !tb) {
    TX_ASSIGN_OR_RETURN((*dx)[0], mm(g, b, false, true));
    TX_ASSIGN_OR_RETURN((*dx)[1], mm(a, g, true, false));
  } else if (!ta && tb) {
    TX_ASSIGN_OR_RETURN((*dx)[0], mm(g, b, false, false));
    TX_ASSIGN_OR_RETURN((*dx)[1], mm(g, a, true, false));
  } else if (ta && !tb) {
    TX_ASSIGN_OR_RETURN((*dx)[0], mm(b, g, false, true));
    TX_ASSIGN_OR_RETURN((*dx)[1], mm(a, g, false, false));
  } else {
    TX_ASSIGN_OR_RETURN((*dx)[0], mm(b, g, true, true));
    TX_ASSIGN_OR_RETURN((*dx)[1], mm(g, a, true, true));
  }
  return OkStatus();
}
REGISTER_GRADIENT("MatMul", MatMulGrad);

}  // namespace
}  // namespace tensorflux
