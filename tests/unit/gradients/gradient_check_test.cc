// The numeric gradient check table for the basic math and array ops (math_grad.cc,
// array_grad.cc): every row compares the symbolic Jacobian with central differences in float64
// (relative error below 1e-6). Other families add their rows in <family>_grad_test.cc files with
// TX_GRAD_CHECK_ROWS (see gradient_checker.h).
#include <vector>

#include "gradient_checker.h"
#include "gtest/gtest.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux::gradient_check {
namespace {

Tensor I32(std::vector<int32_t> v) {
  return Tensor::FromVector<int32_t>(v, TensorShape({static_cast<int64_t>(v.size())}));
}

// y = x * x + x: x fans out to three uses, whose gradients are summed with AddN.
StatusOr<std::vector<GradOutput>> FanOut(Graph* g, const std::vector<GradOutput>& xs) {
  TX_ASSIGN_OR_RETURN(Node * sq, AddNodeFromInputs(g, "", "Mul", {xs[0], xs[0]}));
  TX_ASSIGN_OR_RETURN(Node * y, AddNodeFromInputs(g, "", "AddV2", {{sq, 0}, xs[0]}));
  return std::vector<GradOutput>{{y, 0}};
}

// A small MLP layer: y = exp(-square(x W + b)) / (1 + square(x W + b)) with the shared
// pre-activation used twice.
StatusOr<std::vector<GradOutput>> Layer(Graph* g, const std::vector<GradOutput>& xs) {
  TX_ASSIGN_OR_RETURN(Node * mm, AddNodeFromInputs(g, "", "MatMul", {xs[0], xs[1]}));
  TX_ASSIGN_OR_RETURN(Node * z, AddNodeFromInputs(g, "", "AddV2", {{mm, 0}, xs[2]}));
  TX_ASSIGN_OR_RETURN(Node * sq, AddNodeFromInputs(g, "", "Square", {{z, 0}}));
  TX_ASSIGN_OR_RETURN(Node * neg, AddNodeFromInputs(g, "", "Neg", {{sq, 0}}));
  TX_ASSIGN_OR_RETURN(Node * e, AddNodeFromInputs(g, "", "Exp", {{neg, 0}}));
  TX_ASSIGN_OR_RETURN(Node * one, AddNodeFromInputs(g, "", "OnesLike", {{sq, 0}}));
  TX_ASSIGN_OR_RETURN(Node * den, AddNodeFromInputs(g, "", "AddV2", {{one, 0}, {sq, 0}}));
  TX_ASSIGN_OR_RETURN(Node * y, AddNodeFromInputs(g, "", "RealDiv", {{e, 0}, {den, 0}}));
  return std::vector<GradOutput>{{y, 0}};
}

// IdentityN over two inputs, both outputs checked.
StatusOr<std::vector<GradOutput>> IdentityN2(Graph* g, const std::vector<GradOutput>& xs) {
  TX_ASSIGN_OR_RETURN(Node * n, AddNodeFromInputs(g, "", "IdentityN", {xs[0], xs[1]}));
  return std::vector<GradOutput>{{n, 0}, {n, 1}};
}

const std::vector<GradCheckRow>& MathRows() {
  static const auto* rows = new std::vector<GradCheckRow>{
      // Binary, with and without broadcasting.
      {.op = "AddV2", .shapes = {{2, 3}, {2, 3}}},
      {.op = "AddV2", .label = "bcast_row", .shapes = {{2, 3}, {3}}},
      {.op = "AddV2", .label = "bcast_scalar", .shapes = {TensorShape(), {2, 3}}},
      {.op = "AddV2", .label = "bcast_both", .shapes = {{2, 1, 3}, {4, 1}}},
      {.op = "Add", .shapes = {{2, 3}, {2, 1}}},
      {.op = "Sub", .shapes = {{2, 3}, {2, 3}}},
      {.op = "Sub", .label = "bcast", .shapes = {{1, 3}, {2, 1}}},
      {.op = "Mul", .shapes = {{2, 3}, {2, 3}}},
      {.op = "Mul", .label = "bcast", .shapes = {{2, 1, 3}, {4, 1}}},
      {.op = "RealDiv", .shapes = {{2, 3}, {2, 3}}, .ranges = {{-2, 2}, {0.5, 2}}},
      {.op = "RealDiv",
       .label = "bcast",
       .shapes = {{2, 3}, {3}},
       .ranges = {{-2, 2}, {-2, -0.5}}},
      // Inputs drawn from disjoint-ish ranges and random elsewhere: no ties.
      {.op = "Maximum", .shapes = {{2, 3}, {2, 3}}},
      {.op = "Maximum", .label = "bcast", .shapes = {{2, 3}, {3}}},
      {.op = "Minimum", .shapes = {{2, 3}, {2, 3}}},
      {.op = "Minimum", .label = "bcast", .shapes = {{3}, {2, 3}}},
      // Unary.
      {.op = "Neg", .shapes = {{2, 3}}},
      {.op = "Square", .shapes = {{2, 3}}},
      {.op = "Square", .label = "scalar", .shapes = {TensorShape()}},
      {.op = "Sqrt", .shapes = {{2, 3}}, .ranges = {{0.5, 3}}},
      {.op = "Exp", .shapes = {{2, 3}}},
      {.op = "Log", .shapes = {{2, 3}}, .ranges = {{0.5, 3}}},
      {.op = "Cast", .shapes = {{2, 3}}, .attrs = {{"DstT", MakeAttr(DT_DOUBLE)}}},
      // MatMul, every transpose combination.
      {.op = "MatMul", .shapes = {{2, 3}, {3, 4}}},
      {.op = "MatMul",
       .label = "tb",
       .shapes = {{2, 3}, {4, 3}},
       .attrs = {{"transpose_b", MakeAttr(true)}}},
      {.op = "MatMul",
       .label = "ta",
       .shapes = {{3, 2}, {3, 4}},
       .attrs = {{"transpose_a", MakeAttr(true)}}},
      {.op = "MatMul",
       .label = "ta_tb",
       .shapes = {{3, 2}, {4, 3}},
       .attrs = {{"transpose_a", MakeAttr(true)}, {"transpose_b", MakeAttr(true)}}},
      // Arrays.
      {.op = "Identity", .shapes = {{2, 3}}},
      {.op = "IdentityN", .shapes = {{2, 3}, {4}}, .build = IdentityN2},
      {.op = "PlaceholderWithDefault",
       .shapes = {{2, 3}},
       .attrs = {{"shape", MakeAttr(PartialTensorShape({2, 3}))}}},
      {.op = "Reshape", .shapes = {{2, 3}}, .consts = {{1, I32({3, 2})}}},
      {.op = "Reshape", .label = "infer", .shapes = {{2, 3, 2}}, .consts = {{1, I32({-1, 4})}}},
      {.op = "Fill", .shapes = {TensorShape()}, .consts = {{0, I32({2, 3})}}},
      // Composites.
      {.op = "Mul", .label = "fan_out", .shapes = {{2, 3}}, .build = FanOut},
      {.op = "MatMul",
       .label = "layer",
       .shapes = {{2, 3}, {3, 4}, {4}},
       .ranges = {{-1, 1}, {-1, 1}, {-1, 1}},
       .build = Layer},
  };
  return *rows;
}

TX_GRAD_CHECK_ROWS(Math, MathRows());

// The checker itself must notice a wrong gradient: Square's gradient replaced by 3x.
TEST(GradientChecker, CatchesWrongGradient) {
  GradFunc real;
  ASSERT_TRUE(GradientRegistry::Global()->Lookup("Square", &real).ok());
  GradientRegistry::Global()->Register("Square", [](GradContext* c, std::vector<GradOutput>* dx) {
    TX_ASSIGN_OR_RETURN(GradOutput three, c->Const(3.0, DT_DOUBLE));
    TX_ASSIGN_OR_RETURN(GradOutput t, c->Op("Mul", {three, c->input(0)}));
    TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Mul", {c->grad(0), t}));
    return OkStatus();
  });
  RowResult r = RunGradCheckRow({.op = "Square", .shapes = {{3}}, .ranges = {{1, 2}}});
  GradientRegistry::Global()->Register("Square", real);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_GT(r.error.max_error, 0.4);  // |3x - 2x| / |2x| = 0.5
  EXPECT_NE(r.error.worst.find("d y0["), std::string::npos) << r.error.worst;
}

// A gradient of the wrong shape (a broadcast gradient left unreduced) is reported.
TEST(GradientChecker, ReportsWrongShape) {
  GradFunc real;
  ASSERT_TRUE(GradientRegistry::Global()->Lookup("AddV2", &real).ok());
  GradientRegistry::Global()->Register("AddV2", [](GradContext* c, std::vector<GradOutput>* dx) {
    (*dx)[0] = c->grad(0);
    (*dx)[1] = c->grad(0);
    return OkStatus();
  });
  RowResult r = RunGradCheckRow({.op = "AddV2", .shapes = {{2, 3}, {3}}});
  GradientRegistry::Global()->Register("AddV2", real);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kInvalidArgument) << r.status;
  EXPECT_NE(r.status.message().find("shape"), std::string_view::npos) << r.status;
}

TEST(GradientChecker, RejectsNonDoubleInputs) {
  auto r = ComputeGradientError({Tensor::Scalar<float>(1.0f)},
                                [](Graph*, const std::vector<GradOutput>& xs)
                                    -> StatusOr<std::vector<GradOutput>> { return xs; });
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

// y = x: the Jacobian is the identity, exactly.
TEST(GradientChecker, IdentityFunctionHasZeroError) {
  Tensor x(DT_DOUBLE, TensorShape({4}));
  for (int i = 0; i < 4; ++i) x.data<double>()[i] = i - 1.5;
  auto r = ComputeGradientError({x}, [](Graph*, const std::vector<GradOutput>& xs)
                                         -> StatusOr<std::vector<GradOutput>> { return xs; });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->entries, 16);
  EXPECT_LT(r->max_error, 1e-9);
}

}  // namespace
}  // namespace tensorflux::gradient_check
