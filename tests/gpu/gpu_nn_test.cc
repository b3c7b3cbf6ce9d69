// GPU Conv2D(+BackpropInput/Filter) (cuDNN), pooling (own kernels) and FusedBatchNormV3(+Grad)
// (cuDNN) against the CPU kernels on random inputs, float32, relative error < 1e-5 against the
// CPU kernels run in float64: symmetric and asymmetric (SAME on even sizes, EXPLICIT) padding,
// strides, dilations, groups, both data formats; MaxPoolGrad's first-maximum rule on ties; batch
// norm in training (with and without an averaging factor) and inference.
#include "gpu_test_util.h"

namespace tensorflux {
namespace {

using test::GpuOpCase;
using test::RandomTensor;

constexpr double kTol = 1e-5;

struct ConvCase {
  const char* name;
  TensorShape input, filter;
  std::vector<int32_t> strides, dilations;
  std::string padding, format;
  std::vector<int64_t> explicit_pads;
};

std::vector<ConvCase> ConvCases() {
  return {
      {"nhwc 3x3 same", TensorShape({2, 9, 9, 5}), TensorShape({3, 3, 5, 7}), {1, 1, 1, 1},
       {1, 1, 1, 1}, "SAME", "NHWC", {}},
      {"nhwc 3x3 stride 2 same (asymmetric)", TensorShape({2, 8, 10, 4}),
       TensorShape({3, 3, 4, 6}), {1, 2, 2, 1}, {1, 1, 1, 1}, "SAME", "NHWC", {}},
      {"nchw 5x5 valid dilated", TensorShape({2, 3, 14, 12}), TensorShape({5, 5, 3, 4}),
       {1, 1, 1, 1}, {1, 2, 2, 1}, "VALID", "NCHW", {}},
      {"nhwc grouped", TensorShape({2, 7, 7, 8}), TensorShape({3, 3, 4, 6}), {1, 1, 1, 1},
       {1, 1, 1, 1}, "SAME", "NHWC", {}},
      {"nhwc explicit asymmetric", TensorShape({1, 6, 7, 3}), TensorShape({2, 3, 3, 5}),
       {1, 1, 2, 1}, {1, 1, 1, 1}, "EXPLICIT", "NHWC", {0, 0, 2, 0, 1, 3, 0, 0}},
  };
}

void SetConvAttrs(GpuOpCase* c, const ConvCase& cs) {
  std::vector<int32_t> strides = cs.strides, dilations = cs.dilations;
  if (cs.format == "NCHW") {  // the test lists them NHWC
    strides = {cs.strides[0], cs.strides[3], cs.strides[1], cs.strides[2]};
    dilations = {cs.dilations[0], cs.dilations[3], cs.dilations[1], cs.dilations[2]};
  }
  c->Attr("strides", strides).Attr("dilations", dilations).Attr("padding", cs.padding)
      .Attr("data_format", cs.format);
  if (!cs.explicit_pads.empty()) c->Attr("explicit_paddings", cs.explicit_pads);
}

Tensor SizesOf(const TensorShape& s) {
  std::vector<int32_t> v;
  for (int d = 0; d < s.dims(); ++d) v.push_back(static_cast<int32_t>(s.dim_size(d)));
  return test::AsTensor<int32_t>(v, {static_cast<int64_t>(v.size())});
}

class GpuConvTest : public test::GpuTest {};

TEST_F(GpuConvTest, ForwardAndBothBackpropsMatchCpu) {
  for (const ConvCase& cs : ConvCases()) {
    SCOPED_TRACE(cs.name);
    const Tensor x = RandomTensor(DT_FLOAT, cs.input, 1);
    const Tensor w = RandomTensor(DT_FLOAT, cs.filter, 2);
    GpuOpCase fwd("Conv2D");
    fwd.Input(x).Input(w).CpuReferenceInFloat64();
    SetConvAttrs(&fwd, cs);
    test::ExpectGpuMatchesCpu(fwd, kTol);
    auto y = fwd.RunCpu();
    ASSERT_TRUE(y.ok()) << y.status();
    const Tensor dy = RandomTensor(DT_FLOAT, (*y)[0].shape(), 3);

    GpuOpCase bwd_input("Conv2DBackpropInput");
    bwd_input.Input(SizesOf(cs.input)).Input(w).Input(dy).HostInput(0).CpuReferenceInFloat64();
    SetConvAttrs(&bwd_input, cs);
    test::ExpectGpuMatchesCpu(bwd_input, kTol);

    GpuOpCase bwd_filter("Conv2DBackpropFilter");
    bwd_filter.Input(x).Input(SizesOf(cs.filter)).Input(dy).HostInput(1).CpuReferenceInFloat64();
    SetConvAttrs(&bwd_filter, cs);
    test::ExpectGpuMatchesCpu(bwd_filter, kTol);
  }
}

TEST_F(GpuConvTest, ShapeErrorsAreTheCpuKernelsErrors) {
  GpuOpCase c("Conv2D");
  c.Input(RandomTensor(DT_FLOAT, TensorShape({1, 5, 5, 3}), 1))
      .Input(RandomTensor(DT_FLOAT, TensorShape({3, 3, 4, 2}), 2))
      .Attr("strides", std::vector<int32_t>{1, 1, 1, 1})
      .Attr("padding", std::string("SAME"));
  const Status gpu = test::GpuError(c);
  const Status cpu = c.RunCpu().status();
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.code(), absl::StatusCode::kInvalidArgument) << gpu;
  EXPECT_EQ(gpu.message(), cpu.message());
}

class GpuPoolTest : public test::GpuTest, public ::testing::WithParamInterface<DataType> {};

TEST_P(GpuPoolTest, PoolingAndGradientsMatchCpu) {
  const DataType dt = GetParam();
  const double tol = dt == DT_FLOAT ? kTol : 1e-12;
  struct Case {
    std::vector<int32_t> ksize, strides;
    std::string padding;
  };
  for (const Case& pc : {Case{{1, 3, 3, 1}, {1, 2, 2, 1}, "SAME"},  // asymmetric on even sizes
                         Case{{1, 3, 3, 1}, {1, 2, 2, 1}, "VALID"},
                         Case{{1, 2, 2, 1}, {1, 1, 1, 1}, "SAME"},
                         Case{{1, 3, 2, 1}, {1, 1, 2, 1}, "VALID"}}) {
    SCOPED_TRACE(testing::Message() << pc.padding << " k " << pc.ksize[1] << "x" << pc.ksize[2]);
    // Integer-valued inputs make ties, which MaxPoolGrad must route to the first maximum.
    std::vector<double> v = test::ToDoubles(RandomTensor(dt, TensorShape({2, 10, 12, 3}), 5, 0, 4));
    for (double& e : v) e = std::floor(e);
    const Tensor x = test::FromDoubles(dt, TensorShape({2, 10, 12, 3}), v);
    auto attrs = [&](GpuOpCase* c) {
      c->Attr("ksize", pc.ksize).Attr("strides", pc.strides).Attr("padding", pc.padding);
    };
    for (const char* op : {"MaxPool", "AvgPool"}) {
      GpuOpCase c(op);
      c.Input(x);
      attrs(&c);
      test::ExpectGpuMatchesCpu(c, tol);
    }
    GpuOpCase fwd("MaxPool");
    fwd.Input(x);
    attrs(&fwd);
    auto y = fwd.RunCpu();
    ASSERT_TRUE(y.ok()) << y.status();
    const Tensor dy = RandomTensor(dt, (*y)[0].shape(), 6);
    GpuOpCase max_grad("MaxPoolGrad");
    max_grad.Input(x).Input((*y)[0]).Input(dy);
    attrs(&max_grad);
    test::ExpectGpuMatchesCpu(max_grad, tol);
    GpuOpCase avg_grad("AvgPoolGrad");
    avg_grad.Input(SizesOf(x.shape())).Input(dy).HostInput(0);
    attrs(&avg_grad);
    test::ExpectGpuMatchesCpu(avg_grad, tol);
  }
}

INSTANTIATE_TEST_SUITE_P(Types, GpuPoolTest, ::testing::Values(DT_FLOAT, DT_DOUBLE));

class GpuBatchNormTest : public test::GpuTest {};

TEST_F(GpuBatchNormTest, ForwardAndGradientMatchCpu) {
  for (const char* format : {"NHWC", "NCHW"}) {
    const bool nhwc = std::string(format) == "NHWC";
    const TensorShape shape = nhwc ? TensorShape({4, 7, 9, 6}) : TensorShape({4, 6, 7, 9});
    const Tensor x = RandomTensor(DT_FLOAT, shape, 1, -2, 3);
    const Tensor scale = RandomTensor(DT_FLOAT, TensorShape({6}), 2, 0.5, 1.5);
    const Tensor offset = RandomTensor(DT_FLOAT, TensorShape({6}), 3);
    const Tensor mean = RandomTensor(DT_FLOAT, TensorShape({6}), 4);
    const Tensor var = RandomTensor(DT_FLOAT, TensorShape({6}), 5, 0.5, 2);
    for (bool training : {true, false}) {
      for (float factor : {1.0f, 0.3f}) {
        if (!training && factor != 1.0f) continue;
        SCOPED_TRACE(testing::Message() << format << " training " << training << " factor "
                                        << factor);
        auto setup = [&](GpuOpCase* c) {
          c->Attr("epsilon", 1e-3f).Attr("is_training", training)
              .Attr("data_format", std::string(format)).CpuReferenceInFloat64();
        };
        GpuOpCase fwd("FusedBatchNormV3");
        fwd.Input(x).Input(scale).Input(offset).Input(mean).Input(var)
            .Attr("exponential_avg_factor", factor);
        setup(&fwd);
        test::ExpectGpuMatchesCpu(fwd, kTol);
        auto out = fwd.RunCpu();
        ASSERT_TRUE(out.ok()) << out.status();
        GpuOpCase grad("FusedBatchNormGradV3");
        grad.Input(RandomTensor(DT_FLOAT, shape, 6)).Input(x).Input(scale)
            .Input((*out)[3]).Input((*out)[4]).Input((*out)[5]);
        setup(&grad);
        test::ExpectGpuMatchesCpu(grad, kTol);
      }
    }
  }
}

}  // namespace
}  // namespace tensorflux
