// Numeric gradient checks (float64 central differences) of the pooling and batch-norm gradients
// (gradients/pool_bn_grad.cc). Max pooling inputs are random uniform values, so ties (where the
// max is not differentiable) do not occur in practice.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gradient_checker.h"

namespace tensorflux::gradient_check {
namespace {

GradAttrs Window(int kr, int kc, int sr, int sc, const char* padding) {
  return {{"ksize", MakeAttr(absl::Span<const int64_t>(std::vector<int64_t>{1, kr, kc, 1}))},
          {"strides", MakeAttr(absl::Span<const int64_t>(std::vector<int64_t>{1, sr, sc, 1}))},
          {"padding", MakeAttr(std::string(padding))}};
}

GradAttrs ExplicitWindow() {
  GradAttrs a = Window(3, 3, 2, 2, "EXPLICIT");
  a.push_back({"explicit_paddings",
               MakeAttr(absl::Span<const int64_t>(std::vector<int64_t>{0, 0, 1, 2, 0, 1, 0, 0}))});
  return a;
}

GradCheckRow Pool(const char* op, const char* label, TensorShape in, GradAttrs window) {
  GradCheckRow r;
  r.op = op;
  r.label = label;
  r.shapes = {in};
  r.attrs = std::move(window);
  return r;
}

// AvgPoolGrad as a function of its grad input (orig_input_shape is a constant).
GradCheckRow AvgPoolGradRow(const char* label, std::vector<int32_t> in, TensorShape pooled,
                            GradAttrs window) {
  GradCheckRow r;
  r.op = "AvgPoolGrad";
  r.label = label;
  r.shapes = {pooled};
  r.consts = {{0, Tensor::FromVector<int32_t>(absl::Span<const int32_t>(in), TensorShape({4}))}};
  r.attrs = std::move(window);
  return r;
}

// MaxPoolGrad / MaxPoolGradGrad as functions of their grad input (orig_input and orig_output
// are constants: random values without ties, orig_output computed from them by a MaxPool node).
GradCheckRow MaxPoolBackwardRow(const char* op, const char* label, TensorShape in,
                                GradAttrs window) {
  GradCheckRow r;
  r.op = op;
  r.label = label;
  const bool grad_grad = std::string(op) == "MaxPoolGradGrad";
  // The differentiated input: pooled-shaped for MaxPoolGrad, input-shaped for MaxPoolGradGrad.
  r.shapes = {in};
  r.build = [op, in, window, grad_grad](Graph* g, const std::vector<GradOutput>& xs)
      -> StatusOr<std::vector<GradOutput>> {
    std::vector<double> v(in.num_elements());
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(1.7 * i + 0.3) * 3;  // distinct values
    NodeDef def;
    def.set_name("orig_input");
    def.set_op("Const");
    AddNodeAttr("value", Tensor::FromVector<double>(absl::Span<const double>(v), in), &def);
    AddNodeAttr("dtype", DT_DOUBLE, &def);
    TX_ASSIGN_OR_RETURN(Node * x, g->AddNode(def));
    TX_ASSIGN_OR_RETURN(Node * y, AddNodeFromInputs(g, "", "MaxPool", {GradOutput{x, 0}}, window));
    GradOutput grad = xs[0];
    if (!grad_grad) {  // MaxPoolGrad takes a pooled-shaped grad: pool the placeholder first
      TX_ASSIGN_OR_RETURN(Node * p, AddNodeFromInputs(g, "", "AvgPool", {xs[0]}, window));
      grad = GradOutput{p, 0};
    }
    TX_ASSIGN_OR_RETURN(Node * z, AddNodeFromInputs(g, "", op,
                                                    {GradOutput{x, 0}, GradOutput{y, 0}, grad},
                                                    window));
    return std::vector<GradOutput>{GradOutput{z, 0}};
  };
  return r;
}

const std::vector<GradCheckRow>& PoolRows() {
  static const auto* rows = new std::vector<GradCheckRow>{
      Pool("MaxPool", "2x2_s2_valid", TensorShape({2, 4, 4, 2}), Window(2, 2, 2, 2, "VALID")),
      Pool("MaxPool", "3x3_s2_same_odd", TensorShape({1, 5, 7, 2}), Window(3, 3, 2, 2, "SAME")),
      Pool("MaxPool", "2x3_s1x2_same", TensorShape({1, 4, 5, 3}), Window(2, 3, 1, 2, "SAME")),
      Pool("MaxPool", "3x3_s2_explicit", TensorShape({1, 4, 5, 2}), ExplicitWindow()),
      Pool("AvgPool", "2x2_s2_valid", TensorShape({2, 4, 4, 2}), Window(2, 2, 2, 2, "VALID")),
      Pool("AvgPool", "3x3_s2_same_odd", TensorShape({1, 5, 7, 2}), Window(3, 3, 2, 2, "SAME")),
      Pool("AvgPool", "3x2_s1_same", TensorShape({2, 3, 4, 1}), Window(3, 2, 1, 1, "SAME")),
      MaxPoolBackwardRow("MaxPoolGrad", "3x3_s2_same", TensorShape({1, 5, 6, 2}),
                         Window(3, 3, 2, 2, "SAME")),
      MaxPoolBackwardRow("MaxPoolGradGrad", "2x3_s1x2_valid", TensorShape({2, 4, 5, 2}),
                         Window(2, 3, 1, 2, "VALID")),
      AvgPoolGradRow("3x3_s2_same", {1, 5, 7, 2}, TensorShape({1, 3, 4, 2}),
                     Window(3, 3, 2, 2, "SAME")),
  };
  return *rows;
}
TX_GRAD_CHECK_ROWS(Pool, PoolRows());

Tensor Doubles(std::vector<double> v) {
  return Tensor::FromVector<double>(absl::Span<const double>(v),
                                    TensorShape({static_cast<int64_t>(v.size())}));
}

// FusedBatchNormV3's y as a function of x, scale and offset. Training: mean and variance are
// empty constants (unused with exponential_avg_factor 1) or, with a factor, constants blended
// into the statistics outputs only; inference: constant population statistics.
GradCheckRow BatchNorm(const char* label, TensorShape x, bool training, const char* format,
                       std::vector<double> mean, std::vector<double> var, float factor = 1.0f) {
  const int64_t channels = x.dim_size(std::string(format) == "NHWC" ? 3 : 1);
  GradCheckRow r;
  r.op = "FusedBatchNormV3";
  r.label = label;
  r.shapes = {x, TensorShape({channels}), TensorShape({channels})};
  r.ranges = {{-2, 2}, {0.5, 2}, {-1, 1}};
  r.consts = {{3, Doubles(mean)}, {4, Doubles(var)}};
  r.attrs = {{"epsilon", MakeAttr(0.001f)},
             {"is_training", MakeAttr(training)},
             {"data_format", MakeAttr(std::string(format))},
             {"exponential_avg_factor", MakeAttr(factor)}};
  r.outputs = {0};
  return r;
}

const std::vector<GradCheckRow>& BatchNormRows() {
  static const auto* rows = new std::vector<GradCheckRow>{
      BatchNorm("training_nhwc", TensorShape({2, 3, 2, 3}), true, "NHWC", {}, {}),
      BatchNorm("training_nchw", TensorShape({2, 3, 2, 2}), true, "NCHW", {}, {}),
      BatchNorm("training_factor", TensorShape({3, 2, 2, 2}), true, "NHWC", {0.1, -0.2},
                {1.5, 0.7}, 0.25f),
      BatchNorm("inference_nhwc", TensorShape({2, 2, 3, 3}), false, "NHWC", {0.3, -0.5, 0.1},
                {0.8, 1.7, 0.4}),
      BatchNorm("inference_nchw", TensorShape({2, 2, 3, 2}), false, "NCHW", {0.2, -0.1},
                {0.6, 2.5}),
  };
  return *rows;
}
TX_GRAD_CHECK_ROWS(BatchNorm, BatchNormRows());

}  // namespace
}  // namespace tensorflux::gradient_check
