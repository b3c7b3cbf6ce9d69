// Gradients of the rest of the elementwise family (TensorFlow's math_grad.py formulas): FloorMod,
// Pow, SquaredDifference, Abs, Sign, Reciprocal, Rsqrt, Log1p, Tanh, Sigmoid, Erf, Cos, Sin, Select,
// SelectV2, ClipByValue and AddN. FloorDiv, comparisons and logical ops have no gradient.
// Activations (Relu, Elu, ...) and the second-order gradients of the *Grad ops:
// activation_grad.cc.

#include <cmath>

#include "tensorflux/gradients/gradients.h"

namespace tensorflux {
namespace {

using GradList = std::vector<GradOutput>;

// g (with the forward output's shape) summed over the axes along which `target` (a forward
// input) was broadcast, and reshaped to target's shape. Passed through when target's static
// shape is the output's.
StatusOr<GradOutput> ReduceToInput(GradContext* c, GradOutput g, GradOutput target) {
  const PartialTensorShape ts = c->StaticShape(target), zs = c->StaticShape(c->output(0));
  if (ts.IsFullyDefined() && zs.IsFullyDefined() && ts == zs) return g;
  TX_ASSIGN_OR_RETURN(GradOutput st, c->Op("Shape", {target}));
  TX_ASSIGN_OR_RETURN(GradOutput sz, c->Op("Shape", {c->output(0)}));
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> r, c->OpN("BroadcastGradientArgs", {st, sz}));
  TX_ASSIGN_OR_RETURN(GradOutput s, c->Op("Sum", {g, r[0]}, {{"keep_dims", MakeAttr(false)}}));
  return c->Op("Reshape", {s, st});
}

// ---------------------------------------------------------------- binary

// z = x - floor(x / y) * y: dx = dz, dy = -floor(x / y) * dz.
Status FloorModGrad(GradContext* c, GradList* dx) {
  GradOutput g = c->grad(0), x = c->input(0), y = c->input(1);
  TX_ASSIGN_OR_RETURN(GradOutput q, c->Op("FloorDiv", {x, y}));
  TX_ASSIGN_OR_RETURN(GradOutput nq, c->Op("Neg", {q}));
  TX_ASSIGN_OR_RETURN(GradOutput gy, c->Op("Mul", {g, nq}));
  return c->ReduceForBroadcast(g, gy, dx);
}
REGISTER_GRADIENT("FloorMod", FloorModGrad);

// z = x^y: dx = dz * y * x^(y - 1); dy = dz * z * log(x) where x > 0, else 0 (TF's choice: the
// real log is undefined there).
Status PowGrad(GradContext* c, GradList* dx) {
  GradOutput g = c->grad(0), x = c->input(0), y = c->input(1), z = c->output(0);
  const DataType dt = BaseType(x.dtype());
  TX_ASSIGN_OR_RETURN(GradOutput one, c->Const(1.0, dt));
  TX_ASSIGN_OR_RETURN(GradOutput ym1, c->Op("Sub", {y, one}));
  TX_ASSIGN_OR_RETURN(GradOutput p, c->Op("Pow", {x, ym1}));
  TX_ASSIGN_OR_RETURN(GradOutput yp, c->Op("Mul", {y, p}));
  TX_ASSIGN_OR_RETURN(GradOutput gx, c->Op("Mul", {g, yp}));
  TX_ASSIGN_OR_RETURN(GradOutput zero, c->Const(0.0, dt));
  TX_ASSIGN_OR_RETURN(GradOutput mask, c->Op("Greater", {x, zero}));
  TX_ASSIGN_OR_RETURN(GradOutput ones, c->Op("OnesLike", {x}));
  TX_ASSIGN_OR_RETURN(GradOutput zeros, c->Op("ZerosLike", {x}));
  TX_ASSIGN_OR_RETURN(GradOutput safe_x, c->Op("SelectV2", {mask, x, ones}));
  TX_ASSIGN_OR_RETURN(GradOutput log_safe, c->Op("Log", {safe_x}));
  TX_ASSIGN_OR_RETURN(GradOutput log_x, c->Op("SelectV2", {mask, log_safe, zeros}));
  TX_ASSIGN_OR_RETURN(GradOutput zl, c->Op("Mul", {z, log_x}));
  TX_ASSIGN_OR_RETURN(GradOutput gy, c->Op("Mul", {g, zl}));
  return c->ReduceForBroadcast(gx, gy, dx);
}
REGISTER_GRADIENT("Pow", PowGrad);

// z = (x - y)^2: dx = 2 (x - y) dz, dy = -dx.
Status SquaredDifferenceGrad(GradContext* c, GradList* dx) {
  GradOutput g = c->grad(0), x = c->input(0), y = c->input(1);
  TX_ASSIGN_OR_RETURN(GradOutput two, c->Const(2.0, BaseType(x.dtype())));
  TX_ASSIGN_OR_RETURN(GradOutput d, c->Op("Sub", {x, y}));
  TX_ASSIGN_OR_RETURN(GradOutput gd, c->Op("Mul", {g, d}));
  TX_ASSIGN_OR_RETURN(GradOutput gx, c->Op("Mul", {two, gd}));
  TX_ASSIGN_OR_RETURN(GradOutput gy, c->Op("Neg", {gx}));
  return c->ReduceForBroadcast(gx, gy, dx);
}
REGISTER_GRADIENT("SquaredDifference", SquaredDifferenceGrad);

REGISTER_NO_GRADIENT("FloorDiv");
REGISTER_NO_GRADIENT("Less");
REGISTER_NO_GRADIENT("LessEqual");
REGISTER_NO_GRADIENT("Greater");
REGISTER_NO_GRADIENT("GreaterEqual");
REGISTER_NO_GRADIENT("Equal");
REGISTER_NO_GRADIENT("NotEqual");
REGISTER_NO_GRADIENT("LogicalAnd");
REGISTER_NO_GRADIENT("LogicalOr");
REGISTER_NO_GRADIENT("LogicalNot");

// ---------------------------------------------------------------- unary

// y = |x|: dx = dy * sign(x).
Status AbsGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN(GradOutput s, c->Op("Sign", {c->input(0)}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Mul", {c->grad(0), s}));
  return OkStatus();
}
REGISTER_GRADIENT("Abs", AbsGrad);

// Piecewise constant: zeros.
Status SignGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("ZerosLike", {c->input(0)}));
  return OkStatus();
}
REGISTER_GRADIENT("Sign", SignGrad);

// y = f(x) whose gradient is TF's backward op B(y, dy).
Status OutputGradOp(GradContext* c, GradList* dx, const char* op) {
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op(op, {c->output(0), c->grad(0)}));
  return OkStatus();
}
Status ReciprocalGrad(GradContext* c, GradList* dx) {
  return OutputGradOp(c, dx, "ReciprocalGrad");
}
Status RsqrtGrad(GradContext* c, GradList* dx) { return OutputGradOp(c, dx, "RsqrtGrad"); }
Status TanhGrad(GradContext* c, GradList* dx) { return OutputGradOp(c, dx, "TanhGrad"); }
Status SigmoidGrad(GradContext* c, GradList* dx) { return OutputGradOp(c, dx, "SigmoidGrad"); }
REGISTER_GRADIENT("Reciprocal", ReciprocalGrad);
REGISTER_GRADIENT("Rsqrt", RsqrtGrad);
REGISTER_GRADIENT("Tanh", TanhGrad);
REGISTER_GRADIENT("Sigmoid", SigmoidGrad);

// y = ln(1 + x): dx = dy / (1 + x).
Status Log1pGrad(GradContext* c, GradList* dx) {
  GradOutput x = c->input(0);
  TX_ASSIGN_OR_RETURN(GradOutput one, c->Const(1.0, BaseType(x.dtype())));
  TX_ASSIGN_OR_RETURN(GradOutput d, c->Op("AddV2", {one, x}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("RealDiv", {c->grad(0), d}));
  return OkStatus();
}
REGISTER_GRADIENT("Log1p", Log1pGrad);

// y = erf(x): dx = dy * 2 / sqrt(pi) * exp(-x^2).
Status ErfGrad(GradContext* c, GradList* dx) {
  GradOutput x = c->input(0);
  TX_ASSIGN_OR_RETURN(GradOutput k, c->Const(2.0 / std::sqrt(M_PI), BaseType(x.dtype())));
  TX_ASSIGN_OR_RETURN(GradOutput sq, c->Op("Square", {x}));
  TX_ASSIGN_OR_RETURN(GradOutput nsq, c->Op("Neg", {sq}));
  TX_ASSIGN_OR_RETURN(GradOutput e, c->Op("Exp", {nsq}));
  TX_ASSIGN_OR_RETURN(GradOutput ke, c->Op("Mul", {k, e}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Mul", {c->grad(0), ke}));
  return OkStatus();
}
REGISTER_GRADIENT("Erf", ErfGrad);

// y = cos(x): dx = -dy * sin(x).
Status CosGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN(GradOutput s, c->Op("Sin", {c->input(0)}));
  TX_ASSIGN_OR_RETURN(GradOutput ns, c->Op("Neg", {s}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Mul", {c->grad(0), ns}));
  return OkStatus();
}
REGISTER_GRADIENT("Cos", CosGrad);

// y = sin(x): dx = dy * cos(x).
Status SinGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN(GradOutput co, c->Op("Cos", {c->input(0)}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Mul", {c->grad(0), co}));
  return OkStatus();
}
REGISTER_GRADIENT("Sin", SinGrad);

// ---------------------------------------------------------------- selection, clipping, sums

// output = cond ? t : e: dt = cond ? g : 0, de = cond ? 0 : g; none for cond.
Status SelectGrad(GradContext* c, GradList* dx) {
  GradOutput g = c->grad(0), cond = c->input(0);
  TX_ASSIGN_OR_RETURN(GradOutput zeros, c->Op("ZerosLike", {c->input(1)}));
  TX_ASSIGN_OR_RETURN((*dx)[1], c->Op("Select", {cond, g, zeros}));
  TX_ASSIGN_OR_RETURN((*dx)[2], c->Op("Select", {cond, zeros, g}));
  return OkStatus();
}
REGISTER_GRADIENT("Select", SelectGrad);

// As Select, on the broadcast shape, then summed back to t's and e's shapes.
Status SelectV2Grad(GradContext* c, GradList* dx) {
  GradOutput g = c->grad(0), cond = c->input(0);
  TX_ASSIGN_OR_RETURN(GradOutput zeros, c->Op("ZerosLike", {g}));
  TX_ASSIGN_OR_RETURN(GradOutput gt, c->Op("SelectV2", {cond, g, zeros}));
  TX_ASSIGN_OR_RETURN(GradOutput ge, c->Op("SelectV2", {cond, zeros, g}));
  TX_ASSIGN_OR_RETURN((*dx)[1], ReduceToInput(c, gt, c->input(1)));
  TX_ASSIGN_OR_RETURN((*dx)[2], ReduceToInput(c, ge, c->input(2)));
  return OkStatus();
}
REGISTER_GRADIENT("SelectV2", SelectV2Grad);

// output = clip(t, lo, hi): the gradient goes to lo where t < lo, to hi where t > hi, and to t
// elsewhere (TF's masks); lo and hi's parts are summed back to their shapes.
Status ClipByValueGrad(GradContext* c, GradList* dx) {
  GradOutput g = c->grad(0), t = c->input(0), lo = c->input(1), hi = c->input(2);
  TX_ASSIGN_OR_RETURN(GradOutput below, c->Op("Less", {t, lo}));
  TX_ASSIGN_OR_RETURN(GradOutput above, c->Op("Greater", {t, hi}));
  TX_ASSIGN_OR_RETURN(GradOutput outside, c->Op("LogicalOr", {below, above}));
  TX_ASSIGN_OR_RETURN(GradOutput zeros, c->Op("ZerosLike", {g}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("SelectV2", {outside, zeros, g}));
  TX_ASSIGN_OR_RETURN(GradOutput glo, c->Op("SelectV2", {below, g, zeros}));
  TX_ASSIGN_OR_RETURN(GradOutput ghi, c->Op("SelectV2", {above, g, zeros}));
  TX_ASSIGN_OR_RETURN((*dx)[1], ReduceToInput(c, glo, lo));
  TX_ASSIGN_OR_RETURN((*dx)[2], ReduceToInput(c, ghi, hi));
  return OkStatus();
}
REGISTER_GRADIENT("ClipByValue", ClipByValueGrad);

// sum = x0 + ... + xN-1: every input gets the gradient.
Status AddNGrad(GradContext* c, GradList* dx) {
  GradOutput g = c->grad(0);
  for (auto& d : *dx) d = g;
  return OkStatus();
}
REGISTER_GRADIENT("AddN", AddNGrad);

}  // namespace
}  // namespace tensorflux
