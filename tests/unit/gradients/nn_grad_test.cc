// Numeric gradient checks (central differences in float64, relative error below 1e-6) of the NN
// ops' gradients (gradients/nn_grad.cc): BiasAdd (NHWC, NCHW) and BiasAddGrad, Softmax and
// LogSoftmax (rank 1 to 3), both softmax cross entropies (the loss alone, and loss and backprop
// together, which exercises the second-order term), L2Loss, and
// BatchMatMulV2 (every adjoint combination, broadcast batch dims, rank-2 operands).
#include <cstdint>
#include <string>
#include <vector>

#include "gradient_checker.h"

namespace tensorflux::gradient_check {
namespace {

GradAttrs Format(const char* f) { return {{"data_format", MakeAttr(std::string(f))}}; }

GradAttrs Adj(bool x, bool y) { return {{"adj_x", MakeAttr(x)}, {"adj_y", MakeAttr(y)}}; }

Tensor Labels32(std::vector<int32_t> v) {
  return Tensor::FromVector<int32_t>(absl::Span<const int32_t>(v),
                                     TensorShape({static_cast<int64_t>(v.size())}));
}
Tensor Labels64(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(absl::Span<const int64_t>(v),
                                     TensorShape({static_cast<int64_t>(v.size())}));
}

// SoftmaxCrossEntropyWithLogits(features, softmax(x1)): labels that are distributions, as the
// op's backprop assumes (x1 used once, so no AddN is needed).
// With both_outputs, loss and backprop are both checked (the gradient's second-order term).
GradCheckRow XentRow(const char* label, TensorShape features, TensorShape labels,
                     bool both_outputs = false) {
  GradCheckRow r;
  r.op = "SoftmaxCrossEntropyWithLogits";
  r.label = label;
  r.shapes = {features, labels};
  r.build = [both_outputs](Graph* g, const std::vector<GradOutput>& xs)
      -> StatusOr<std::vector<GradOutput>> {
    TX_ASSIGN_OR_RETURN(Node * dist, AddNodeFromInputs(g, "", "Softmax", {xs[1]}));
    TX_ASSIGN_OR_RETURN(Node * xent, AddNodeFromInputs(g, "", "SoftmaxCrossEntropyWithLogits",
                                                       {xs[0], {dist, 0}}));
    if (both_outputs) return std::vector<GradOutput>{{xent, 0}, {xent, 1}};
    return std::vector<GradOutput>{{xent, 0}};
  };
  return r;
}

const std::vector<GradCheckRow>& NnRows() {
  static const auto* rows = new std::vector<GradCheckRow>{
      {.op = "BiasAdd", .label = "matrix", .shapes = {{2, 3}, {3}}},
      {.op = "BiasAdd", .label = "nhwc", .shapes = {{2, 2, 3, 3}, {3}}},
      {.op = "BiasAdd", .label = "nchw", .shapes = {{2, 3, 2, 2}, {3}}, .attrs = Format("NCHW")},
      {.op = "BiasAdd", .label = "nchw_rank3", .shapes = {{2, 4, 3}, {4}},
       .attrs = Format("NCHW")},
      {.op = "BiasAddGrad", .label = "nhwc", .shapes = {{2, 3, 4}}},
      {.op = "BiasAddGrad", .label = "nchw", .shapes = {{2, 3, 2, 2}}, .attrs = Format("NCHW")},
      {.op = "Softmax", .label = "rank1", .shapes = {{5}}},
      {.op = "Softmax", .label = "matrix", .shapes = {{3, 4}}},
      {.op = "Softmax", .label = "rank3", .shapes = {{2, 2, 3}}, .ranges = {{-6, 6}}},
      {.op = "LogSoftmax", .label = "rank1", .shapes = {{5}}},
      {.op = "LogSoftmax", .label = "matrix", .shapes = {{3, 4}}},
      {.op = "LogSoftmax", .label = "rank3", .shapes = {{2, 2, 3}}, .ranges = {{-6, 6}}},
      {.op = "SparseSoftmaxCrossEntropyWithLogits", .label = "int32", .shapes = {{3, 4}},
       .consts = {{1, Labels32({2, 0, 3})}}, .outputs = {0}},
      {.op = "SparseSoftmaxCrossEntropyWithLogits", .label = "int64", .shapes = {{2, 5}},
       .consts = {{1, Labels64({4, 1})}}, .outputs = {0}},
      // Loss and backprop: the second-order term through backprop.
      {.op = "SparseSoftmaxCrossEntropyWithLogits", .label = "both_outputs", .shapes = {{3, 4}},
       .consts = {{1, Labels32({1, 3, 0})}}},
      // Labels are differentiated too (d loss / d labels = -log_softmax(features)), through a
      // softmax that makes each row a distribution.
      XentRow("same_shape", {3, 4}, {3, 4}),
      XentRow("labels_broadcast", {3, 4}, {4}),
      XentRow("features_broadcast", {1, 4}, {2, 4}),
      XentRow("both_outputs", {3, 4}, {3, 4}, true),
      XentRow("both_outputs_broadcast", {1, 4}, {3, 4}, true),
      {.op = "L2Loss", .label = "matrix", .shapes = {{2, 3}}},
      {.op = "L2Loss", .label = "scalar", .shapes = {{}}},
      {.op = "BatchMatMulV2", .label = "plain", .shapes = {{2, 2, 3}, {2, 3, 4}}},
      {.op = "BatchMatMulV2", .label = "adj_x", .shapes = {{2, 3, 2}, {2, 3, 4}},
       .attrs = Adj(true, false)},
      {.op = "BatchMatMulV2", .label = "adj_y", .shapes = {{2, 2, 3}, {2, 4, 3}},
       .attrs = Adj(false, true)},
      {.op = "BatchMatMulV2", .label = "adj_both", .shapes = {{2, 3, 2}, {2, 4, 3}},
       .attrs = Adj(true, true)},
      // Batch dims [2, 1] and [3] broadcast to [2, 3]: both gradients are summed back.
      {.op = "BatchMatMulV2", .label = "broadcast", .shapes = {{2, 1, 2, 3}, {3, 3, 2}}},
      {.op = "BatchMatMulV2", .label = "broadcast_adj", .shapes = {{1, 3, 2}, {2, 1, 2, 3}},
       .attrs = Adj(true, true)},
      {.op = "BatchMatMulV2", .label = "matrix_x", .shapes = {{2, 3}, {4, 3, 2}}},
      {.op = "BatchMatMulV2", .label = "matrix_y", .shapes = {{3, 2, 3}, {3, 4}}},  // folded
      {.op = "BatchMatMulV2", .label = "rank2", .shapes = {{2, 3}, {3, 2}}},
  };
  return *rows;
}
TX_GRAD_CHECK_ROWS(Nn, NnRows());

}  // namespace
}  // namespace tensorflux::gradient_check
