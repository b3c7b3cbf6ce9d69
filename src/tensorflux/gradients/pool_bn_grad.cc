// Gradients of the pooling and batch-normalization ops (the formulas of TensorFlow's nn_grad.py):
//   MaxPool  -> MaxPoolGrad(x, y, dy) with the forward node's window attrs;
//   AvgPool  -> AvgPoolGrad(Shape(x), dy);
//   AvgPoolGrad -> (none for orig_input_shape, AvgPool(d output)): AvgPoolGrad is linear in grad
//              and its adjoint is AvgPool with the same window;
//   FusedBatchNormV3 -> FusedBatchNormGradV3 (see below).
//   MaxPoolGrad -> (zeros, zeros, MaxPoolGradGrad(x, y, d output)): MaxPoolGrad is linear in
//              grad (it scatters grad to the argmax positions); its adjoint gathers from them.
//              The argmax is piecewise constant in orig_input, so orig_input and orig_output
//              get zeros (as TF's _MaxPoolGradGrad gives);
//   MaxPoolGradGrad -> (zeros, zeros, MaxPoolGrad(x, y, d output)), the adjoint back again.

#include <string>
#include <vector>

#include "tensorflux/gradients/gradients.h"

namespace tensorflux {
namespace {

using GradList = std::vector<GradOutput>;

// The window attrs of the forward pooling node, to copy onto its backward op.
Status PoolAttrs(GradContext* c, bool with_explicit, GradAttrs* attrs) {
  std::vector<int64_t> ksize, strides, explicit_paddings;
  std::string padding, data_format;
  TX_RETURN_IF_ERROR(c->GetAttr("ksize", &ksize));
  TX_RETURN_IF_ERROR(c->GetAttr("strides", &strides));
  TX_RETURN_IF_ERROR(c->GetAttr("padding", &padding));
  if (c->GetAttr("data_format", &data_format).ok()) {
    attrs->push_back({"data_format", MakeAttr(data_format)});
  }
  attrs->push_back({"ksize", MakeAttr(absl::Span<const int64_t>(ksize))});
  attrs->push_back({"strides", MakeAttr(absl::Span<const int64_t>(strides))});
  attrs->push_back({"padding", MakeAttr(padding)});
  if (with_explicit && c->GetAttr("explicit_paddings", &explicit_paddings).ok()) {
    attrs->push_back({"explicit_paddings", MakeAttr(absl::Span<const int64_t>(explicit_paddings))});
  }
  return OkStatus();
}

Status MaxPoolGradFn(GradContext* c, GradList* dx) {
  GradAttrs attrs;
  TX_RETURN_IF_ERROR(PoolAttrs(c, /*with_explicit=*/true, &attrs));
  TX_ASSIGN_OR_RETURN((*dx)[0],
                      c->Op("MaxPoolGrad", {c->input(0), c->output(0), c->grad(0)}, attrs));
  return OkStatus();
}
REGISTER_GRADIENT("MaxPool", MaxPoolGradFn);

Status AvgPoolGradFn(GradContext* c, GradList* dx) {
  GradAttrs attrs;
  TX_RETURN_IF_ERROR(PoolAttrs(c, /*with_explicit=*/false, &attrs));
  TX_ASSIGN_OR_RETURN(GradOutput shape, c->Op("Shape", {c->input(0)}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("AvgPoolGrad", {shape, c->grad(0)}, attrs));
  return OkStatus();
}
REGISTER_GRADIENT("AvgPool", AvgPoolGradFn);

Status AvgPoolGradGradFn(GradContext* c, GradList* dx) {
  GradAttrs attrs;
  TX_RETURN_IF_ERROR(PoolAttrs(c, /*with_explicit=*/false, &attrs));
  TX_ASSIGN_OR_RETURN((*dx)[1], c->Op("AvgPool", {c->grad(0)}, attrs));
  return OkStatus();
}
REGISTER_GRADIENT("AvgPoolGrad", AvgPoolGradGradFn);

// Gradients of the linear-in-grad max pooling backward ops: each is the other's adjoint.
Status MaxPoolAdjoint(GradContext* c, GradList* dx, const char* adjoint) {
  GradAttrs attrs;
  TX_RETURN_IF_ERROR(PoolAttrs(c, /*with_explicit=*/false, &attrs));
  TX_ASSIGN_OR_RETURN((*dx)[2], c->Op(adjoint, {c->input(0), c->input(1), c->grad(0)}, attrs));
  // TF's gradients give orig_input and orig_output zeros (not None): so do we.
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("ZerosLike", {c->input(0)}));
  TX_ASSIGN_OR_RETURN((*dx)[1], c->Op("ZerosLike", {c->input(1)}));
  return OkStatus();
}
Status MaxPoolGradGradFn(GradContext* c, GradList* dx) {
  std::string padding;
  TX_RETURN_IF_ERROR(c->GetAttr("padding", &padding));
  if (padding == "EXPLICIT") {
    return errors::Unimplemented("The gradient of MaxPoolGrad with EXPLICIT padding (node ",
                                 c->op().name(), ") needs MaxPoolGradGrad, which takes only "
                                 "SAME or VALID (as in TensorFlow)");
  }
  return MaxPoolAdjoint(c, dx, "MaxPoolGradGrad");
}
Status MaxPoolGradGradGradFn(GradContext* c, GradList* dx) {
  return MaxPoolAdjoint(c, dx, "MaxPoolGrad");
}
REGISTER_GRADIENT("MaxPoolGrad", MaxPoolGradGradFn);
REGISTER_GRADIENT("MaxPoolGradGrad", MaxPoolGradGradGradFn);

// TF's _FusedBatchNormV3Grad: FusedBatchNormGradV3(dy, x, scale, r1, r2, reserve_space_3) with the
// forward node's epsilon, data_format and is_training. Training: r1, r2 are the forward outputs
// reserve_space_1/2 (batch mean, biased variance) and the formula differentiates through the
// batch statistics. Inference: r1, r2 are the mean and variance inputs, held constant. Only the
// gradient of y is used (as in TF, gradients reaching the statistics outputs are ignored); the
// mean and variance inputs get none.
Status FusedBatchNormV3GradFn(GradContext* c, GradList* dx) {
  float epsilon = 1e-4f;
  bool is_training = true;
  std::string data_format = "NHWC";
  TX_RETURN_IF_ERROR(c->GetAttr("epsilon", &epsilon));
  TX_RETURN_IF_ERROR(c->GetAttr("is_training", &is_training));
  TX_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
  const GradOutput r1 = is_training ? c->output(3) : c->input(3);
  const GradOutput r2 = is_training ? c->output(4) : c->input(4);
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> g,
                      c->OpN("FusedBatchNormGradV3",
                             {c->grad(0), c->input(0), c->input(1), r1, r2, c->output(5)},
                             {{"epsilon", MakeAttr(epsilon)},
                              {"data_format", MakeAttr(data_format)},
                              {"is_training", MakeAttr(is_training)}}));
  (*dx)[0] = g[0];
  (*dx)[1] = g[1];
  (*dx)[2] = g[2];
  return OkStatus();
}
REGISTER_GRADIENT("FusedBatchNormV3", FusedBatchNormV3GradFn);

}  // namespace
}  // namespace tensorflux
