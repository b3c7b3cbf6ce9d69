// GPU elementwise kernels (kernels/cuda/cwise_ops.cc) against the CPU kernels on random inputs:
// every unary and binary op in float32 (relative error < 1e-5) and float64 (< 1e-12), flat,
// scalar-operand, broadcast and vectorized-with-tail shapes, bool outputs exactly; AddN across
// its 16-input launch limit; the validation errors.
#include "gpu_test_util.h"

namespace tensorflux {
namespace {

using test::GpuOpCase;
using test::RandomTensor;

constexpr double kFloatTol = 1e-5, kDoubleTol = 1e-12;

double Tol(DataType dt) { return dt == DT_FLOAT ? kFloatTol : kDoubleTol; }

// Input range per op: the op's domain, away from poles.
void Domain(const std::string& op, double* lo, double* hi) {
  *lo = -3;
  *hi = 3;
  if (op == "Sqrt" || op == "Log" || op == "Rsqrt" || op == "SqrtGrad" || op == "RsqrtGrad" ||
      op == "Pow" || op == "Reciprocal" || op == "ReciprocalGrad") {
    *lo = 0.25;
  } else if (op == "Log1p") {
    *lo = -0.75;
  }
}

class GpuCwiseTest : public test::GpuTest,
                     public ::testing::WithParamInterface<DataType> {};

TEST_P(GpuCwiseTest, UnaryOpsMatchCpu) {
  const DataType dt = GetParam();
  for (const char* op : {"Neg", "Square", "Sqrt", "Exp", "Log", "Abs", "Sign", "Reciprocal",
                         "Rsqrt", "Log1p", "Tanh", "Sigmoid", "Erf", "Cos", "Sin", "Relu",
                         "Relu6", "LeakyRelu", "Elu", "Selu", "Softplus"}) {
    double lo, hi;
    Domain(op, &lo, &hi);
    // 3 * 257 elements: not a multiple of the vector width (the tail path).
    Tensor x = RandomTensor(dt, TensorShape({3, 257}), 11, lo, hi);
    GpuOpCase c(op);
    c.Input(x);
    if (std::string(op) == "LeakyRelu") c.Attr("alpha", 0.3f);
    SCOPED_TRACE(op);
    test::ExpectGpuMatchesCpu(c, Tol(dt));
  }
}

TEST_P(GpuCwiseTest, BinaryOpsMatchCpuForEveryShapeKind) {
  const DataType dt = GetParam();
  // (x shape, y shape): same, scalar y, scalar x, broadcast both ways with collapsing.
  const std::vector<std::pair<TensorShape, TensorShape>> shapes = {
      {TensorShape({4, 129}), TensorShape({4, 129})},
      {TensorShape({4, 129}), TensorShape({})},
      {TensorShape({}), TensorShape({515})},
      {TensorShape({2, 3, 1, 5}), TensorShape({3, 4, 1})},
      {TensorShape({8, 1, 5, 6}), TensorShape({5, 6})},
  };
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow",
                         "SquaredDifference", "FloorDiv", "FloorMod", "Less", "LessEqual",
                         "Greater", "GreaterEqual", "Equal", "NotEqual"}) {
    double lo, hi;
    Domain(op, &lo, &hi);
    for (size_t k = 0; k < shapes.size(); ++k) {
      Tensor x = RandomTensor(dt, shapes[k].first, 21 + k, lo, hi);
      // Small integers in y make comparisons hit equal values and keep divisors away from 0.
      Tensor y = RandomTensor(dt, shapes[k].second, 31 + k, 1, 4);
      if (std::string(op) == "Less" || std::string(op) == "Equal" ||
          std::string(op) == "NotEqual" || std::string(op) == "GreaterEqual") {
        x = RandomTensor(dt, shapes[k].first, 21 + k, -2, 4);
        std::vector<double> v = test::ToDoubles(x);
        for (double& e : v) e = std::floor(e);
        x = test::FromDoubles(dt, x.shape(), v);
      }
      GpuOpCase c(op);
      c.Input(x).Input(y);
      SCOPED_TRACE(std::string(op) + " " + shapes[k].first.DebugString() + " " +
                   shapes[k].second.DebugString());
      test::ExpectGpuMatchesCpu(c, Tol(dt));
    }
  }
}

TEST_P(GpuCwiseTest, GradientOpsMatchCpu) {
  const DataType dt = GetParam();
  for (const char* op : {"ReluGrad", "Relu6Grad", "LeakyReluGrad", "SoftplusGrad", "EluGrad",
                         "SeluGrad", "TanhGrad", "SigmoidGrad", "RsqrtGrad", "SqrtGrad",
                         "ReciprocalGrad"}) {
    double lo, hi;
    Domain(op, &lo, &hi);
    GpuOpCase c(op);
    c.Input(RandomTensor(dt, TensorShape({5, 77}), 41, lo, hi))
        .Input(RandomTensor(dt, TensorShape({5, 77}), 42, -8, 8));
    if (std::string(op) == "LeakyReluGrad") c.Attr("alpha", 0.1f);
    SCOPED_TRACE(op);
    test::ExpectGpuMatchesCpu(c, Tol(dt));
  }
}

TEST_P(GpuCwiseTest, AddNMatchesCpuAcrossLaunchBatches) {
  const DataType dt = GetParam();
  for (int n : {1, 3, 16, 20, 40}) {
    GpuOpCase c("AddN");
    for (int i = 0; i < n; ++i) c.Input(RandomTensor(dt, TensorShape({33, 7}), 50 + i));
    SCOPED_TRACE(n);
    test::ExpectGpuMatchesCpu(c, Tol(dt));
  }
}

INSTANTIATE_TEST_SUITE_P(FloatTypes, GpuCwiseTest, ::testing::Values(DT_FLOAT, DT_DOUBLE));

class GpuCwiseMiscTest : public test::GpuTest {};

TEST_F(GpuCwiseMiscTest, LogicalOpsMatchCpu) {
  Tensor a = RandomTensor(DT_BOOL, TensorShape({6, 50}), 1, 0, 2);
  Tensor b = RandomTensor(DT_BOOL, TensorShape({50}), 2, 0, 2);
  test::ExpectGpuMatchesCpu(GpuOpCase("LogicalAnd").Input(a).Input(b), 0);
  test::ExpectGpuMatchesCpu(GpuOpCase("LogicalOr").Input(a).Input(b), 0);
  test::ExpectGpuMatchesCpu(GpuOpCase("LogicalNot").Input(a), 0);
}

TEST_F(GpuCwiseMiscTest, NanPropagatesThroughMaximumAndRelu) {
  Tensor x = test::AsTensor<float>({NAN, 1, -2, NAN}, {4});
  Tensor y = test::AsTensor<float>({0, NAN, 5, 1}, {4});
  auto max = GpuOpCase("Maximum").Input(x).Input(y).RunGpu();
  ASSERT_TRUE(max.ok()) << max.status();
  const std::vector<double> m = test::ToDoubles((*max)[0]);
  EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[1]) && std::isnan(m[3]));
  EXPECT_EQ(m[2], 5);
  auto relu = GpuOpCase("Relu").Input(x).RunGpu();
  ASSERT_TRUE(relu.ok()) << relu.status();
  EXPECT_TRUE(std::isnan(test::ToDoubles((*relu)[0])[0]));
}

TEST_F(GpuCwiseMiscTest, EqualWithIncompatibleShapesAndNoErrorIsScalar) {
  for (const char* op : {"Equal", "NotEqual"}) {
    GpuOpCase c(op);
    c.Input(RandomTensor(DT_FLOAT, TensorShape({2, 3}), 1))
        .Input(RandomTensor(DT_FLOAT, TensorShape({4}), 2))
        .Attr("incompatible_shape_error", false);
    test::ExpectGpuMatchesCpu(c, 0);
  }
}

TEST_F(GpuCwiseMiscTest, BadShapesAreInvalidArgument) {
  test::ExpectInvalid(test::GpuError(GpuOpCase("Add")
                                         .Input(RandomTensor(DT_FLOAT, TensorShape({2, 3}), 1))
                                         .Input(RandomTensor(DT_FLOAT, TensorShape({4}), 2))),
                      "Incompatible shapes: [2,3] vs. [4]");
  test::ExpectInvalid(test::GpuError(GpuOpCase("ReluGrad")
                                         .Input(RandomTensor(DT_FLOAT, TensorShape({3}), 1))
                                         .Input(RandomTensor(DT_FLOAT, TensorShape({1}), 2))),
                      "must have the same size and shape");
  test::ExpectInvalid(test::GpuError(GpuOpCase("AddN")
                                         .Input(RandomTensor(DT_FLOAT, TensorShape({3}), 1))
                                         .Input(RandomTensor(DT_FLOAT, TensorShape({2}), 2))),
                      "!= input 1: [2]");
}

TEST_F(GpuCwiseMiscTest, MisalignedInputsTakeTheScalarPath) {
  Tensor x = RandomTensor(DT_FLOAT, TensorShape({3, 257}), 5);
  // Rows 1..2 of the GPU copy start 1028 bytes into its buffer: not 16-byte aligned.
  Tensor dx = test::ToGpu(x).Slice(1, 3);
  test::KernelRunner gpu("Exp");
  gpu.Input(dx).OnDevice(test::TestGpu());
  auto got = gpu.RunOne();
  ASSERT_TRUE(got.ok()) << got.status();
  auto want = test::KernelRunner("Exp").Input(x.Slice(1, 3)).RunOne();
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_LT(test::RelativeError(test::ToHost(*got), *want), kFloatTol);
}

TEST_F(GpuCwiseMiscTest, EmptyTensorsGiveEmptyOutputs) {
  GpuOpCase c("Mul");
  c.Input(Tensor(DT_FLOAT, TensorShape({0, 4}))).Input(RandomTensor(DT_FLOAT, TensorShape({4}), 3));
  test::ExpectGpuMatchesCpu(c, kFloatTol);
}

}  // namespace
}  // namespace tensorflux
