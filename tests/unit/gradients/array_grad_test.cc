// Numeric gradient checks (central differences in float64, relative error below 1e-6) for the
// array ops of array_grad2.cc: Transpose, ConcatV2/Concat, Split/SplitV, Slice, StridedSlice and
// StridedSliceGrad, Pack/Unpack, ExpandDims, Squeeze, Tile, Pad/PadV2, BroadcastTo,
// GatherV2 (axes, batch_dims, duplicate indices)/Gather/GatherNd, ScatterNd, UnsortedSegmentSum,
// DynamicStitch; and the ops that stop the gradient.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gradient_checker.h"
#include "gtest/gtest.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux::gradient_check {
namespace {

Tensor I32(std::vector<int32_t> v) {
  return Tensor::FromVector<int32_t>(v, TensorShape({static_cast<int64_t>(v.size())}));
}
Tensor I64(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(v, TensorShape({static_cast<int64_t>(v.size())}));
}
Tensor I32(std::vector<int32_t> v, TensorShape s) { return Tensor::FromVector<int32_t>(v, s); }
Tensor S32(int32_t v) { return Tensor::Scalar<int32_t>(v); }

StatusOr<GradOutput> ConstNode(Graph* g, const Tensor& t) {
  NodeDef def;
  def.set_name(g->NewName("const"));
  def.set_op("Const");
  AddNodeAttr("dtype", t.dtype(), &def);
  AddNodeAttr("value", t, &def);
  TX_ASSIGN_OR_RETURN(Node * n, g->AddNode(std::move(def)));
  return GradOutput{n, 0};
}

// All outputs of one node built from `inputs` (placeholders and constants).
StatusOr<std::vector<GradOutput>> Outputs(Graph* g, std::string_view op,
                                          std::vector<GradOutput> inputs, GradAttrs attrs = {}) {
  TX_ASSIGN_OR_RETURN(Node * n, AddNodeFromInputs(g, "", op, inputs, std::move(attrs)));
  std::vector<GradOutput> ys;
  for (int k = 0; k < n->num_outputs(); ++k) ys.push_back({n, k});
  return ys;
}

// ConcatV2 of the three placeholders along `axis` (and the TF1 Concat with the axis first).
BuildFn ConcatOf(int axis, bool v1 = false) {
  return [axis, v1](Graph* g, const std::vector<GradOutput>& xs)
             -> StatusOr<std::vector<GradOutput>> {
    TX_ASSIGN_OR_RETURN(GradOutput a, ConstNode(g, S32(axis)));
    std::vector<GradOutput> in = xs;
    if (v1) {
      in.insert(in.begin(), a);
      return Outputs(g, "Concat", in);
    }
    in.push_back(a);
    return Outputs(g, "ConcatV2", in);
  };
}

BuildFn PackOf(int64_t axis) {
  return [axis](Graph* g, const std::vector<GradOutput>& xs) {
    return Outputs(g, "Pack", xs, {{"axis", MakeAttr(axis)}});
  };
}

// DynamicStitch([[0, 4], [1, 3, 2]], data) (distinct indices: with duplicates TF's gradient, like
// ours, still gives the overwritten rows the merged gradient).
StatusOr<std::vector<GradOutput>> Stitch(Graph* g, const std::vector<GradOutput>& xs) {
  TX_ASSIGN_OR_RETURN(GradOutput i0, ConstNode(g, I32({0, 4})));
  TX_ASSIGN_OR_RETURN(GradOutput i1, ConstNode(g, I32({1, 3, 2})));
  return Outputs(g, "DynamicStitch", {i0, i1, xs[0], xs[1]}, {{"N", MakeAttr(int64_t{2})}});
}

// Gather through a chain that uses the gradient's dynamic shapes: Gather(Transpose(x)).
StatusOr<std::vector<GradOutput>> GatherOfTranspose(Graph* g, const std::vector<GradOutput>& xs) {
  TX_ASSIGN_OR_RETURN(GradOutput perm, ConstNode(g, I32({1, 0, 2})));
  TX_ASSIGN_OR_RETURN(Node * t, AddNodeFromInputs(g, "", "Transpose", {xs[0], perm}));
  TX_ASSIGN_OR_RETURN(GradOutput idx, ConstNode(g, I32({2, 0, 2, 1}, TensorShape({2, 2}))));
  TX_ASSIGN_OR_RETURN(GradOutput axis, ConstNode(g, S32(2)));
  return Outputs(g, "GatherV2", {{t, 0}, idx, axis}, {{"batch_dims", MakeAttr(int64_t{1})}});
}

GradAttrs Masks(int64_t begin, int64_t end, int64_t ellipsis, int64_t new_axis, int64_t shrink) {
  return {{"begin_mask", MakeAttr(begin)},
          {"end_mask", MakeAttr(end)},
          {"ellipsis_mask", MakeAttr(ellipsis)},
          {"new_axis_mask", MakeAttr(new_axis)},
          {"shrink_axis_mask", MakeAttr(shrink)}};
}

const std::vector<GradCheckRow>& ArrayRows() {
  static const auto* rows = new std::vector<GradCheckRow>{
      {.op = "Transpose", .shapes = {{2, 3, 4}}, .consts = {{1, I32({2, 0, 1})}}},
      {.op = "Transpose", .label = "int64", .shapes = {{3, 2}}, .consts = {{1, I64({1, 0})}}},
      {.op = "ConcatV2", .label = "axis1", .shapes = {{2, 1, 3}, {2, 2, 3}, {2, 3, 3}},
       .build = ConcatOf(1)},
      {.op = "ConcatV2", .label = "axis_neg1", .shapes = {{2, 1}, {2, 2}, {2, 1}},
       .build = ConcatOf(-1)},
      {.op = "Concat", .shapes = {{1, 2}, {2, 2}, {3, 2}}, .build = ConcatOf(0, true)},
      {.op = "Split", .shapes = {{2, 4}}, .consts = {{0, S32(1)}},
       .attrs = {{"num_split", MakeAttr(int64_t{2})}}},
      {.op = "Split", .label = "one", .shapes = {{3, 2}}, .consts = {{0, S32(0)}},
       .attrs = {{"num_split", MakeAttr(int64_t{1})}}},
      {.op = "SplitV", .shapes = {{2, 6}}, .consts = {{1, I32({1, -1, 2})}, {2, S32(-1)}},
       .attrs = {{"num_split", MakeAttr(int64_t{3})}}},
      // Only output 1 reaches ys: the others' gradients are zeros.
      {.op = "SplitV", .label = "one_output", .shapes = {{5, 2}},
       .consts = {{1, I32({2, 3})}, {2, S32(0)}},
       .attrs = {{"num_split", MakeAttr(int64_t{2})}}, .outputs = {1}},
      {.op = "Slice", .shapes = {{3, 4}}, .consts = {{1, I32({1, 0})}, {2, I32({2, -1})}}},
      {.op = "Slice", .label = "int64", .shapes = {{3, 4, 2}},
       .consts = {{1, I64({0, 1, 1})}, {2, I64({3, 2, 1})}}},
      // x[1:4:2, -1:0:-2]
      {.op = "StridedSlice", .shapes = {{4, 5}},
       .consts = {{1, I32({1, -1})}, {2, I32({4, 0})}, {3, I32({2, -2})}}},
      // x[..., newaxis, 1] on [3, 4, 2]
      {.op = "StridedSlice", .label = "ellipsis_newaxis_shrink", .shapes = {{3, 4, 2}},
       .consts = {{1, I32({0, 0, 1})}, {2, I32({0, 0, 2})}, {3, I32({1, 1, 1})}},
       .attrs = Masks(0, 0, 1, 2, 4)},
      // x[::-1, 2] with begin/end masks
      {.op = "StridedSlice", .label = "masks", .shapes = {{3, 4}},
       .consts = {{1, I64({0, 2})}, {2, I64({0, 3})}, {3, I64({-1, 1})}},
       .attrs = Masks(1, 1, 0, 0, 2)},
      // The gradient of StridedSliceGrad with respect to dy (shape [2, 2] of a [4, 3] x).
      {.op = "StridedSliceGrad", .shapes = {{2, 2}},
       .consts = {{0, I32({4, 3})}, {1, I32({1, 0})}, {2, I32({3, 2})}, {3, I32({1, 1})}}},
      {.op = "Pack", .label = "axis1", .shapes = {{2, 3}, {2, 3}, {2, 3}}, .build = PackOf(1)},
      {.op = "Pack", .label = "axis_neg1", .shapes = {{2}, {2}}, .build = PackOf(-1)},
      {.op = "Unpack", .shapes = {{3, 2}}, .attrs = {{"num", MakeAttr(int64_t{3})}}},
      {.op = "Unpack", .label = "axis1", .shapes = {{3, 2}},
       .attrs = {{"num", MakeAttr(int64_t{2})}, {"axis", MakeAttr(int64_t{1})}}},
      {.op = "ExpandDims", .shapes = {{2, 3}}, .consts = {{1, S32(-1)}}},
      {.op = "Squeeze", .shapes = {{2, 1, 3, 1}},
       .attrs = {{"squeeze_dims", MakeAttr(std::vector<int64_t>{1})}}},
      {.op = "Squeeze", .label = "all", .shapes = {{1, 3, 1}}},
      {.op = "Tile", .shapes = {{2, 3}}, .consts = {{1, I32({2, 2})}}},
      {.op = "Tile", .label = "int64_rank3", .shapes = {{1, 2, 2}}, .consts = {{1, I64({3, 1, 2})}}},
      {.op = "Pad", .shapes = {{2, 3}}, .consts = {{1, I32({1, 0, 2, 1}, TensorShape({2, 2}))}}},
      {.op = "PadV2", .shapes = {{2, 3}, TensorShape()},
       .consts = {{1, I32({0, 1, 1, 1}, TensorShape({2, 2}))}}},
      {.op = "BroadcastTo", .shapes = {{3, 1}}, .consts = {{1, I32({2, 3, 4})}}},
      {.op = "BroadcastTo", .label = "same", .shapes = {{2, 3}}, .consts = {{1, I64({2, 3})}}},
      // Repeated indices: their gradients add up.
      {.op = "GatherV2", .shapes = {{5, 3}}, .consts = {{1, I32({4, 0, 4})}, {2, S32(0)}}},
      {.op = "GatherV2", .label = "axis1_2d_indices", .shapes = {{2, 4, 3}},
       .consts = {{1, I32({3, 0, 3, 1}, TensorShape({2, 2}))}, {2, S32(1)}}},
      {.op = "GatherV2", .label = "axis_last", .shapes = {{2, 3}},
       .consts = {{1, I64({2, 2, 0})}, {2, S32(-1)}}},
      {.op = "GatherV2", .label = "batch1_axis1", .shapes = {{2, 3, 2}},
       .consts = {{1, I32({2, 2, 1, 0}, TensorShape({2, 2}))}, {2, S32(1)}},
       .attrs = {{"batch_dims", MakeAttr(int64_t{1})}}},
      {.op = "GatherV2", .label = "batch1_axis2", .shapes = {{2, 2, 3}},
       .consts = {{1, I32({0, 2, 1, 1}, TensorShape({2, 2}))}, {2, S32(2)}},
       .attrs = {{"batch_dims", MakeAttr(int64_t{1})}}},
      {.op = "GatherV2", .label = "of_transpose", .shapes = {{3, 2, 3}},
       .build = GatherOfTranspose},
      {.op = "Gather", .shapes = {{4, 2}}, .consts = {{1, I32({3, 3, 1})}}},
      {.op = "GatherNd", .shapes = {{3, 4}},
       .consts = {{1, I32({1, 2, 0, 0, 1, 2}, TensorShape({3, 2}))}}},
      {.op = "ScatterNd", .shapes = {{3, 2}},
       .consts = {{0, I32({1, 0, 1}, TensorShape({3, 1}))}, {2, I32({2, 2})}}},
      {.op = "UnsortedSegmentSum", .shapes = {{4, 3}},
       .consts = {{1, I32({2, 0, -1, 2})}, {2, S32(3)}}},
      {.op = "DynamicStitch", .shapes = {{2, 2}, {3, 2}}, .build = Stitch},
  };
  return *rows;
}

TX_GRAD_CHECK_ROWS(Array, ArrayRows());

// No gradient flows through StopGradient: d(x * StopGradient(x))/dx = StopGradient(x) = x.
TEST(ArrayGradTest, StopGradientStopsTheFlow) {
  Tensor x(DT_DOUBLE, TensorShape({3}));
  for (int i = 0; i < 3; ++i) x.data<double>()[i] = 0.5 + i;
  auto r = ComputeGradientError(
      {x}, [](Graph* g, const std::vector<GradOutput>& xs) -> StatusOr<std::vector<GradOutput>> {
        TX_ASSIGN_OR_RETURN(Node * s, AddNodeFromInputs(g, "", "StopGradient", {xs[0]}));
        TX_ASSIGN_OR_RETURN(Node * y, AddNodeFromInputs(g, "", "Mul", {xs[0], {s, 0}}));
        return std::vector<GradOutput>{{y, 0}};
      });
  ASSERT_TRUE(r.ok()) << r.status();
  // The numeric Jacobian is 2x, the symbolic one x: the checker sees the difference.
  EXPECT_GT(r->max_error, 0.3);
}

// The shape ops have no gradient, and AddSymbolicGradients returns null for an x reached only
// through them.
TEST(ArrayGradTest, NoGradientOps) {
  for (const char* op : {"ShapeN", "Range", "OneHot", "BroadcastGradientArgs", "StopGradient",
                         "InvertPermutation", "ConcatOffset"}) {
    GradFunc fn;
    EXPECT_TRUE(GradientRegistry::Global()->Lookup(op, &fn).ok()) << op;
    EXPECT_FALSE(static_cast<bool>(fn)) << op;
  }
  for (const char* op : {"Transpose", "ConcatV2", "Split", "SplitV", "Slice", "StridedSlice",
                         "Pack", "Unpack", "ExpandDims", "Squeeze", "Tile", "Pad", "PadV2",
                         "GatherV2", "BroadcastTo", "StridedSliceGrad", "ScatterNd", "GatherNd",
                         "UnsortedSegmentSum", "DynamicStitch"}) {
    GradFunc fn;
    EXPECT_TRUE(GradientRegistry::Global()->Lookup(op, &fn).ok()) << op;
    EXPECT_TRUE(static_cast<bool>(fn)) << op;
  }
}

}  // namespace
}  // namespace tensorflux::gradient_check
