// _FusedMatMul and _FusedConv2D (ops in ops/math_ops_matmul.cc and ops/conv_ops.cc, kernels in
// matmul_op.cc / conv_ops.cc with kernels/cpu/fused_epilogue.cc): values against float64 loops
// written here (product or direct convolution, + bias, activation), bit-identity with the
// unfused MatMul/Conv2D -> BiasAdd -> activation kernels, every fused_ops combination, NCHW,
// half, and the bad inputs and attrs (INVALID_ARGUMENT / UNIMPLEMENTED naming the node).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace tensorflux {
namespace {

using test::FromDoubles;
using test::KernelRunner;
using test::ToDoubles;
using ::testing::HasSubstr;

// Deterministic values in [-1, 1) (a few exact zeros and negatives for the activations).
std::vector<double> Values(int64_t n, int seed) {
  std::vector<double> v(n);
  uint32_t s = 2654435761u * static_cast<uint32_t>(seed + 1);
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    v[i] = static_cast<double>(s >> 8) / static_cast<double>(1 << 23) - 1.0;
    if (i % 7 == 3) v[i] = 0;
  }
  return v;
}

double Activate(const std::string& act, double x) {
  if (act == "Relu") return std::max(x, 0.0);
  if (act == "Relu6") return std::min(std::max(x, 0.0), 6.0);
  if (act == "Elu") return x < 0 ? std::expm1(x) : x;
  if (act == "LeakyRelu") return x > 0 ? x : 0.2 * x;
  return x;
}

std::vector<std::string> FusedOps(const std::string& act) {
  if (act.empty()) return {"BiasAdd"};
  return {"BiasAdd", act};
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << "element " << i;
  }
}

void ExpectBitIdentical(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(0, std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()));
}

// ---------------------------------------------------------------- _FusedMatMul

StatusOr<Tensor> FusedMatMul(const Tensor& a, const Tensor& b, const Tensor& bias,
                             const std::vector<std::string>& ops, bool ta = false,
                             bool tb = false) {
  return KernelRunner("_FusedMatMul", "fmm")
      .Attr("transpose_a", ta)
      .Attr("transpose_b", tb)
      .Attr("num_args", int64_t{1})
      .Attr("fused_ops", ops)
      .Input(a)
      .Input(b)
      .Input(bias)
      .RunOne();
}

TEST(FusedMatMulTest, ValuesAgainstFloat64Loops) {
  const int64_t m = 5, k = 7, n = 6;
  for (const std::string act : {"", "Relu", "Relu6", "Elu", "LeakyRelu"}) {
    for (bool ta : {false, true}) {
      SCOPED_TRACE(act + (ta ? " transpose_a" : ""));
      std::vector<double> a = Values(m * k, 1), b = Values(k * n, 2), bias = Values(n, 3);
      for (double& x : a) x *= 3;  // some outputs above 6 for Relu6
      std::vector<double> want(m * n);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t p = 0; p < k; ++p) s += (ta ? a[p * m + i] : a[i * k + p]) * b[p * n + j];
          want[i * n + j] = Activate(act, s + bias[j]);
        }
      }
      const TensorShape a_shape = ta ? TensorShape({k, m}) : TensorShape({m, k});
      auto out = FusedMatMul(FromDoubles(DT_FLOAT, a_shape, a),
                             FromDoubles(DT_FLOAT, {k, n}, b), FromDoubles(DT_FLOAT, {n}, bias),
                             FusedOps(act), ta);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->shape(), TensorShape({m, n}));
      ExpectNear(ToDoubles(*out), want, 1e-5);
    }
  }
}

// The fused kernel equals MatMul -> BiasAdd -> activation bit for bit (Elu aside, see
// fused_epilogue.h), for a product big enough for the threaded GEMM and the sharded epilogue.
TEST(FusedMatMulTest, BitIdenticalToTheUnfusedChain) {
  const int64_t m = 300, k = 90, n = 70;
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF}) {
    for (const std::string act : {"", "Relu", "Relu6", "LeakyRelu"}) {
      SCOPED_TRACE(DataTypeString(dt) + " " + act);
      Tensor a = FromDoubles(dt, {m, k}, Values(m * k, 4));
      Tensor b = FromDoubles(dt, {k, n}, Values(k * n, 5));
      Tensor bias = FromDoubles(dt, {n}, Values(n, 6));
      test::TestCpuDevice device(4);
      auto fused = KernelRunner("_FusedMatMul")
                       .OnDevice(&device)
                       .Attr("num_args", int64_t{1})
                       .Attr("fused_ops", FusedOps(act))
                       .Input(a)
                       .Input(b)
                       .Input(bias)
                       .RunOne();
      ASSERT_TRUE(fused.ok()) << fused.status();
      auto y = KernelRunner("MatMul").OnDevice(&device).Input(a).Input(b).RunOne();
      ASSERT_TRUE(y.ok()) << y.status();
      y = KernelRunner("BiasAdd").OnDevice(&device).Input(*y).Input(bias).RunOne();
      ASSERT_TRUE(y.ok()) << y.status();
      if (!act.empty()) y = KernelRunner(act).OnDevice(&device).Input(*y).RunOne();
      ASSERT_TRUE(y.ok()) << y.status();
      ExpectBitIdentical(*fused, *y);
    }
  }
}

TEST(FusedMatMulTest, EmptyProductIsTheActivatedBias) {
  // k = 0: the product is zeros, so the output is act(bias) in every row.
  auto out = FusedMatMul(FromDoubles(DT_FLOAT, {2, 0}, {}), FromDoubles(DT_FLOAT, {0, 3}, {}),
                         FromDoubles(DT_FLOAT, {3}, {-1, 0.5, 2}), {"BiasAdd", "Relu"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles(*out), (std::vector<double>{0, 0.5, 2, 0, 0.5, 2}));
}

TEST(FusedMatMulTest, BadInputsAndAttrs) {
  Tensor a = FromDoubles(DT_FLOAT, {2, 3}, Values(6, 1));
  Tensor b = FromDoubles(DT_FLOAT, {3, 4}, Values(12, 2));
  // A bias that does not match the columns, or is not a vector.
  test::ExpectInvalid(FusedMatMul(a, b, FromDoubles(DT_FLOAT, {3}, Values(3, 3)), {"BiasAdd"}),
                      "bias shape [3]");
  test::ExpectInvalid(FusedMatMul(a, b, FromDoubles(DT_FLOAT, {1, 4}, Values(4, 3)),
                                  {"BiasAdd"}),
                      "bias must be 1-D");
  // Inner dims that differ are MatMul's error.
  test::ExpectInvalid(FusedMatMul(a, a, FromDoubles(DT_FLOAT, {3}, Values(3, 3)), {"BiasAdd"}),
                      "Matrix size-incompatible");
  // fused_ops the kernel does not implement, and a wrong num_args.
  Tensor bias = FromDoubles(DT_FLOAT, {4}, Values(4, 3));
  for (const std::vector<std::string>& ops :
       std::vector<std::vector<std::string>>{{}, {"Relu"}, {"BiasAdd", "Tanh"},
                                             {"BiasAdd", "Relu", "Relu"}}) {
    auto out = FusedMatMul(a, b, bias, ops);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented) << out.status();
    EXPECT_THAT(std::string(out.status().message()), HasSubstr("fmm"));
  }
  auto two = KernelRunner("_FusedMatMul", "fmm")
                 .Attr("num_args", int64_t{2})
                 .Attr("fused_ops", std::vector<std::string>{"BiasAdd"})
                 .Input(a)
                 .Input(b)
                 .Input(bias)
                 .Input(bias)
                 .Run();
  test::ExpectInvalid(two.status(), "num_args = 1");
}

TEST(FusedMatMulTest, ShapeFunction) {
  auto shapes = KernelRunner("_FusedMatMul")
                    .Attr("T", DT_FLOAT)
                    .Attr("num_args", int64_t{1})
                    .Attr("fused_ops", std::vector<std::string>{"BiasAdd", "Relu"})
                    .Attr("transpose_b", true)
                    .InferShapes({PartialTensorShape({-1, 3}), PartialTensorShape({4, 3}),
                                  PartialTensorShape({4})});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialTensorShape({-1, 4}));
  auto bad = KernelRunner("_FusedMatMul")
                 .Attr("T", DT_FLOAT)
                 .Attr("num_args", int64_t{1})
                 .Attr("fused_ops", std::vector<std::string>{"BiasAdd"})
                 .InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({3, 4}),
                               PartialTensorShape({5})});
  test::ExpectInvalid(bad.status(), "bias has 5 elements but the output has 4 channels");
}

// ---------------------------------------------------------------- _FusedConv2D

struct ConvCase {
  int64_t n, h, w, c, kh, kw, out;
  std::string padding;
  bool nchw;
};

// Direct float64 convolution, stride 1, with TF's SAME/VALID padding, then bias and activation.
std::vector<double> ReferenceConv(const ConvCase& c, const std::vector<double>& x,
                                  const std::vector<double>& f, const std::vector<double>& bias,
                                  const std::string& act, int64_t* oh, int64_t* ow) {
  const bool same = c.padding == "SAME";
  *oh = same ? c.h : c.h - c.kh + 1;
  *ow = same ? c.w : c.w - c.kw + 1;
  const int64_t pt = same ? (c.kh - 1) / 2 : 0, pl = same ? (c.kw - 1) / 2 : 0;
  auto xi = [&](int64_t n, int64_t h, int64_t w, int64_t ch) {
    return c.nchw ? ((n * c.c + ch) * c.h + h) * c.w + w : ((n * c.h + h) * c.w + w) * c.c + ch;
  };
  auto yi = [&](int64_t n, int64_t h, int64_t w, int64_t ch) {
    return c.nchw ? ((n * c.out + ch) * *oh + h) * *ow + w
                  : ((n * *oh + h) * *ow + w) * c.out + ch;
  };
  std::vector<double> y(c.n * *oh * *ow * c.out);
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t i = 0; i < *oh; ++i)
      for (int64_t j = 0; j < *ow; ++j)
        for (int64_t o = 0; o < c.out; ++o) {
          double s = 0;
          for (int64_t a = 0; a < c.kh; ++a)
            for (int64_t b = 0; b < c.kw; ++b) {
              const int64_t h = i + a - pt, w = j + b - pl;
              if (h < 0 || h >= c.h || w < 0 || w >= c.w) continue;
              for (int64_t ch = 0; ch < c.c; ++ch)
                s += x[xi(n, h, w, ch)] * f[((a * c.kw + b) * c.c + ch) * c.out + o];
            }
          y[yi(n, i, j, o)] = Activate(act, s + bias[o]);
        }
  return y;
}

StatusOr<Tensor> FusedConv(const ConvCase& c, DataType dt, const std::vector<double>& x,
                           const std::vector<double>& f, const std::vector<double>& bias,
                           const std::vector<std::string>& ops, DeviceBase* device = nullptr) {
  const TensorShape xs = c.nchw ? TensorShape({c.n, c.c, c.h, c.w})
                                : TensorShape({c.n, c.h, c.w, c.c});
  KernelRunner r("_FusedConv2D", "fconv");
  if (device != nullptr) r.OnDevice(device);
  return r.Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
      .Attr("padding", c.padding)
      .Attr("data_format", std::string(c.nchw ? "NCHW" : "NHWC"))
      .Attr("num_args", int64_t{1})
      .Attr("fused_ops", ops)
      .Input(FromDoubles(dt, xs, x))
      .Input(FromDoubles(dt, {c.kh, c.kw, c.c, c.out}, f))
      .Input(FromDoubles(dt, {static_cast<int64_t>(bias.size())}, bias))
      .RunOne();
}

TEST(FusedConv2DTest, ValuesAgainstFloat64Loops) {
  const ConvCase cases[] = {{2, 5, 6, 3, 3, 3, 4, "SAME", false},
                            {1, 6, 5, 2, 2, 3, 5, "VALID", false},
                            {2, 4, 5, 3, 3, 2, 4, "SAME", true}};
  for (const ConvCase& c : cases) {
    for (const std::string act : {"", "Relu", "Relu6", "Elu"}) {
      SCOPED_TRACE(c.padding + (c.nchw ? " NCHW " : " NHWC ") + act);
      const auto x = Values(c.n * c.h * c.w * c.c, 7), f = Values(c.kh * c.kw * c.c * c.out, 8);
      const auto bias = Values(c.out, 9);
      int64_t oh, ow;
      const auto want = ReferenceConv(c, x, f, bias, act, &oh, &ow);
      for (DataType dt : {DT_FLOAT, DT_DOUBLE}) {
        auto out = FusedConv(c, dt, x, f, bias, FusedOps(act));
        ASSERT_TRUE(out.ok()) << out.status();
        EXPECT_EQ(out->shape(), c.nchw ? TensorShape({c.n, c.out, oh, ow})
                                       : TensorShape({c.n, oh, ow, c.out}));
        ExpectNear(ToDoubles(*out), want, dt == DT_FLOAT ? 1e-5 : 1e-12);
      }
    }
  }
}

// BiasAdd [+ activation] runs as the epilogue pass after oneDNN's plain convolution: it equals
// Conv2D -> BiasAdd [-> Relu] bit for bit on every CPU (oneDNN's fused-bias post-ops did not on
// AVX2-only CPUs). The third case is the
// Fashion-MNIST CNN's first layer (one input channel), which oneDNN runs with another kernel.
TEST(FusedConv2DTest, BitIdenticalToTheUnfusedChain) {
  test::TestCpuDevice device(4);
  for (const ConvCase& c : {ConvCase{4, 12, 12, 8, 3, 3, 16, "SAME", false},
                            ConvCase{4, 12, 12, 8, 3, 3, 16, "SAME", true},
                            ConvCase{2, 28, 28, 1, 3, 3, 32, "SAME", false}}) {
    const bool nchw = c.nchw;
    const TensorShape xs = nchw ? TensorShape({c.n, c.c, c.h, c.w})
                                : TensorShape({c.n, c.h, c.w, c.c});
    const std::string format = nchw ? "NCHW" : "NHWC";
    const auto x = Values(c.n * c.h * c.w * c.c, 10), f = Values(c.kh * c.kw * c.c * c.out, 11);
    const auto bias = Values(c.out, 12);
    for (DataType dt : {DT_FLOAT, DT_BFLOAT16}) {
      for (const bool relu : {false, true}) {
        SCOPED_TRACE(DataTypeString(dt) + " " + format + (relu ? " Relu" : ""));
        auto fused = FusedConv(c, dt, x, f, bias,
                               relu ? std::vector<std::string>{"BiasAdd", "Relu"}
                                    : std::vector<std::string>{"BiasAdd"},
                               &device);
        ASSERT_TRUE(fused.ok()) << fused.status();
        auto y = KernelRunner("Conv2D")
                     .OnDevice(&device)
                     .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
                     .Attr("padding", std::string("SAME"))
                     .Attr("data_format", format)
                     .Input(FromDoubles(dt, xs, x))
                     .Input(FromDoubles(dt, {c.kh, c.kw, c.c, c.out}, f))
                     .RunOne();
        ASSERT_TRUE(y.ok()) << y.status();
        y = KernelRunner("BiasAdd")
                .OnDevice(&device)
                .Attr("data_format", format)
                .Input(*y)
                .Input(FromDoubles(dt, {c.out}, bias))
                .RunOne();
        ASSERT_TRUE(y.ok()) << y.status();
        if (relu) y = KernelRunner("Relu").OnDevice(&device).Input(*y).RunOne();
        ASSERT_TRUE(y.ok()) << y.status();
        ExpectBitIdentical(*fused, *y);
      }
    }
  }
}

TEST(FusedConv2DTest, BadInputsAndAttrs) {
  const ConvCase c = {1, 4, 4, 2, 3, 3, 3, "VALID", false};
  const auto x = Values(32, 1), f = Values(54, 2);
  test::ExpectInvalid(FusedConv(c, DT_FLOAT, x, f, Values(2, 3), {"BiasAdd"}),
                      "must provide as many biases");
  auto bn = FusedConv(c, DT_FLOAT, x, f, Values(3, 3), {"FusedBatchNorm"});
  ASSERT_FALSE(bn.ok());
  EXPECT_EQ(bn.status().code(), absl::StatusCode::kUnimplemented) << bn.status();
  EXPECT_THAT(std::string(bn.status().message()), HasSubstr("fconv"));
  // Conv2D's own validation still applies (a filter deeper than the input).
  const ConvCase deep = {1, 4, 4, 2, 3, 3, 3, "VALID", false};
  auto bad = KernelRunner("_FusedConv2D", "fconv")
                 .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
                 .Attr("padding", std::string("VALID"))
                 .Attr("num_args", int64_t{1})
                 .Attr("fused_ops", std::vector<std::string>{"BiasAdd"})
                 .Input(FromDoubles(DT_FLOAT, {deep.n, deep.h, deep.w, deep.c}, x))
                 .Input(FromDoubles(DT_FLOAT, {3, 3, 3, 3}, Values(81, 2)))
                 .Input(FromDoubles(DT_FLOAT, {3}, Values(3, 3)))
                 .Run();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("fconv"));
}

}  // namespace
}  // namespace tensorflux
