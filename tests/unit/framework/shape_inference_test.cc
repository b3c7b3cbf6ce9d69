// Shape inference helpers: NumPy broadcasting over partial shapes, rank checks, shape tensors.
#include <string>

#include "gtest/gtest.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

using shape_inference::BroadcastShapes;

PartialTensorShape P(std::initializer_list<int64_t> dims) { return PartialTensorShape(dims); }

struct BroadcastCase {
  PartialTensorShape a, b, want;
};

TEST(ShapeInferenceTest, BroadcastShapesNumPyRules) {
  const PartialTensorShape unknown = PartialTensorShape::UnknownRank();
  const PartialTensorShape scalar = PartialTensorShape::Scalar();
  // Hand-worked with NumPy's rules: align right, a 1 stretches, missing leading dims are 1.
  std::vector<BroadcastCase> cases = {
      {P({2, 3}), P({2, 3}), P({2, 3})},
      {P({2, 3}), P({3}), P({2, 3})},
      {P({2, 1}), P({1, 3}), P({2, 3})},
      {P({5, 1, 4}), P({3, 1}), P({5, 3, 4})},
      {scalar, P({4}), P({4})},
      {P({4}), scalar, P({4})},
      {scalar, scalar, scalar},
      {P({0, 3}), P({1, 3}), P({0, 3})},
      {P({0}), P({1}), P({0})},
      // Unknown dims: with 1 they stay unknown, with n > 1 they become n.
      {P({-1, 3}), P({1}), P({-1, 3})},
      {P({-1}), P({5}), P({5})},
      {P({5}), P({-1}), P({5})},
      {P({-1}), P({1}), P({-1})},
      {P({1}), P({-1}), P({-1})},
      {P({-1}), P({-1}), P({-1})},
      {P({-1, 1}), P({7, 4}), P({7, 4})},
      {P({2, -1}), P({3}), P({2, 3})},
      // Unknown rank anywhere gives unknown rank.
      {unknown, P({2, 3}), unknown},
      {P({2}), unknown, unknown},
  };
  for (const BroadcastCase& c : cases) {
    StatusOr<PartialTensorShape> got = BroadcastShapes(c.a, c.b);
    ASSERT_TRUE(got.ok()) << c.a.DebugString() << " vs " << c.b.DebugString() << ": " << got.status();
    EXPECT_EQ(*got, c.want) << c.a.DebugString() << " vs " << c.b.DebugString() << " gave "
                            << got->DebugString() << ", want " << c.want.DebugString();
  }
}

TEST(ShapeInferenceTest, BroadcastShapesIncompatible) {
  StatusOr<PartialTensorShape> got = BroadcastShapes(P({2, 3}), P({4}));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(), "Incompatible shapes: [2,3] vs. [4]");
  EXPECT_FALSE(BroadcastShapes(P({3, 2}), P({2, 2, 2})).ok());
  EXPECT_FALSE(BroadcastShapes(P({0}), P({2})).ok());
}

NodeDef Node(const std::string& name, const std::string& op) {
  NodeDef n;
  n.set_name(name);
  n.set_op(op);
  return n;
}

TEST(ShapeInferenceTest, BroadcastBinaryOpShapeNamesNode) {
  NodeDef n = Node("add1", "AddV2");
  OpDef op;
  InferenceContext ok(n, op, {P({2, 1}), P({3})}, {nullptr, nullptr}, 1);
  ASSERT_TRUE(shape_inference::BroadcastBinaryOpShape(&ok).ok());
  EXPECT_EQ(ok.output(0), P({2, 3}));

  InferenceContext bad(n, op, {P({2, 3}), P({4})}, {nullptr, nullptr}, 1);
  Status s = shape_inference::BroadcastBinaryOpShape(&bad);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("Incompatible shapes: [2,3] vs. [4]"), std::string::npos);
  EXPECT_NE(std::string(s.message()).find("add1"), std::string::npos) << s;

  InferenceContext one_input(n, op, {P({2})}, {nullptr}, 1);
  EXPECT_EQ(shape_inference::BroadcastBinaryOpShape(&one_input).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ShapeInferenceTest, SimpleShapeFns) {
  NodeDef n = Node("n", "X");
  OpDef op;
  InferenceContext c(n, op, {P({4, -1})}, {}, 2);
  // Outputs start unknown.
  EXPECT_TRUE(c.output(0).unknown_rank());
  ASSERT_TRUE(shape_inference::ScalarShape(&c).ok());
  EXPECT_EQ(c.output(0), PartialTensorShape::Scalar());
  EXPECT_EQ(c.output(1), PartialTensorShape::Scalar());
  ASSERT_TRUE(shape_inference::UnknownShape(&c).ok());
  EXPECT_TRUE(c.output(0).unknown_rank());
  EXPECT_TRUE(c.output(1).unknown_rank());
  ASSERT_TRUE(shape_inference::UnchangedShape(&c).ok());
  EXPECT_EQ(c.output(0), P({4, -1}));
  EXPECT_EQ(c.outputs().size(), 2u);
  EXPECT_EQ(c.input_tensor(0), nullptr);  // none given
}

TEST(ShapeInferenceTest, WithRank) {
  NodeDef n = Node("mm", "MatMul");
  OpDef op;
  InferenceContext c(n, op, {P({2, 3}), PartialTensorShape::UnknownRank(), P({5})}, {}, 1);
  EXPECT_TRUE(c.WithRank(0, 2).ok());
  EXPECT_TRUE(c.WithRank(1, 7).ok());  // unknown rank passes
  Status s = c.WithRank(2, 2);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("Shape must be rank 2 but is rank 1"), std::string::npos) << s;
  EXPECT_NE(std::string(s.message()).find("mm"), std::string::npos) << s;
  EXPECT_TRUE(c.WithRankAtLeast(0, 1).ok());
  EXPECT_TRUE(c.WithRankAtLeast(0, 2).ok());
  EXPECT_TRUE(c.WithRankAtLeast(1, 4).ok());
  s = c.WithRankAtLeast(0, 3);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("at least rank 3"), std::string::npos) << s;
  EXPECT_EQ(c.WithRank(9, 1).code(), absl::StatusCode::kInvalidArgument);  // no such input
}

TEST(ShapeInferenceTest, InputTensorAndAttrs) {
  NodeDef n = Node("r", "Reshape");
  AddNodeAttr("Tshape", DT_INT32, &n);
  OpDef op;
  Tensor shape = Tensor::FromVector<int32_t>({2, -1}, TensorShape({2}));
  InferenceContext c(n, op, {P({6}), P({2})}, {nullptr, &shape}, 1);
  EXPECT_EQ(c.input_tensor(0), nullptr);
  EXPECT_EQ(c.input_tensor(1), &shape);
  EXPECT_EQ(c.input_tensor(5), nullptr);
  DataType t;
  ASSERT_TRUE(c.GetAttr("Tshape", &t).ok());
  EXPECT_EQ(t, DT_INT32);
  EXPECT_EQ(c.GetAttr("missing", &t).code(), absl::StatusCode::kNotFound);
}

TEST(ShapeInferenceTest, ShapeFromTensor) {
  StatusOr<PartialTensorShape> s =
      shape_inference::ShapeFromTensor(Tensor::FromVector<int32_t>({2, -1, 3}, TensorShape({3})));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, P({2, -1, 3}));

  s = shape_inference::ShapeFromTensor(Tensor::FromVector<int64_t>({7}, TensorShape({1})));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, P({7}));

  s = shape_inference::ShapeFromTensor(Tensor::FromVector<int64_t>({}, TensorShape({0})));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, PartialTensorShape::Scalar());

  s = shape_inference::ShapeFromTensor(Tensor::Scalar<int32_t>(-1));
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->unknown_rank());

  EXPECT_EQ(shape_inference::ShapeFromTensor(Tensor::Scalar<int32_t>(3)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(shape_inference::ShapeFromTensor(Tensor::FromVector<float>({1.f}, TensorShape({1})))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(shape_inference::ShapeFromTensor(Tensor::FromVector<int32_t>({1, 2}, TensorShape({1, 2})))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  s = shape_inference::ShapeFromTensor(Tensor::FromVector<int32_t>({2, -2}, TensorShape({2})));
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.status().message()).find("-2"), std::string::npos);
  std::vector<int64_t> nine(9, 1);
  EXPECT_EQ(shape_inference::ShapeFromTensor(Tensor::FromVector<int64_t>(nine, TensorShape({9})))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorflux
