// MaxPool, AvgPool, MaxPoolGrad, AvgPoolGrad, MaxPoolGradGrad (kernels/cpu/pooling_ops.cc) against float64
// reference loops written here: odd sizes, SAME/VALID/EXPLICIT, strides != ksize, windows larger
// than the input (SAME), ties for max pooling, float32 (oneDNN) and float64/half/bfloat16/int
// (direct loops) on one and several threads, empty tensors, big/small values, the shape
// functions and every validation error.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "kernel_test_util.h"
#include "pool_test_util.h"

namespace tensorflux {
namespace {

using test::FromDoubles;
using test::KernelRunner;
using test::ToDoubles;
using pool_test::Cfg;
using pool_test::Ref;
using pool_test::Reference;
using pool_test::WindowAttrs;

std::vector<double> Values(int64_t n, uint32_t seed) {
  std::vector<double> v(n);
  uint32_t s = seed * 2654435761u + 12345;
  for (auto& e : v) {
    s = s * 1664525u + 1013904223u;
    e = static_cast<double>((s >> 8) % 20001) / 1000.0 - 10.0;  // [-10, 10] in steps of 1e-3
  }
  return v;
}

int64_t Product(const std::vector<int64_t>& d) {
  int64_t p = 1;
  for (auto e : d) p *= e;
  return p;
}

double Tolerance(DataType dt) {
  switch (dt) {
    case DT_DOUBLE: return 1e-12;
    case DT_FLOAT: return 1e-5;
    case DT_HALF: return 2e-2;
    default: return 1e-1;  // bfloat16
  }
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, DataType dt,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], Tolerance(dt) * std::max(1.0, std::fabs(want[i])))
        << what << " element " << i;
  }
}

const std::vector<Cfg>& Configs() {
  static const auto* cfgs = new std::vector<Cfg>{
      {{2, 7, 9, 3}, 3, 3, 2, 2, "SAME", {}},
      {{2, 7, 9, 3}, 3, 3, 2, 2, "VALID", {}},
      {{1, 5, 6, 2}, 2, 3, 1, 2, "SAME", {}},     // strides != ksize, overlapping windows
      {{3, 8, 8, 5}, 2, 2, 2, 2, "VALID", {}},
      {{1, 4, 5, 17}, 3, 2, 3, 1, "VALID", {}},   // odd channel count (tails of vector loops)
      {{2, 3, 2, 4}, 5, 4, 1, 1, "SAME", {}},     // window larger than the input
      {{1, 1, 1, 1}, 1, 1, 1, 1, "VALID", {}},
      {{2, 6, 7, 3}, 3, 3, 2, 3, "EXPLICIT", {1, 2, 0, 2}},
  };
  return *cfgs;
}

void CheckConfig(const Cfg& c, DataType dt, DeviceBase* device) {
  const std::string label = "in " + TensorShape(c.in).DebugString() + " k " +
                            std::to_string(c.kr) + "x" + std::to_string(c.kc) + " s " +
                            std::to_string(c.sr) + "x" + std::to_string(c.sc) + " " + c.padding +
                            " " + DataTypeString(dt);
  std::vector<double> x = Values(Product(c.in), 7);
  for (double& v : x) v = test::RoundTo(dt, v);
  const Ref shapes_only = Reference(c, x, {});
  std::vector<double> g = Values(Product(shapes_only.out_shape), 11);
  for (double& v : g) v = test::RoundTo(dt, v);
  const Ref ref = Reference(c, x, g);
  const TensorShape in_shape(c.in), out_shape(ref.out_shape);

  for (const char* op : {"MaxPool", "AvgPool"}) {
    KernelRunner r(op);
    r.OnDevice(device).Input(FromDoubles(dt, in_shape, x));
    if (std::string(op) == "AvgPool" && c.padding == "EXPLICIT") continue;
    auto out = WindowAttrs(r, c).RunOne();
    ASSERT_TRUE(out.ok()) << label << " " << op << ": " << out.status();
    EXPECT_EQ(out->shape(), out_shape) << label;
    ExpectNear(ToDoubles(*out), std::string(op) == "MaxPool" ? ref.max : ref.avg, dt,
               label + " " + op);
  }
  {
    KernelRunner r("MaxPoolGrad");
    r.OnDevice(device)
        .Input(FromDoubles(dt, in_shape, x))
        .Input(FromDoubles(dt, out_shape, ref.max))
        .Input(FromDoubles(dt, out_shape, g));
    auto out = WindowAttrs(r, c).RunOne();
    ASSERT_TRUE(out.ok()) << label << " MaxPoolGrad: " << out.status();
    EXPECT_EQ(out->shape(), in_shape);
    // Several grads may add up at one input: allow the rounding of a few additions.
    ExpectNear(ToDoubles(*out), ref.max_grad, dt, label + " MaxPoolGrad");
  }
  if (c.padding != "EXPLICIT") {
    std::vector<int32_t> dims(c.in.begin(), c.in.end());
    KernelRunner r("AvgPoolGrad");
    r.OnDevice(device)
        .Input(test::AsTensor<int32_t>(dims, TensorShape({4})))
        .Input(FromDoubles(dt, out_shape, g));
    auto out = WindowAttrs(r, c).RunOne();
    ASSERT_TRUE(out.ok()) << label << " AvgPoolGrad: " << out.status();
    EXPECT_EQ(out->shape(), in_shape);
    ExpectNear(ToDoubles(*out), ref.avg_grad, dt, label + " AvgPoolGrad");
  }
  if (c.padding != "EXPLICIT") {  // MaxPoolGradGrad: grad (input-shaped) at each window's max
    std::vector<double> gi = Values(Product(c.in), 13);
    for (double& v : gi) v = test::RoundTo(dt, v);
    std::vector<double> want(ref.max_at.size());
    for (size_t o = 0; o < want.size(); ++o) want[o] = gi[ref.max_at[o]];
    KernelRunner r("MaxPoolGradGrad");
    r.OnDevice(device)
        .Input(FromDoubles(dt, in_shape, x))
        .Input(FromDoubles(dt, out_shape, ref.max))
        .Input(FromDoubles(dt, in_shape, gi));
    auto out = WindowAttrs(r, c).RunOne();
    ASSERT_TRUE(out.ok()) << label << " MaxPoolGradGrad: " << out.status();
    EXPECT_EQ(out->shape(), out_shape);
    EXPECT_EQ(ToDoubles(*out), want) << label << " MaxPoolGradGrad";
  }
}

TEST(PoolingOps, ForwardAndBackwardMatchReference) {
  test::TestCpuDevice one(1), four(4);
  for (const Cfg& c : Configs()) {
    for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
      CheckConfig(c, dt, &one);
      CheckConfig(c, dt, &four);
    }
  }
}

TEST(PoolingOps, MaxPoolIntegers) {
  const Cfg c{{2, 5, 5, 3}, 3, 2, 2, 1, "SAME", {}};
  std::vector<double> x = Values(Product(c.in), 3);
  for (double& v : x) v = std::round(v * 1000);
  const Ref ref = Reference(c, x, {});
  for (DataType dt : {DT_INT32, DT_INT64}) {
    KernelRunner r("MaxPool");
    r.Input(FromDoubles(dt, TensorShape(c.in), x));
    auto out = WindowAttrs(r, c).RunOne();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(ToDoubles(*out), ref.max);
  }
  // int64 values beyond float's 24-bit mantissa survive exactly.
  KernelRunner r("MaxPool");
  r.Input(test::AsTensor<int64_t>({(int64_t{1} << 40) + 1, int64_t{1} << 40}, TensorShape({1, 1, 2, 1})));
  auto out = WindowAttrs(r, Cfg{{1, 1, 2, 1}, 1, 2, 1, 1, "VALID", {}}).RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->data<int64_t>()[0], (int64_t{1} << 40) + 1);
}

// Ties: every window's maximum appears several times; the gradient goes to the first occurrence
// in row-major window order (TF's rule), in both the oneDNN and the loop paths.
TEST(PoolingOps, MaxPoolGradTiesGoToFirstMaximum) {
  const Cfg c{{1, 4, 6, 2}, 2, 3, 2, 3, "VALID", {}};
  std::vector<double> x(Product(c.in), 5.0);  // all equal: the first position of each window wins
  x[((0 * 4 + 1) * 6 + 2) * 2 + 1] = 7.0;     // channel 1 of window (0,0): a unique max...
  x[((0 * 4 + 1) * 6 + 1) * 2 + 1] = 7.0;     // ...tied with an earlier position (row 1, col 1)
  std::vector<double> g = {1, 2, 3, 4, 5, 6, 7, 8};
  const Ref ref = Reference(c, x, g);
  for (DataType dt : {DT_FLOAT, DT_DOUBLE}) {
    KernelRunner r("MaxPoolGrad");
    r.Input(FromDoubles(dt, TensorShape(c.in), x))
        .Input(FromDoubles(dt, TensorShape(ref.out_shape), ref.max))
        .Input(FromDoubles(dt, TensorShape(ref.out_shape), g));
    auto out = WindowAttrs(r, c).RunOne();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(ToDoubles(*out), ref.max_grad) << DataTypeString(dt);
    EXPECT_EQ(ToDoubles(*out)[((0 * 4 + 1) * 6 + 1) * 2 + 1], 2.0);  // hand-worked: g[1]
    EXPECT_EQ(ToDoubles(*out)[0], 1.0);                              // window (0,0) channel 0
  }
}

TEST(PoolingOps, BigAndSmallValues) {
  const Cfg c{{1, 3, 3, 2}, 2, 2, 1, 1, "SAME", {}};
  std::vector<double> x = {1e30, -1e30, -3e38, 3e38, 1e-30, -1e-30, 2e-38, 0,  -0.5,
                           7,    1e-38,  -1e38, 5,     6,    -7,    8,     1e37, -1e37};
  const Ref ref = Reference(c, x, {});
  for (DataType dt : {DT_FLOAT, DT_DOUBLE}) {
    for (const char* op : {"MaxPool", "AvgPool"}) {
      KernelRunner r(op);
      r.Input(FromDoubles(dt, TensorShape(c.in), x));
      auto out = WindowAttrs(r, c).RunOne();
      ASSERT_TRUE(out.ok()) << out.status();
      const auto& want = std::string(op) == "MaxPool" ? ref.max : ref.avg;
      std::vector<double> got = ToDoubles(*out);
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_NEAR(got[i], want[i], 1e-6 * std::fabs(want[i])) << op << " " << i;
      }
    }
  }
}

TEST(PoolingOps, EmptyTensors) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE}) {
    for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{
             {0, 4, 4, 3}, {2, 4, 4, 0}, {2, 0, 4, 3}}) {
      const Cfg c{dims, 2, 2, 2, 2, "SAME", {}};
      KernelRunner r("MaxPool");
      r.Input(FromDoubles(dt, TensorShape(dims), {}));
      auto out = WindowAttrs(r, c).RunOne();
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->shape(), TensorShape({dims[0], (dims[1] + 1) / 2, 2, dims[3]}));
      KernelRunner a("AvgPoolGrad");
      std::vector<int32_t> d32(dims.begin(), dims.end());
      a.Input(test::AsTensor<int32_t>(d32, TensorShape({4})))
          .Input(FromDoubles(dt, out->shape(), {}));
      auto g = WindowAttrs(a, c).RunOne();
      ASSERT_TRUE(g.ok()) << g.status();
      EXPECT_EQ(g->shape(), TensorShape(dims));
    }
  }
}

StatusOr<Tensor> RunMaxPool(const std::vector<int64_t>& in, std::vector<int64_t> ksize,
                            std::vector<int64_t> strides, const std::string& padding,
                            const std::string& format = "NHWC",
                            std::vector<int64_t> explicit_pads = {}) {
  KernelRunner r("MaxPool");
  r.Input(Tensor(DT_FLOAT, TensorShape(in)))
      .Attr("ksize", ksize)
      .Attr("strides", strides)
      .Attr("padding", padding)
      .Attr("data_format", format);
  if (!explicit_pads.empty()) r.Attr("explicit_paddings", explicit_pads);
  return r.RunOne();
}

using test::ExpectInvalid;

TEST(PoolingOps, InvalidAttrsAndShapes) {
  const std::vector<int64_t> in = {1, 4, 4, 2};
  ExpectInvalid(RunMaxPool(in, {1, 2, 2}, {1, 1, 1, 1}, "VALID"), "ksize");
  ExpectInvalid(RunMaxPool(in, {1, 2, 2, 1}, {1, 1, 1}, "VALID"), "strides");
  // Pooling across the batch or depth dims: UNIMPLEMENTED, as in TF.
  for (const auto& [ksize, strides, what] :
       {std::tuple{std::vector<int64_t>{2, 2, 2, 1}, std::vector<int64_t>{1, 1, 1, 1}, "batch"},
        std::tuple{std::vector<int64_t>{1, 2, 2, 1}, std::vector<int64_t>{1, 1, 1, 2}, "depth"}}) {
    auto s = RunMaxPool(in, ksize, strides, "VALID").status();
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
    EXPECT_NE(std::string(s.message()).find(what), std::string::npos) << s;
  }
  ExpectInvalid(RunMaxPool(in, {1, 0, 2, 1}, {1, 1, 1, 1}, "VALID"), "positive");
  ExpectInvalid(RunMaxPool(in, {1, 2, 2, 1}, {1, -1, 1, 1}, "VALID"), "positive");
  ExpectInvalid(RunMaxPool(in, {1, 5, 2, 1}, {1, 1, 1, 1}, "VALID"), "larger than");
  ExpectInvalid(RunMaxPool({4, 4, 2}, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID"), "4-dimensional");
  ExpectInvalid(RunMaxPool(in, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID", "NCHW"), "NHWC");
  ExpectInvalid(RunMaxPool(in, {1, 2, 2, 1}, {1, 1, 1, 1}, "EXPLICIT", "NHWC", {0, 0, 1, 1}),
                "8 values");
  ExpectInvalid(RunMaxPool(in, {1, 2, 2, 1}, {1, 1, 1, 1}, "EXPLICIT", "NHWC",
                           {0, 0, 2, 0, 0, 0, 0, 0}),
                "window size");
  ExpectInvalid(RunMaxPool(in, {1, 2, 2, 1}, {1, 1, 1, 1}, "EXPLICIT", "NHWC",
                           {1, 0, 0, 0, 0, 0, 0, 0}),
                "batch and depth");
  ExpectInvalid(RunMaxPool(in, {1, 2, 2, 1}, {1, 1, 1, 1}, "EXPLICIT", "NHWC",
                           {0, 0, -1, 0, 0, 0, 0, 0}),
                "window size");

  const Cfg c{{1, 4, 4, 2}, 2, 2, 2, 2, "VALID", {}};
  {  // MaxPoolGrad: grad of the wrong shape
    KernelRunner r("MaxPoolGrad");
    r.Input(Tensor(DT_FLOAT, TensorShape({1, 4, 4, 2})))
        .Input(Tensor(DT_FLOAT, TensorShape({1, 2, 2, 2})))
        .Input(Tensor(DT_FLOAT, TensorShape({1, 2, 3, 2})));
    ExpectInvalid(WindowAttrs(r, c).RunOne(), "grad has shape");
  }
  {  // MaxPoolGradGrad: grad must have orig_input's shape
    KernelRunner r("MaxPoolGradGrad");
    r.Input(Tensor(DT_FLOAT, TensorShape({1, 4, 4, 2})))
        .Input(Tensor(DT_FLOAT, TensorShape({1, 2, 2, 2})))
        .Input(Tensor(DT_FLOAT, TensorShape({1, 2, 2, 2})));
    ExpectInvalid(WindowAttrs(r, c).RunOne(), "grad has shape");
  }
  {  // MaxPoolGrad: orig_output of the wrong shape
    KernelRunner r("MaxPoolGrad");
    r.Input(Tensor(DT_DOUBLE, TensorShape({1, 4, 4, 2})))
        .Input(Tensor(DT_DOUBLE, TensorShape({1, 2, 2})))
        .Input(Tensor(DT_DOUBLE, TensorShape({1, 2, 2, 2})));
    ExpectInvalid(WindowAttrs(r, c).RunOne(), "orig_output");
  }
  for (const std::vector<int32_t>& shape :
       std::vector<std::vector<int32_t>>{{1, 4, 4}, {1, -4, 4, 2}, {1, 4, 4, 2, 1}}) {
    KernelRunner r("AvgPoolGrad");
    r.Input(test::AsTensor<int32_t>(shape, TensorShape({static_cast<int64_t>(shape.size())})))
        .Input(Tensor(DT_FLOAT, TensorShape({1, 2, 2, 2})));
    auto s = WindowAttrs(r, c).RunOne();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  }
  {  // AvgPoolGrad: grad does not match the pooled shape
    KernelRunner r("AvgPoolGrad");
    r.Input(test::AsTensor<int32_t>({1, 4, 4, 2}, TensorShape({4})))
        .Input(Tensor(DT_FLOAT, TensorShape({1, 3, 2, 2})));
    ExpectInvalid(WindowAttrs(r, c).RunOne(), "grad has shape");
  }
}

TEST(PoolingOps, ShapeFunctions) {
  const Cfg c{{2, 7, 9, 3}, 3, 3, 2, 2, "SAME", {}};
  KernelRunner r("MaxPool");
  r.Input(Tensor(DT_FLOAT, TensorShape({1, 1, 1, 1})));
  WindowAttrs(r, c);
  auto s = r.InferShapes({PartialTensorShape({2, 7, 9, 3})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 4, 5, 3}));
  s = r.InferShapes({PartialTensorShape({-1, 7, -1, 3})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, 4, -1, 3}));
  s = r.InferShapes({PartialTensorShape()});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, -1, -1, -1}));
  s = r.InferShapes({PartialTensorShape({7, 9, 3})});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.status().message()).find("test_node"), std::string::npos);

  KernelRunner a("AvgPoolGrad");
  a.Input(test::AsTensor<int32_t>({2, 7, 9, 3}, TensorShape({4})))
      .Input(Tensor(DT_FLOAT, TensorShape({2, 4, 5, 3})));
  WindowAttrs(a, c);
  Tensor shape = test::AsTensor<int32_t>({2, 7, 9, 3}, TensorShape({4}));
  auto sa = a.InferShapes({PartialTensorShape({4}), PartialTensorShape({2, 4, 5, 3})},
                          {&shape, nullptr});
  ASSERT_TRUE(sa.ok()) << sa.status();
  EXPECT_EQ((*sa)[0], PartialTensorShape({2, 7, 9, 3}));
  sa = a.InferShapes({PartialTensorShape({4}), PartialTensorShape({2, 3, 5, 3})},
                     {&shape, nullptr});
  EXPECT_FALSE(sa.ok());
}

}  // namespace
}  // namespace tensorflux
