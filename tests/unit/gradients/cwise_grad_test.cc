// Numeric gradient checks (float64 central differences, relative error < 1e-6) of the second
// half of the elementwise family (gradients/cwise_grad.cc, activation_grad.cc): FloorMod, Pow,
// SquaredDifference, the unary math ops, activations, Select/SelectV2/ClipByValue, AddN with
// fan-out, and the second derivatives through TF's backward ops (*Grad). Ranges keep inputs
// away from kinks and poles (|x| at 0, Relu at 0, FloorMod where x / y crosses an integer).
#include <vector>

#include "gradient_checker.h"

namespace tensorflux::gradient_check {
namespace {

Tensor Bools(std::vector<bool> v, TensorShape shape) {
  Tensor t(DT_BOOL, shape);
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i];
  return t;
}

// AddN(x0, x1, x0): x0 fans out twice into one node; its gradient parts are summed with AddN.
StatusOr<std::vector<GradOutput>> AddNFanOut(Graph* g, const std::vector<GradOutput>& xs) {
  TX_ASSIGN_OR_RETURN(Node * sq, AddNodeFromInputs(g, "", "Square", {xs[1]}));
  TX_ASSIGN_OR_RETURN(Node * n, AddNodeFromInputs(g, "", "AddN", {xs[0], {sq, 0}, xs[0]}));
  return std::vector<GradOutput>{{n, 0}};
}

// tanh(x) * sigmoid(x) + relu(x): one x feeding three activations.
StatusOr<std::vector<GradOutput>> ActivationFanOut(Graph* g, const std::vector<GradOutput>& xs) {
  TX_ASSIGN_OR_RETURN(Node * t, AddNodeFromInputs(g, "", "Tanh", {xs[0]}));
  TX_ASSIGN_OR_RETURN(Node * s, AddNodeFromInputs(g, "", "Sigmoid", {xs[0]}));
  TX_ASSIGN_OR_RETURN(Node * r, AddNodeFromInputs(g, "", "Relu", {xs[0]}));
  TX_ASSIGN_OR_RETURN(Node * m, AddNodeFromInputs(g, "", "Mul", {{t, 0}, {s, 0}}));
  TX_ASSIGN_OR_RETURN(Node * y, AddNodeFromInputs(g, "", "AddV2", {{m, 0}, {r, 0}}));
  return std::vector<GradOutput>{{y, 0}};
}

const std::vector<GradCheckRow>& CwiseRows() {
  const Tensor cond23 = Bools({true, false, false, true, true, false}, TensorShape({2, 3}));
  static const auto* rows = new std::vector<GradCheckRow>{
      // Binary.
      {.op = "FloorMod", .shapes = {{2, 3}, {2, 3}}, .ranges = {{0.1, 0.9}, {1.1, 2}}},
      {.op = "FloorMod",
       .label = "bcast_neg",
       .shapes = {{2, 3}, {3}},
       .ranges = {{2.1, 2.9}, {-2, -1.5}}},  // x / y in (-1.95, -1.05): floor -2
      {.op = "Pow", .shapes = {{2, 3}, {2, 3}}, .ranges = {{0.5, 2}, {-2, 2}}},
      {.op = "Pow", .label = "bcast", .shapes = {{2, 3}, TensorShape()}, .ranges = {{0.5, 2}, {1, 3}}},
      {.op = "SquaredDifference", .shapes = {{2, 3}, {2, 3}}},
      {.op = "SquaredDifference", .label = "bcast", .shapes = {{2, 1}, {1, 3}}},
      // Unary math.
      {.op = "Abs", .label = "pos", .shapes = {{2, 3}}, .ranges = {{0.5, 2}}},
      {.op = "Abs", .label = "neg", .shapes = {{2, 3}}, .ranges = {{-2, -0.5}}},
      {.op = "Sign", .shapes = {{2, 3}}, .ranges = {{0.5, 2}}},
      {.op = "Reciprocal", .shapes = {{2, 3}}, .ranges = {{0.5, 2}}},
      {.op = "Reciprocal", .label = "neg", .shapes = {{2, 3}}, .ranges = {{-2, -0.5}}},
      {.op = "Rsqrt", .shapes = {{2, 3}}, .ranges = {{0.5, 3}}},
      {.op = "Sqrt", .label = "scalar", .shapes = {TensorShape()}, .ranges = {{0.5, 3}}},
      {.op = "Log1p", .shapes = {{2, 3}}, .ranges = {{-0.5, 3}}},
      {.op = "Tanh", .shapes = {{2, 3}}},
      {.op = "Sigmoid", .shapes = {{2, 3}}, .ranges = {{-4, 4}}},
      {.op = "Erf", .shapes = {{2, 3}}},
      {.op = "Cos", .shapes = {{2, 3}}, .ranges = {{-3, 3}}},
      {.op = "Sin", .shapes = {{2, 3}}, .ranges = {{-3, 3}}},
      // Activations, each side of the kink.
      {.op = "Relu", .label = "pos", .shapes = {{2, 3}}, .ranges = {{0.1, 2}}},
      {.op = "Relu", .label = "neg", .shapes = {{2, 3}}, .ranges = {{-2, -0.1}}},
      {.op = "Relu6", .label = "mid", .shapes = {{2, 3}}, .ranges = {{0.1, 5.9}}},
      {.op = "Relu6", .label = "out", .shapes = {{2, 3}}, .ranges = {{6.1, 8}}},
      {.op = "LeakyRelu",
       .label = "neg",
       .shapes = {{2, 3}},
       .ranges = {{-2, -0.1}},
       .attrs = {{"alpha", MakeAttr(0.3f)}}},
      {.op = "LeakyRelu", .label = "pos", .shapes = {{2, 3}}, .ranges = {{0.1, 2}}},
      {.op = "Elu", .label = "neg", .shapes = {{2, 3}}, .ranges = {{-2, -0.1}}},
      {.op = "Elu", .label = "pos", .shapes = {{2, 3}}, .ranges = {{0.1, 2}}},
      {.op = "Selu", .label = "neg", .shapes = {{2, 3}}, .ranges = {{-2, -0.1}}},
      {.op = "Selu", .label = "pos", .shapes = {{2, 3}}, .ranges = {{0.1, 2}}},
      {.op = "Softplus", .shapes = {{2, 3}}, .ranges = {{-3, 3}}},
      {.op = "Tanh", .label = "fan_out", .shapes = {{2, 3}}, .ranges = {{0.1, 2}},
       .build = ActivationFanOut},
      // Selection, clipping, sums.
      {.op = "Select", .shapes = {{2, 3}, {2, 3}}, .consts = {{0, cond23}}},
      {.op = "Select",
       .label = "rows",
       .shapes = {{2, 3}, {2, 3}},
       .consts = {{0, Bools({false, true}, TensorShape({2}))}}},
      {.op = "SelectV2", .shapes = {{2, 3}, {2, 3}}, .consts = {{0, cond23}}},
      {.op = "SelectV2",
       .label = "bcast",
       .shapes = {{1, 3}, TensorShape()},
       .consts = {{0, Bools({true, false}, TensorShape({2, 1}))}}},
      {.op = "ClipByValue",
       .shapes = {{3, 4}, TensorShape(), TensorShape()},
       .ranges = {{-2, 2}, {-1.05, -0.95}, {0.95, 1.05}}},
      {.op = "ClipByValue",
       .label = "bcast",
       .shapes = {{3, 4}, {4}, {3, 1}},
       .ranges = {{-2, 2}, {-1.05, -0.95}, {0.95, 1.05}}},
      {.op = "AddN", .label = "fan_out", .shapes = {{2, 3}, {2, 3}}, .build = AddNFanOut},
      // Backward ops (second derivatives).
      {.op = "ReluGrad", .shapes = {{2, 3}, {2, 3}}, .ranges = {{-2, 2}, {0.1, 2}}},
      {.op = "ReluGrad", .label = "off", .shapes = {{2, 3}, {2, 3}}, .ranges = {{-2, 2}, {-2, -0.1}}},
      {.op = "Relu6Grad", .shapes = {{2, 3}, {2, 3}}, .ranges = {{-2, 2}, {0.1, 5.9}}},
      {.op = "LeakyReluGrad",
       .shapes = {{2, 3}, {2, 3}},
       .ranges = {{-2, 2}, {-2, -0.1}},
       .attrs = {{"alpha", MakeAttr(0.3f)}}},
      {.op = "SoftplusGrad", .shapes = {{2, 3}, {2, 3}}, .ranges = {{-2, 2}, {-3, 3}}},
      {.op = "EluGrad", .label = "neg", .shapes = {{2, 3}, {2, 3}}, .ranges = {{-2, 2}, {-0.9, -0.1}}},
      {.op = "EluGrad", .label = "pos", .shapes = {{2, 3}, {2, 3}}, .ranges = {{-2, 2}, {0.1, 2}}},
      {.op = "SeluGrad", .label = "neg", .shapes = {{2, 3}, {2, 3}}, .ranges = {{-2, 2}, {-1.5, -0.1}}},
      {.op = "SeluGrad", .label = "pos", .shapes = {{2, 3}, {2, 3}}, .ranges = {{-2, 2}, {0.1, 2}}},
      {.op = "TanhGrad", .shapes = {{2, 3}, {2, 3}}, .ranges = {{-0.9, 0.9}, {-2, 2}}},
      {.op = "SigmoidGrad", .shapes = {{2, 3}, {2, 3}}, .ranges = {{0.1, 0.9}, {-2, 2}}},
      {.op = "RsqrtGrad", .shapes = {{2, 3}, {2, 3}}, .ranges = {{0.5, 2}, {-2, 2}}},
      {.op = "SqrtGrad", .shapes = {{2, 3}, {2, 3}}, .ranges = {{0.5, 2}, {-2, 2}}},
      {.op = "ReciprocalGrad", .shapes = {{2, 3}, {2, 3}}, .ranges = {{-2, 2}, {-2, 2}}},
  };
  return *rows;
}

TX_GRAD_CHECK_ROWS(Cwise, CwiseRows());

}  // namespace
}  // namespace tensorflux::gradient_check
