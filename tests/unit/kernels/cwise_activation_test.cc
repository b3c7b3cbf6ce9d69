// Activations (Relu, Relu6, LeakyRelu, Elu, Selu, Softplus) and TF's elementwise backward ops
// (ReluGrad ... ReciprocalGrad): every dtype the OpDef allows against float64 formulas written
// here, extreme values (Softplus for |x| up to 1e4, NaN), the alpha attr, and the same-shape
// requirement of the backward ops (INVALID_ARGUMENT, never broadcasting).

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cwise_test_util.h"
#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace tensorflux {
namespace {

using test::AsTensor;
using test::FromDoubles;
using test::KernelRunner;
using test::ToDoubles;
using test::cwise::AllowedTypes;
using test::cwise::ExpectNear;
using test::cwise::IsUnsigned;
using test::cwise::Values;

constexpr double kScale = 1.0507009873554804934193349852946;
constexpr double kAlpha = 1.6732632423543772848170429916717;

double Relu(double v) { return v > 0 ? v : 0; }
double Elu(double v) { return v < 0 ? std::expm1(v) : v; }
double Selu(double v) { return v < 0 ? kScale * kAlpha * std::expm1(v) : kScale * v; }
double Softplus(double v) { return v > 30 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); }

struct UnaryCase {
  std::string op;
  std::function<double(double)> ref;
};

TEST(CwiseActivationTest, EveryOpEveryDtypeMatchesFloat64Reference) {
  const std::vector<UnaryCase> cases = {
      {"Relu", Relu},
      {"Relu6", [](double v) { return std::min(std::max(v, 0.0), 6.0); }},
      // alpha is a float attr: 0.2f, not 0.2, in every dtype (as TF casts it).
      {"LeakyRelu", [](double v) { return v > 0 ? v : double{0.2f} * v; }},
      {"Elu", Elu},
      {"Selu", Selu},
      {"Softplus", Softplus},
  };
  int checked = 0;
  for (const UnaryCase& c : cases) {
    const std::vector<DataType> types = AllowedTypes(c.op);
    EXPECT_GE(types.size(), 4u) << c.op;
    for (DataType dt : types) {
      for (const TensorShape& shape : {TensorShape({}), TensorShape({7}), TensorShape({2, 300}),
                                       TensorShape({3, 0})}) {
        const int64_t n = shape.num_elements();
        std::vector<double> xv = IsUnsigned(dt) ? Values(dt, n, 0, 9, 4) : Values(dt, n, -8, 8, 4);
        Tensor x = FromDoubles(dt, shape, xv);
        xv = ToDoubles(x);
        std::vector<double> want;
        for (double v : xv) want.push_back(c.ref(v));
        auto y = KernelRunner(c.op).Input(x).RunOne();
        const std::string what = c.op + " " + DataTypeString(dt) + " " + shape.DebugString();
        ASSERT_TRUE(y.ok()) << what << ": " << y.status();
        EXPECT_EQ(y->dtype(), dt);
        EXPECT_EQ(y->shape(), shape);
        ExpectNear(dt, ToDoubles(*y), want, what);
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 4 * (12 + 12 + 4 * 4));
}

TEST(CwiseActivationTest, LeakyReluAlphaAttr) {
  KernelRunner r("LeakyRelu");
  r.Attr("alpha", 0.01f);
  auto y = r.Input(AsTensor<double>({-3, 0, 2}, TensorShape({3}))).RunOne();
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_NEAR(y->flat<double>()[0], -0.03, 1e-9);  // alpha is a float attr
  EXPECT_EQ(y->flat<double>()[1], 0);
  EXPECT_EQ(y->flat<double>()[2], 2);
  KernelRunner g("LeakyReluGrad");
  g.Attr("alpha", 0.5f);
  auto b = g.Input(AsTensor<float>({4, 4}, TensorShape({2})))
               .Input(AsTensor<float>({-1, 1}, TensorShape({2})))
               .RunOne();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->flat<float>()[0], 2.f);
  EXPECT_EQ(b->flat<float>()[1], 4.f);
}

TEST(CwiseActivationTest, ExtremeValuesAndNaN) {
  // Softplus: x for large x (no inf), e^x for very negative x (no 0 before e^x underflows).
  auto s = KernelRunner("Softplus")
               .Input(AsTensor<double>({1e4, -1e4, 700, -700, 0}, TensorShape({5})))
               .RunOne();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->flat<double>()[0], 1e4);
  EXPECT_EQ(s->flat<double>()[1], 0);
  EXPECT_EQ(s->flat<double>()[2], 700);
  EXPECT_NEAR(s->flat<double>()[3], std::exp(-700.0), 1e-12 * std::exp(-700.0));
  EXPECT_NEAR(s->flat<double>()[4], std::log(2.0), 1e-15);
  auto sf = KernelRunner("Softplus")
                .Input(AsTensor<float>({100, -80, 88.5f}, TensorShape({3})))
                .RunOne();
  ASSERT_TRUE(sf.ok());
  EXPECT_EQ(sf->flat<float>()[0], 100.f);
  EXPECT_NEAR(sf->flat<float>()[1], std::exp(-80.0), 1e-6 * std::exp(-80.0));
  EXPECT_EQ(sf->flat<float>()[2], 88.5f);
  // NaN propagates through every activation (Relu included).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* op : {"Relu", "Relu6", "LeakyRelu", "Elu", "Selu", "Softplus"}) {
    std::vector<float> xv(19, 1.f);
    xv[5] = nan;
    xv[18] = nan;
    auto y = KernelRunner(op).Input(AsTensor<float>(xv, TensorShape({19}))).RunOne();
    ASSERT_TRUE(y.ok()) << op;
    EXPECT_TRUE(std::isnan(y->flat<float>()[5])) << op;
    EXPECT_TRUE(std::isnan(y->flat<float>()[18])) << op;
    EXPECT_FALSE(std::isnan(y->flat<float>()[0])) << op;
  }
  // Elu / Selu saturate at -1 and -scale * alpha.
  auto e = KernelRunner("Elu").Input(AsTensor<float>({-1e4f}, TensorShape({1}))).RunOne();
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->flat<float>()[0], -1.f);
}

// ---------------------------------------------------------------- backward ops

struct GradCase {
  std::string op;
  double lo0, hi0, lo1, hi1;  // ranges of input 0 and input 1
  std::function<double(double, double)> ref;
};

TEST(CwiseActivationGradTest, EveryOpEveryDtypeMatchesFloat64Reference) {
  const std::vector<GradCase> cases = {
      {"ReluGrad", -5, 5, -3, 3, [](double g, double f) { return f > 0 ? g : 0; }},
      {"Relu6Grad", -5, 5, -3, 9, [](double g, double f) { return f > 0 && f < 6 ? g : 0; }},
      {"LeakyReluGrad", -5, 5, -3, 3,
       [](double g, double f) { return f > 0 ? g : double{0.2f} * g; }},
      {"SoftplusGrad", -5, 5, -8, 8, [](double g, double f) { return g / (1 + std::exp(-f)); }},
      {"EluGrad", -5, 5, -1, 3, [](double g, double o) { return o < 0 ? g * (o + 1) : g; }},
      {"SeluGrad", -5, 5, -1.7, 3,
       [](double g, double o) { return o < 0 ? g * (o + kScale * kAlpha) : g * kScale; }},
      {"TanhGrad", -1, 1, -5, 5, [](double y, double dy) { return dy * (1 - y * y); }},
      {"SigmoidGrad", 0, 1, -5, 5, [](double y, double dy) { return dy * y * (1 - y); }},
      {"RsqrtGrad", 0.1, 3, -5, 5, [](double y, double dy) { return -0.5 * dy * y * y * y; }},
      {"SqrtGrad", 0.1, 3, -5, 5, [](double y, double dy) { return 0.5 * dy / y; }},
      {"ReciprocalGrad", -3, 3, -5, 5, [](double y, double dy) { return -dy * y * y; }},
  };
  int checked = 0;
  for (const GradCase& c : cases) {
    const std::vector<DataType> types = AllowedTypes(c.op);
    EXPECT_GE(types.size(), 4u) << c.op;
    for (DataType dt : types) {
      for (const TensorShape& shape : {TensorShape({}), TensorShape({9}), TensorShape({2, 513}),
                                       TensorShape({0, 2})}) {
        const int64_t n = shape.num_elements();
        std::vector<double> av, bv;
        if (IsUnsigned(dt)) {
          av = Values(dt, n, 0, 20, 5);
          bv = Values(dt, n, 0, 9, 6);
        } else {
          av = Values(dt, n, c.lo0, c.hi0, 5);
          bv = Values(dt, n, c.lo1, c.hi1, 6);
        }
        Tensor a = FromDoubles(dt, shape, av), b = FromDoubles(dt, shape, bv);
        av = ToDoubles(a);
        bv = ToDoubles(b);
        std::vector<double> want;
        for (size_t i = 0; i < av.size(); ++i) want.push_back(c.ref(av[i], bv[i]));
        auto z = KernelRunner(c.op).Input(a).Input(b).RunOne();
        const std::string what = c.op + " " + DataTypeString(dt) + " " + shape.DebugString();
        ASSERT_TRUE(z.ok()) << what << ": " << z.status();
        EXPECT_EQ(z->shape(), shape);
        ExpectNear(dt, ToDoubles(*z), want, what);
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 4 * (12 * 2 + 9 * 4));
}

// ReluGrad and Relu6Grad compare features in packets (GradWhereInside): the bounds themselves
// (0, -0, 6), NaN and infinite features, a denormal, and NaN/inf gradients, over a length that
// fills several AVX-512 packets and leaves a scalar tail, in float and double.
TEST(CwiseActivationGradTest, ReluGradBoundsNaNAndInfInPackets) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> special = {0.0, -0.0, 6.0, nan, 1e-42, inf, -inf, 5.999, 6.001, -1};
  const int64_t n = 53;
  for (DataType dt : {DT_FLOAT, DT_DOUBLE}) {
    std::vector<double> g(n), f(n);
    for (int64_t i = 0; i < n; ++i) {
      f[i] = special[i % special.size()];
      g[i] = i % 7 == 3 ? nan : i % 11 == 5 ? -inf : 0.25 * static_cast<double>(i) - 4;
    }
    Tensor gt = FromDoubles(dt, TensorShape({n}), g), ft = FromDoubles(dt, TensorShape({n}), f);
    const std::vector<double> gv = ToDoubles(gt), fv = ToDoubles(ft);
    for (const bool six : {false, true}) {
      auto z = KernelRunner(six ? "Relu6Grad" : "ReluGrad").Input(gt).Input(ft).RunOne();
      ASSERT_TRUE(z.ok()) << z.status();
      const std::vector<double> zv = ToDoubles(*z);
      for (int64_t i = 0; i < n; ++i) {
        const bool pass = fv[i] > 0 && (!six || fv[i] < 6);
        const std::string what = std::string(six ? "Relu6Grad " : "ReluGrad ") +
                                 DataTypeString(dt) + " i=" + std::to_string(i);
        if (!pass) {
          EXPECT_EQ(zv[i], 0.0) << what;  // also where the gradient is NaN or inf
        } else if (std::isnan(gv[i])) {
          EXPECT_TRUE(std::isnan(zv[i])) << what;
        } else {
          EXPECT_EQ(zv[i], gv[i]) << what;
        }
      }
    }
  }
}

TEST(CwiseActivationGradTest, InputsMustHaveTheSameShape) {
  for (const char* op : {"ReluGrad", "TanhGrad", "SoftplusGrad", "EluGrad", "LeakyReluGrad"}) {
    for (const auto& [s0, s1] : std::vector<std::pair<TensorShape, TensorShape>>{
             {TensorShape({2, 3}), TensorShape({3})},
             {TensorShape({}), TensorShape({1})},
             {TensorShape({4}), TensorShape({})}}) {
      auto z = KernelRunner(op)
                   .Input(Tensor(DT_FLOAT, s0))
                   .Input(FromDoubles(DT_FLOAT, s1, std::vector<double>(s1.num_elements(), 1)))
                   .RunOne();
      ASSERT_FALSE(z.ok()) << op;
      EXPECT_EQ(z.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_NE(z.status().message().find("must have the same size and shape"),
                std::string::npos)
          << z.status();
      EXPECT_NE(z.status().message().find("test_node"), std::string::npos) << z.status();
    }
    KernelRunner r(op);
    r.Attr("T", DT_FLOAT);
    auto s = r.InferShapes({PartialTensorShape({-1, 3}), PartialTensorShape({2, -1})});
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ((*s)[0], PartialTensorShape({2, 3}));
    EXPECT_FALSE(r.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({3})}).ok());
  }
}

TEST(CwiseActivationGradTest, ForwardsAnExclusiveInput) {
  Tensor g = FromDoubles(DT_FLOAT, TensorShape({64}), Values(DT_FLOAT, 64, -1, 1, 1));
  const void* buf = g.raw_data();
  auto z = KernelRunner("ReluGrad")
               .Input(std::move(g))
               .Input(FromDoubles(DT_FLOAT, TensorShape({64}), Values(DT_FLOAT, 64, -1, 1, 2)))
               .RunOne();
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->raw_data(), buf);
}

// Outputs of 32 MiB and more (not forwarded) take the streaming-store path: blocks computed on
// the stack, then written around the cache. Checked element by element, odd length for the tail.
TEST(CwiseActivationTest, LargeOutputsThroughStreamingStores) {
  test::TestCpuDevice device(2);
  const int64_t n = (int64_t{8} << 20) + 13;
  Tensor x = FromDoubles(DT_FLOAT, TensorShape({n}), Values(DT_FLOAT, n, -4, 4, 7));
  Tensor y = FromDoubles(DT_FLOAT, TensorShape({n}), Values(DT_FLOAT, n, -4, 4, 8));
  auto r = KernelRunner("Relu").OnDevice(&device).Input(x).RunOne();
  auto a = KernelRunner("AddV2").OnDevice(&device).Input(x).Input(y).RunOne();
  ASSERT_TRUE(r.ok() && a.ok());
  EXPECT_NE(r->raw_data(), x.raw_data());
  const float* xp = x.data<float>();
  const float* yp = y.data<float>();
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    bad += r->data<float>()[i] != (xp[i] > 0 ? xp[i] : 0.f);
    bad += a->data<float>()[i] != xp[i] + yp[i];
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace tensorflux
