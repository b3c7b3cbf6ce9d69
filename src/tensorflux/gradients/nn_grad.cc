// Gradients of the NN ops of ops/nn_ops.cc (the formulas of TensorFlow's nn_grad.py):
// BiasAdd, BiasAddGrad, Softmax, LogSoftmax, SparseSoftmaxCrossEntropyWithLogits,
// SoftmaxCrossEntropyWithLogits, L2Loss.
#include <vector>

#include "tensorflux/core/tensor.h"
#include "tensorflux/gradients/gradients.h"

namespace tensorflux {
namespace {

using GradList = std::vector<GradOutput>;

GradAttrs DataFormatAttr(GradContext* c) {
  std::string data_format = "NHWC";
  if (!c->GetAttr("data_format", &data_format).ok()) data_format = "NHWC";
  return {{"data_format", MakeAttr(data_format)}};
}

// y = value + bias (bias along the channel dim): dvalue = dy, dbias = BiasAddGrad(dy).
Status BiasAddGradient(GradContext* c, GradList* dx) {
  GradOutput g = c->grad(0);
  (*dx)[0] = g;
  TX_ASSIGN_OR_RETURN((*dx)[1], c->Op("BiasAddGrad", {g}, DataFormatAttr(c)));
  return OkStatus();
}
REGISTER_GRADIENT("BiasAdd", BiasAddGradient);

// y[c] = sum of out_backprop over all but the channel dim: d out_backprop = dy broadcast along
// the channel dim, i.e. BiasAdd(zeros like out_backprop, dy) (TF reshapes and tiles instead).
Status BiasAddGradGradient(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN(GradOutput zeros, c->Op("ZerosLike", {c->input(0)}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("BiasAdd", {zeros, c->grad(0)}, DataFormatAttr(c)));
  return OkStatus();
}
REGISTER_GRADIENT("BiasAddGrad", BiasAddGradGradient);

// sum(t, axis=-1, keep_dims=true).
StatusOr<GradOutput> SumLastAxis(GradContext* c, GradOutput t) {
  TX_ASSIGN_OR_RETURN(GradOutput axis, c->Const(Tensor::Scalar<int32_t>(-1)));
  return c->Op("Sum", {t, axis}, {{"keep_dims", MakeAttr(true)}});
}

// s = softmax(x): dx = (dy - sum(dy * s, -1)) * s.
Status SoftmaxGradient(GradContext* c, GradList* dx) {
  GradOutput g = c->grad(0), s = c->output(0);
  TX_ASSIGN_OR_RETURN(GradOutput gs, c->Op("Mul", {g, s}));
  TX_ASSIGN_OR_RETURN(GradOutput sum, SumLastAxis(c, gs));
  TX_ASSIGN_OR_RETURN(GradOutput diff, c->Op("Sub", {g, sum}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Mul", {diff, s}));
  return OkStatus();
}
REGISTER_GRADIENT("Softmax", SoftmaxGradient);

// y = log_softmax(x): dx = dy - sum(dy, -1) * exp(y).
Status LogSoftmaxGradient(GradContext* c, GradList* dx) {
  GradOutput g = c->grad(0);
  TX_ASSIGN_OR_RETURN(GradOutput softmax, c->Op("Exp", {c->output(0)}));
  TX_ASSIGN_OR_RETURN(GradOutput sum, SumLastAxis(c, g));
  TX_ASSIGN_OR_RETURN(GradOutput prod, c->Op("Mul", {sum, softmax}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Sub", {g, prod}));
  return OkStatus();
}
REGISTER_GRADIENT("LogSoftmax", LogSoftmaxGradient);

// grad_loss [B] as [B, 1], to scale the rows of a [B, C] tensor.
StatusOr<GradOutput> LossGradColumn(GradContext* c) {
  TX_ASSIGN_OR_RETURN(GradOutput axis, c->Const(Tensor::Scalar<int32_t>(-1)));
  return c->Op("ExpandDims", {c->grad(0), axis});
}

// The part of d features that comes through the backprop output (= softmax(features) - labels)
// when a gradient gg reaches it (a gradient of a gradient): softmax's Jacobian applied to gg,
// (gg - sum(gg * softmax, -1)) * softmax, TF's second-order term. Null when none reaches it.
StatusOr<GradOutput> BackpropTerm(GradContext* c) {
  if (!c->has_grad(1)) return GradOutput{};
  GradOutput gg = c->grad(1);
  TX_ASSIGN_OR_RETURN(GradOutput softmax, c->Op("Softmax", {c->input(0)}));
  TX_ASSIGN_OR_RETURN(GradOutput prod, c->Op("Mul", {gg, softmax}));
  TX_ASSIGN_OR_RETURN(GradOutput sum, SumLastAxis(c, prod));
  TX_ASSIGN_OR_RETURN(GradOutput diff, c->Op("Sub", {gg, sum}));
  return c->Op("Mul", {diff, softmax});
}

// a + b, or a when b is null.
StatusOr<GradOutput> AddIfValid(GradContext* c, GradOutput a, GradOutput b) {
  if (!b.valid()) return a;
  return c->Op("AddV2", {a, b});
}

// (loss, backprop) = sparse_xent(features, labels), TF's
// _SparseSoftmaxCrossEntropyWithLogitsGrad: d features = grad_loss[:, None] * backprop, plus
// the second-order term above when a gradient reaches backprop. Labels are integers: no gradient.
Status SparseXentGradient(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN(GradOutput col, LossGradColumn(c));
  TX_ASSIGN_OR_RETURN(GradOutput first, c->Op("Mul", {col, c->output(1)}));
  TX_ASSIGN_OR_RETURN(GradOutput second, BackpropTerm(c));
  TX_ASSIGN_OR_RETURN((*dx)[0], AddIfValid(c, first, second));
  return OkStatus();
}
REGISTER_GRADIENT("SparseSoftmaxCrossEntropyWithLogits", SparseXentGradient);

// (loss, backprop) = xent(features, labels), both broadcast to [B, C] (TF's
// _SoftmaxCrossEntropyWithLogitsGrad):
//   d features = grad_loss[:, None] * backprop (+ the second-order term above),
//   d labels   = grad_loss[:, None] * -log_softmax(features) (- gg, the gradient reaching
//                backprop = softmax - labels; TF leaves this term out, we keep it so the
//                gradient is exact),
// each summed back to its input's shape when the inputs were broadcast. The loss gradient
// assumes each labels row sums to 1 (as backprop does).
Status XentGradient(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN(GradOutput col, LossGradColumn(c));
  TX_ASSIGN_OR_RETURN(GradOutput gf, c->Op("Mul", {col, c->output(1)}));
  TX_ASSIGN_OR_RETURN(GradOutput second, BackpropTerm(c));
  TX_ASSIGN_OR_RETURN(gf, AddIfValid(c, gf, second));
  TX_ASSIGN_OR_RETURN(GradOutput log_softmax, c->Op("LogSoftmax", {c->input(0)}));
  TX_ASSIGN_OR_RETURN(GradOutput neg, c->Op("Neg", {log_softmax}));
  TX_ASSIGN_OR_RETURN(GradOutput gl, c->Op("Mul", {col, neg}));
  if (c->has_grad(1)) {
    TX_ASSIGN_OR_RETURN(gl, c->Op("Sub", {gl, c->grad(1)}));
  }
  const PartialTensorShape fs = c->StaticShape(c->input(0));
  const PartialTensorShape ls = c->StaticShape(c->input(1));
  if (fs.IsFullyDefined() && ls.IsFullyDefined() && fs == ls) {  // not broadcast
    (*dx)[0] = gf;
    (*dx)[1] = gl;
    return OkStatus();
  }
  return c->ReduceForBroadcast(gf, gl, dx);
}
REGISTER_GRADIENT("SoftmaxCrossEntropyWithLogits", XentGradient);

// y = sum(t^2) / 2: dt = t * dy.
Status L2LossGradient(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Mul", {c->input(0), c->grad(0)}));
  return OkStatus();
}
REGISTER_GRADIENT("L2Loss", L2LossGradient);

}  // namespace
}  // namespace tensorflux
