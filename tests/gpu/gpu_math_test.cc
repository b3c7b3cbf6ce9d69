// GPU MatMul/BatchMatMulV2 (cuBLAS), the reductions, BiasAdd(+Grad), Softmax/LogSoftmax and the
// cross-entropy ops against their CPU kernels on random inputs: float32 relative error < 1e-5,
// float64 < 1e-12 (half/bfloat16 MatMul against the CPU's float-accumulated result, 1e-2);
// shape errors from the GPU kernels are the CPU kernels' INVALID_ARGUMENTs.
#include "gpu_test_util.h"

namespace tensorflux {
namespace {

using test::GpuOpCase;
using test::RandomTensor;

double Tol(DataType dt) {
  return dt == DT_DOUBLE ? 1e-12 : (dt == DT_FLOAT ? 1e-5 : 1e-2);
}

class GpuMathTest : public test::GpuTest, public ::testing::WithParamInterface<DataType> {};

TEST_P(GpuMathTest, MatMulEveryTransposeCombination) {
  const DataType dt = GetParam();
  const int64_t m = 37, k = 129, n = 65;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      GpuOpCase c("MatMul");
      c.Input(RandomTensor(dt, ta ? TensorShape({k, m}) : TensorShape({m, k}), 1))
          .Input(RandomTensor(dt, tb ? TensorShape({n, k}) : TensorShape({k, n}), 2))
          .Attr("transpose_a", ta)
          .Attr("transpose_b", tb)
          .CpuReferenceInFloat64();
      SCOPED_TRACE(testing::Message() << "ta " << ta << " tb " << tb);
      test::ExpectGpuMatchesCpu(c, Tol(dt));
    }
  }
}

TEST_P(GpuMathTest, BatchMatMulBroadcastsAndFolds) {
  const DataType dt = GetParam();
  struct Case {
    TensorShape x, y;
    bool adj_x, adj_y;
  };
  const std::vector<Case> cases = {
      {TensorShape({4, 8, 16}), TensorShape({4, 16, 5}), false, false},  // strided batch
      {TensorShape({4, 8, 16}), TensorShape({16, 5}), false, false},     // folds into rows
      {TensorShape({4, 16, 8}), TensorShape({16, 5}), true, false},      // one y, x transposed
      {TensorShape({2, 1, 8, 16}), TensorShape({3, 5, 16}), false, true},  // both broadcast
      {TensorShape({1, 8, 16}), TensorShape({3, 16, 5}), false, false},  // x broadcast
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& cs = cases[i];
    GpuOpCase c("BatchMatMulV2");
    c.Input(RandomTensor(dt, cs.x, 3 + i)).Input(RandomTensor(dt, cs.y, 13 + i))
        .Attr("adj_x", cs.adj_x).Attr("adj_y", cs.adj_y).CpuReferenceInFloat64();
    SCOPED_TRACE(i);
    test::ExpectGpuMatchesCpu(c, Tol(dt));
  }
}

TEST_P(GpuMathTest, ReductionsOverEveryAxisPattern) {
  const DataType dt = GetParam();
  if (dt == DT_HALF || dt == DT_BFLOAT16) GTEST_SKIP() << "float/double reductions only";
  // [6, 7, 100, 5]: reduce inner, outer, middle, alternating and all axes; plus a long
  // reduction with few outputs (the two-pass chunked path, both kernels).
  const Tensor x = RandomTensor(dt, TensorShape({6, 7, 100, 5}), 7, 0.5, 1.5);
  const std::vector<std::vector<int32_t>> axes = {{3}, {0}, {2}, {1, 3}, {0, 2}, {0, 1, 2, 3},
                                                   {-1, -2}, {}};
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    for (const auto& a : axes) {
      for (bool keep : {false, true}) {
        GpuOpCase c(op);
        c.Input(x)
            .Input(test::AsTensor<int32_t>(a, {static_cast<int64_t>(a.size())}))
            .HostInput(1)
            .Attr("keep_dims", keep)
            .CpuReferenceInFloat64();
        SCOPED_TRACE(testing::Message() << op << " axes size " << a.size() << " keep " << keep);
        test::ExpectGpuMatchesCpu(c, Tol(dt));
      }
    }
  }
  // 200000-term sums: the float32 CPU kernel's own sequential sum is ~1.2e-5 off the exact
  // value, so the stand-in run (CPU against the float64 CPU reference) cannot check these.
  if (test::CpuStandIn() && dt == DT_FLOAT) return;
  const Tensor tall = RandomTensor(dt, TensorShape({200000, 3}), 8, 0.5, 1.5);
  for (int32_t axis : {0, 1}) {
    GpuOpCase c("Sum");
    c.Input(axis == 0 ? tall : RandomTensor(dt, TensorShape({3, 200000}), 9, 0.5, 1.5))
        .Input(test::AsTensor<int32_t>({axis}, {1}))
        .HostInput(1)
        .CpuReferenceInFloat64();
    test::ExpectGpuMatchesCpu(c, Tol(dt));
  }
  // Prod over a short axis (values near 1 keep it finite).
  GpuOpCase prod("Prod");
  prod.Input(RandomTensor(dt, TensorShape({40, 9}), 10, 0.9, 1.1))
      .Input(test::AsTensor<int32_t>({1}, {1}))
      .HostInput(1)
      .CpuReferenceInFloat64();
  test::ExpectGpuMatchesCpu(prod, Tol(dt));
}

TEST_P(GpuMathTest, BiasAddAndGradBothLayouts) {
  const DataType dt = GetParam();
  if (dt == DT_HALF || dt == DT_BFLOAT16) GTEST_SKIP() << "float/double only";
  for (const char* format : {"NHWC", "NCHW"}) {
    const bool nchw = std::string(format) == "NCHW";
    const TensorShape value = nchw ? TensorShape({4, 6, 9, 11}) : TensorShape({4, 9, 11, 6});
    GpuOpCase add("BiasAdd");
    add.Input(RandomTensor(dt, value, 1)).Input(RandomTensor(dt, TensorShape({6}), 2))
        .Attr("data_format", std::string(format));
    SCOPED_TRACE(format);
    test::ExpectGpuMatchesCpu(add, Tol(dt));
    GpuOpCase grad("BiasAddGrad");
    grad.Input(RandomTensor(dt, value, 3, 0.5, 1.5))
        .Attr("data_format", std::string(format))
        .CpuReferenceInFloat64();
    test::ExpectGpuMatchesCpu(grad, Tol(dt));
  }
}

TEST_P(GpuMathTest, SoftmaxShortAndLongRows) {
  const DataType dt = GetParam();
  if (dt == DT_HALF || dt == DT_BFLOAT16) GTEST_SKIP() << "float/double only";
  // 10 classes (a warp per row) and 3000 (a block per row); logits of 1e3 stay finite.
  for (int64_t n : {10, 3000}) {
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      GpuOpCase c(op);
      c.Input(RandomTensor(dt, TensorShape({3, 7, n}), 4, -1000, 1000)).CpuReferenceInFloat64();
      SCOPED_TRACE(testing::Message() << op << " " << n);
      test::ExpectGpuMatchesCpu(c, Tol(dt));
    }
  }
}

TEST_P(GpuMathTest, CrossEntropyDenseBroadcastAndSparse) {
  const DataType dt = GetParam();
  if (dt == DT_HALF || dt == DT_BFLOAT16) GTEST_SKIP() << "float/double only";
  for (int64_t classes : {10, 2000}) {
    const Tensor logits = RandomTensor(dt, TensorShape({33, classes}), 5, -5, 5);
    // Dense labels: a probability row per example, and one row broadcast over the batch.
    for (const TensorShape& ls : {TensorShape({33, classes}), TensorShape({1, classes})}) {
      std::vector<double> p = test::ToDoubles(RandomTensor(dt, ls, 6, 0, 1));
      const int64_t rows = ls.dim_size(0);
      for (int64_t r = 0; r < rows; ++r) {
        double sum = 0;
        for (int64_t j = 0; j < classes; ++j) sum += p[r * classes + j];
        for (int64_t j = 0; j < classes; ++j) p[r * classes + j] /= sum;
      }
      GpuOpCase c("SoftmaxCrossEntropyWithLogits");
      c.Input(logits).Input(test::FromDoubles(dt, ls, p)).CpuReferenceInFloat64();
      SCOPED_TRACE(testing::Message() << classes << " " << ls.DebugString());
      test::ExpectGpuMatchesCpu(c, Tol(dt));
    }
    for (DataType ldt : {DT_INT32, DT_INT64}) {
      GpuOpCase c("SparseSoftmaxCrossEntropyWithLogits");
      c.Input(logits)
          .Input(RandomTensor(ldt, TensorShape({33}), 7, 0, static_cast<double>(classes)))
          .CpuReferenceInFloat64();
      test::ExpectGpuMatchesCpu(c, Tol(dt));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, GpuMathTest,
                         ::testing::Values(DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16));

class GpuMathMiscTest : public test::GpuTest {};

TEST_F(GpuMathMiscTest, SparseLabelOutOfRangeGivesNanRow) {
  SkipIfCpuStandIn();
  GpuOpCase c("SparseSoftmaxCrossEntropyWithLogits");
  c.Input(RandomTensor(DT_FLOAT, TensorShape({3, 4}), 1)).Input(test::AsTensor<int32_t>({1, 4, 0}, {3}));
  auto out = c.RunGpu();
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> loss = test::ToDoubles((*out)[0]);
  const std::vector<double> backprop = test::ToDoubles((*out)[1]);
  EXPECT_FALSE(std::isnan(loss[0]));
  EXPECT_TRUE(std::isnan(loss[1]));
  EXPECT_FALSE(std::isnan(loss[2]));
  for (int j = 0; j < 4; ++j) EXPECT_TRUE(std::isnan(backprop[4 + j]));
  // The CPU kernel reports the same input as an error.
  EXPECT_EQ(c.RunCpu().status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(GpuMathMiscTest, MatMulWithEmptyInnerDimIsZeros) {
  GpuOpCase c("MatMul");
  c.Input(Tensor(DT_FLOAT, TensorShape({3, 0}))).Input(Tensor(DT_FLOAT, TensorShape({0, 4})));
  test::ExpectGpuMatchesCpu(c, 0);
}

TEST_F(GpuMathMiscTest, EmptyReductionsMatchCpu) {
  // Sum over an empty axis: zeros; Mean: NaN (0/0); Max: -inf.
  for (const char* op : {"Sum", "Mean", "Max"}) {
    GpuOpCase c(op);
    c.Input(Tensor(DT_FLOAT, TensorShape({3, 0}))).Input(test::AsTensor<int32_t>({1}, {1})).HostInput(1);
    SCOPED_TRACE(op);
    test::ExpectGpuMatchesCpu(c, 0);
  }
}

TEST_F(GpuMathMiscTest, ShapeErrorsAreTheCpuKernelsErrors) {
  test::ExpectInvalid(test::GpuError(GpuOpCase("MatMul")
                                         .Input(RandomTensor(DT_FLOAT, TensorShape({2, 3}), 1))
                                         .Input(RandomTensor(DT_FLOAT, TensorShape({4, 5}), 2))),
                      "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]");
  test::ExpectInvalid(
      test::GpuError(GpuOpCase("BatchMatMulV2")
                         .Input(RandomTensor(DT_FLOAT, TensorShape({2, 3, 4}), 1))
                         .Input(RandomTensor(DT_FLOAT, TensorShape({3, 4, 5}), 2))),
      "must have compatible batch dimensions");
  test::ExpectInvalid(test::GpuError(GpuOpCase("Sum")
                                         .Input(RandomTensor(DT_FLOAT, TensorShape({2, 3}), 1))
                                         .Input(test::AsTensor<int32_t>({2}, {1}))
                                         .HostInput(1)),
                      "Invalid reduction dimension 2 for input with 2 dimensions");
  test::ExpectInvalid(test::GpuError(GpuOpCase("BiasAdd")
                                         .Input(RandomTensor(DT_FLOAT, TensorShape({2, 3}), 1))
                                         .Input(RandomTensor(DT_FLOAT, TensorShape({4}), 2))),
                      "must provide as many biases as the channel dimension");
  test::ExpectInvalid(test::GpuError(GpuOpCase("SoftmaxCrossEntropyWithLogits")
                                         .Input(RandomTensor(DT_FLOAT, TensorShape({2, 3}), 1))
                                         .Input(RandomTensor(DT_FLOAT, TensorShape({2, 4}), 2))),
                      "must be broadcastable");
  test::ExpectInvalid(test::GpuError(GpuOpCase("Softmax").Input(Tensor::Scalar<float>(1))),
                      "logits must have >= 1 dimension");
}

}  // namespace
}  // namespace tensorflux
