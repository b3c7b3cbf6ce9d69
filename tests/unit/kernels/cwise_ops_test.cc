// Elementwise ops (kernels/cpu/cwise_ops_*.cc): every op x every dtype its OpDef allows against
// a float64 reference computed here, NumPy broadcasting against a naive index-mapping reference,
// errors, string Add, wraparound, NaN handling, buffer forwarding and shape functions.

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "cwise_test_util.h"
#include "kernel_test_util.h"

namespace tensorflux {
namespace {

using test::AsTensor;
using test::FromDoubles;
using test::KernelRunner;
using test::ToDoubles;
using test::cwise::AllowedTypes;
using test::cwise::BroadcastRef;
using test::cwise::ExpectNear;
using test::cwise::IsUnsigned;
using test::cwise::RelTol;
using test::cwise::Values;

// ---------------------------------------------------------------- binary ops, every dtype

struct BinaryCase {
  std::string op;
  std::function<double(double, double)> ref;  // on values exactly as stored in the dtype
};

std::vector<BinaryCase> BinaryCases() {
  return {
      {"Add", [](double a, double b) { return a + b; }},
      {"AddV2", [](double a, double b) { return a + b; }},
      {"Sub", [](double a, double b) { return a - b; }},
      {"Mul", [](double a, double b) { return a * b; }},
      {"RealDiv", [](double a, double b) { return a / b; }},  // integers: truncated below
      {"Maximum", [](double a, double b) { return std::max(a, b); }},
      {"Minimum", [](double a, double b) { return std::min(a, b); }},
  };
}

void CheckBinary(const BinaryCase& c, DataType dt, const TensorShape& xs, const TensorShape& ys,
                 DeviceBase* device = nullptr) {
  const bool is_int = DataTypeIsInteger(dt);
  std::vector<double> xv, yv;
  if (!is_int) {
    xv = Values(dt, xs.num_elements(), -5, 5, 1);
    yv = Values(dt, ys.num_elements(), 0.5, 3, 2);
    for (size_t i = 0; i < yv.size(); i += 2) yv[i] = -yv[i];
  } else if (IsUnsigned(dt)) {  // x >= y keeps Sub in range; 25 * 9 fits uint8
    xv = Values(dt, xs.num_elements(), 10, 25, 1);
    yv = Values(dt, ys.num_elements(), 1, 9, 2);
  } else {  // 12 * 9 fits int8
    xv = Values(dt, xs.num_elements(), -12, 12, 1);
    yv = Values(dt, ys.num_elements(), 1, 9, 2);
    for (size_t i = 0; i < yv.size(); i += 2) yv[i] = -yv[i];
  }
  Tensor x = FromDoubles(dt, xs, xv), y = FromDoubles(dt, ys, yv);
  xv = ToDoubles(x);  // the values as stored (half/bfloat16 round)
  yv = ToDoubles(y);
  auto ref = c.ref;
  if (is_int && c.op == "RealDiv") ref = [](double a, double b) { return std::trunc(a / b); };
  TensorShape want_shape;
  const std::vector<double> want = BroadcastRef(xs, xv, ys, yv, ref, &want_shape);

  KernelRunner r(c.op);
  r.Input(x).Input(y);
  if (device) r.OnDevice(device);
  auto z = r.RunOne();
  const std::string what =
      c.op + " " + DataTypeString(dt) + " " + xs.DebugString() + " vs " + ys.DebugString();
  ASSERT_TRUE(z.ok()) << what << ": " << z.status();
  EXPECT_EQ(z->dtype(), dt) << what;
  EXPECT_EQ(z->shape(), want_shape) << what;
  ExpectNear(dt, ToDoubles(*z), want, what);
}

TEST(CwiseBinaryTest, EveryOpEveryDtypeMatchesFloat64Reference) {
  const std::vector<std::pair<TensorShape, TensorShape>> shapes = {
      {TensorShape({4, 5}), TensorShape({4, 5})},  // same shape
      {TensorShape({2, 3}), TensorShape({3})},     // row vector
      {TensorShape({}), TensorShape({2, 3})},      // scalar on the left
      {TensorShape({2, 3}), TensorShape({})},      // scalar on the right
      {TensorShape({2, 1}), TensorShape({1, 3})},  // outer product
  };
  int checked = 0;
  for (const BinaryCase& c : BinaryCases()) {
    const std::vector<DataType> types = AllowedTypes(c.op);
    EXPECT_GE(types.size(), 9u) << c.op;
    for (DataType dt : types) {
      for (const auto& [xs, ys] : shapes) {
        CheckBinary(c, dt, xs, ys);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 300);
}

TEST(CwiseBinaryTest, LongVectorsUseTheVectorizedPathsCorrectly) {
  // Lengths around SIMD widths and the half/bfloat16 conversion block (512).
  for (int64_t n : {1, 7, 16, 17, 33, 511, 512, 513, 1500}) {
    for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT32, DT_UINT8}) {
      for (const BinaryCase& c : BinaryCases()) {
        CheckBinary(c, dt, TensorShape({n}), TensorShape({n}));
        CheckBinary(c, dt, TensorShape({n}), TensorShape({}));
        CheckBinary(c, dt, TensorShape({}), TensorShape({n}));
      }
    }
  }
}

// ---------------------------------------------------------------- broadcasting

TEST(CwiseBroadcastTest, ShapesAgainstNaiveReference) {
  const std::vector<std::pair<TensorShape, TensorShape>> cases = {
      {TensorShape({2, 3}), TensorShape({3})},
      {TensorShape({3}), TensorShape({2, 3})},
      {TensorShape({2, 1}), TensorShape({1, 3})},
      {TensorShape({1, 3}), TensorShape({2, 1})},
      {TensorShape({1}), TensorShape({})},
      {TensorShape({1, 1}), TensorShape({1})},
      {TensorShape({4, 1, 5}), TensorShape({3, 1})},
      {TensorShape({2, 1, 3, 1, 4}), TensorShape({1, 5, 3, 2, 1})},  // rank 5, 4 broadcast dims
      {TensorShape({2, 5, 3, 2, 4}), TensorShape({5, 1, 1, 4})},
      {TensorShape({8, 1, 5, 6}), TensorShape({5, 6})},
      {TensorShape({1, 1, 1, 7}), TensorShape({6, 1, 1, 1})},
      {TensorShape({3, 1, 1, 2, 1, 1, 2}), TensorShape({2, 2, 1, 2, 1, 2})},  // rank 7
  };
  const BinaryCase sub{"Sub", [](double a, double b) { return a - b; }};
  for (const auto& [xs, ys] : cases) {
    CheckBinary(sub, DT_FLOAT, xs, ys);
    CheckBinary(sub, DT_HALF, xs, ys);
    CheckBinary(sub, DT_INT64, xs, ys);
  }
}

TEST(CwiseBroadcastTest, ZeroSizeDims) {
  struct Case {
    TensorShape x, y, out;
  };
  const std::vector<Case> cases = {
      {TensorShape({0, 3}), TensorShape({3}), TensorShape({0, 3})},
      {TensorShape({0}), TensorShape({}), TensorShape({0})},
      {TensorShape({2, 0}), TensorShape({1, 1}), TensorShape({2, 0})},
      {TensorShape({1, 0}), TensorShape({4, 1}), TensorShape({4, 0})},
      {TensorShape({0, 1}), TensorShape({1, 5}), TensorShape({0, 5})},
  };
  for (const Case& c : cases) {
    for (const char* op : {"AddV2", "Mul", "RealDiv"}) {
      auto z = KernelRunner(op)
                   .Input(Tensor(DT_FLOAT, c.x))
                   .Input(FromDoubles(DT_FLOAT, c.y, std::vector<double>(c.y.num_elements(), 0)))
                   .RunOne();
      ASSERT_TRUE(z.ok()) << op << " " << z.status();
      EXPECT_EQ(z->shape(), c.out) << op;
      EXPECT_EQ(z->NumElements(), 0);
    }
  }
  // Integer division by a zero that no output element uses: nothing to compute, no error.
  auto z = KernelRunner("RealDiv")
               .Input(Tensor(DT_INT32, TensorShape({0, 2})))
               .Input(AsTensor<int32_t>({0, 0}, TensorShape({2})))
               .RunOne();
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->shape(), TensorShape({0, 2}));
}

TEST(CwiseBroadcastTest, LargeTensorsOnAThreadPool) {
  test::TestCpuDevice device(4);
  const BinaryCase sub{"Sub", [](double a, double b) { return a - b; }};
  const BinaryCase maximum{"Maximum", [](double a, double b) { return std::max(a, b); }};
  CheckBinary(sub, DT_FLOAT, TensorShape({300, 1, 200}), TensorShape({1, 50, 200}), &device);
  CheckBinary(sub, DT_FLOAT, TensorShape({1000, 1000}), TensorShape({1000, 1000}), &device);
  CheckBinary(maximum, DT_HALF, TensorShape({250, 401}), TensorShape({401}), &device);
  CheckBinary(sub, DT_INT32, TensorShape({7, 1, 333, 1}), TensorShape({1, 99, 1, 5}), &device);
  // Unary ops shard too.
  Tensor x = FromDoubles(DT_FLOAT, TensorShape({1 << 20}), Values(DT_FLOAT, 1 << 20, -3, 3, 5));
  auto y = KernelRunner("Exp").OnDevice(&device).Input(x).RunOne();
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<double> want = ToDoubles(x);
  for (double& v : want) v = std::exp(v);
  ExpectNear(DT_FLOAT, ToDoubles(*y), want, "Exp threaded");
}

TEST(CwiseBroadcastTest, IncompatibleShapesError) {
  auto z = KernelRunner("Add")
               .Input(Tensor(DT_FLOAT, TensorShape({2, 3})))
               .Input(Tensor(DT_FLOAT, TensorShape({4})))
               .RunOne();
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(z.status().message(), "Incompatible shapes: [2,3] vs. [4]");

  z = KernelRunner("Maximum")
          .Input(Tensor(DT_INT32, TensorShape({5, 2, 1})))
          .Input(Tensor(DT_INT32, TensorShape({3, 1})))
          .RunOne();
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.status().message(), "Incompatible shapes: [5,2,1] vs. [3,1]");

  z = KernelRunner("Mul")
          .Input(Tensor(DT_FLOAT, TensorShape({0})))
          .Input(Tensor(DT_FLOAT, TensorShape({2})))
          .RunOne();
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.status().message(), "Incompatible shapes: [0] vs. [2]");
}

TEST(CwiseBroadcastTest, ShapeFunction) {
  KernelRunner r("AddV2");
  r.Attr("T", DT_FLOAT);
  auto s = r.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({3})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 3}));
  s = r.InferShapes({PartialTensorShape({-1, 1}), PartialTensorShape({1, 4})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, 4}));
  s = r.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({4})});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("Incompatible shapes: [2,3] vs. [4]"), std::string::npos)
      << s.status();

  KernelRunner u("Exp");
  u.Attr("T", DT_HALF);
  s = u.InferShapes({PartialTensorShape({-1, 7})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, 7}));
}

// ---------------------------------------------------------------- special values and types

TEST(CwiseBinaryTest, IntegerRealDivByZeroIsAnError) {
  for (DataType dt : {DT_INT8, DT_INT32, DT_INT64, DT_UINT8, DT_UINT64}) {
    auto z = KernelRunner("RealDiv")
                 .Input(FromDoubles(dt, TensorShape({3}), {4, 5, 6}))
                 .Input(FromDoubles(dt, TensorShape({3}), {2, 0, 3}))
                 .RunOne();
    ASSERT_FALSE(z.ok()) << DataTypeString(dt);
    EXPECT_EQ(z.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(z.status().message(), "Integer division by zero");
  }
  // MIN / -1 wraps instead of trapping; truncation toward zero.
  auto z =
      KernelRunner("RealDiv")
          .Input(AsTensor<int32_t>({std::numeric_limits<int32_t>::min(), -7, 7}, TensorShape({3})))
          .Input(AsTensor<int32_t>({-1}, TensorShape({})))
          .RunOne();
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->flat<int32_t>()[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(z->flat<int32_t>()[1], 7);
  z = KernelRunner("RealDiv")
          .Input(AsTensor<int32_t>({-7, 7}, TensorShape({2})))
          .Input(AsTensor<int32_t>({2}, TensorShape({})))
          .RunOne();
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->flat<int32_t>()[0], -3);
  EXPECT_EQ(z->flat<int32_t>()[1], 3);
}

TEST(CwiseBinaryTest, FloatDivisionByZeroFollowsIeee) {
  auto z = KernelRunner("RealDiv")
               .Input(AsTensor<float>({1, -1, 0}, TensorShape({3})))
               .Input(AsTensor<float>({0}, TensorShape({})))
               .RunOne();
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->flat<float>()[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(z->flat<float>()[1], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(z->flat<float>()[2]));
}

TEST(CwiseBinaryTest, MaximumAndMinimumPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* op : {"Maximum", "Minimum"}) {
    for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
      // Long enough to go through SIMD packets and the scalar tail.
      std::vector<double> xv(37, 1.0), yv(37, 2.0);
      xv[3] = nan;
      yv[20] = nan;
      yv[36] = nan;
      auto z = KernelRunner(op)
                   .Input(FromDoubles(dt, TensorShape({37}), xv))
                   .Input(FromDoubles(dt, TensorShape({37}), yv))
                   .RunOne();
      ASSERT_TRUE(z.ok()) << z.status();
      const std::vector<double> got = ToDoubles(*z);
      for (int i = 0; i < 37; ++i) {
        if (i == 3 || i == 20 || i == 36) {
          EXPECT_TRUE(std::isnan(got[i])) << op << " " << DataTypeString(dt) << " " << i;
        } else {
          EXPECT_EQ(got[i], std::string(op) == "Maximum" ? 2.0 : 1.0);
        }
      }
    }
  }
}

TEST(CwiseBinaryTest, IntegerArithmeticWrapsAround) {
  const int32_t mx = std::numeric_limits<int32_t>::max(), mn = std::numeric_limits<int32_t>::min();
  auto z = KernelRunner("AddV2")
               .Input(AsTensor<int32_t>({mx, mn, 5}, TensorShape({3})))
               .Input(AsTensor<int32_t>({1, -1, -7}, TensorShape({3})))
               .RunOne();
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->flat<int32_t>()[0], mn);
  EXPECT_EQ(z->flat<int32_t>()[1], mx);
  EXPECT_EQ(z->flat<int32_t>()[2], -2);
  auto u = KernelRunner("Sub")
               .Input(AsTensor<uint8_t>({0, 200}, TensorShape({2})))
               .Input(AsTensor<uint8_t>({1, 100}, TensorShape({2})))
               .RunOne();
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->flat<uint8_t>()[0], 255);
  EXPECT_EQ(u->flat<uint8_t>()[1], 100);
  auto m = KernelRunner("Mul")
               .Input(AsTensor<int8_t>({100, -128}, TensorShape({2})))
               .Input(AsTensor<int8_t>({3, -1}, TensorShape({2})))
               .RunOne();
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->flat<int8_t>()[0], static_cast<int8_t>(44));  // 300 mod 256
  EXPECT_EQ(m->flat<int8_t>()[1], -128);
  // 16-bit products that overflow int after promotion still wrap (no UB: UBSan run).
  auto m16 = KernelRunner("Mul")
                 .Input(AsTensor<uint16_t>({65535, 300}, TensorShape({2})))
                 .Input(AsTensor<uint16_t>({65535}, TensorShape({})))
                 .RunOne();
  ASSERT_TRUE(m16.ok());
  EXPECT_EQ(m16->flat<uint16_t>()[0], 1);  // (2^16 - 1)^2 mod 2^16
  EXPECT_EQ(m16->flat<uint16_t>()[1], static_cast<uint16_t>(300u * 65535u));
  auto s16 = KernelRunner("Square")
                 .Input(AsTensor<int16_t>({-32768, 32767, 200}, TensorShape({3})))
                 .RunOne();
  ASSERT_TRUE(s16.ok());
  EXPECT_EQ(s16->flat<int16_t>()[0], 0);
  EXPECT_EQ(s16->flat<int16_t>()[1], 1);
  EXPECT_EQ(s16->flat<int16_t>()[2], static_cast<int16_t>(40000));
  auto n = KernelRunner("Neg").Input(AsTensor<int32_t>({mn, 3}, TensorShape({2}))).RunOne();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->flat<int32_t>()[0], mn);
  EXPECT_EQ(n->flat<int32_t>()[1], -3);
}

TEST(CwiseBinaryTest, AddConcatenatesStrings) {
  auto z = KernelRunner("Add")
               .Input(AsTensor<std::string>({"a", "bb"}, TensorShape({2, 1})))
               .Input(AsTensor<std::string>({"x", "", "zz"}, TensorShape({1, 3})))
               .RunOne();
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->shape(), TensorShape({2, 3}));
  const std::vector<std::string> want = {"ax", "a", "azz", "bbx", "bb", "bbzz"};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(z->flat<std::string>()[i], want[i]);

  auto s = KernelRunner("Add")
               .Input(AsTensor<std::string>({"hello, "}, TensorShape({})))
               .Input(AsTensor<std::string>({"world", "you"}, TensorShape({2})))
               .RunOne();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->flat<std::string>()[0], "hello, world");
  EXPECT_EQ(s->flat<std::string>()[1], "hello, you");

  // AddV2 has no string kernel: its OpDef does not allow string.
  auto v2 = KernelRunner("AddV2")
                .Input(AsTensor<std::string>({"a"}, TensorShape({})))
                .Input(AsTensor<std::string>({"b"}, TensorShape({})))
                .RunOne();
  EXPECT_FALSE(v2.ok());
}

// ---------------------------------------------------------------- unary ops, every dtype

struct UnaryCase {
  std::string op;
  double lo, hi;  // input range for floating types
  std::function<double(double)> ref;
};

TEST(CwiseUnaryTest, EveryOpEveryDtypeMatchesFloat64Reference) {
  const std::vector<UnaryCase> cases = {
      {"Neg", -5, 5, [](double v) { return -v; }},
      {"Square", -5, 5, [](double v) { return v * v; }},
      {"Sqrt", 0, 10, [](double v) { return std::sqrt(v); }},
      {"Exp", -4, 4, [](double v) { return std::exp(v); }},
      {"Log", 0.01, 10, [](double v) { return std::log(v); }},
  };
  int checked = 0;
  for (const UnaryCase& c : cases) {
    const std::vector<DataType> types = AllowedTypes(c.op);
    EXPECT_GE(types.size(), 4u);
    for (DataType dt : types) {
      for (int64_t n : {1, 6, 17, 600}) {
        std::vector<double> xv;
        if (IsUnsigned(dt)) {
          xv = Values(dt, n, 0, 15, 3);
        } else if (DataTypeIsInteger(dt)) {
          xv = Values(dt, n, -11, 11, 3);
        } else {
          xv = Values(dt, n, c.lo, c.hi, 3);
        }
        Tensor x = FromDoubles(dt, TensorShape({n}), xv);
        xv = ToDoubles(x);
        std::vector<double> want;
        for (double v : xv) want.push_back(c.ref(v));
        auto y = KernelRunner(c.op).Input(x).RunOne();
        const std::string what = c.op + " " + DataTypeString(dt) + " n=" + std::to_string(n);
        ASSERT_TRUE(y.ok()) << what << ": " << y.status();
        EXPECT_EQ(y->dtype(), dt);
        EXPECT_EQ(y->shape(), x.shape());
        ExpectNear(dt, ToDoubles(*y), want, what);
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 4 * (8 + 12 + 4 + 4 + 4));
}

TEST(CwiseUnaryTest, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  auto y =
      KernelRunner("Log").Input(AsTensor<float>({0, -1, 1, INFINITY}, TensorShape({4}))).RunOne();
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y->flat<float>()[0], -inf);
  EXPECT_TRUE(std::isnan(y->flat<float>()[1]));
  EXPECT_EQ(y->flat<float>()[2], 0.f);
  EXPECT_EQ(y->flat<float>()[3], inf);
  y = KernelRunner("Sqrt").Input(AsTensor<double>({-4, 0, 16}, TensorShape({3}))).RunOne();
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(std::isnan(y->flat<double>()[0]));
  EXPECT_EQ(y->flat<double>()[1], 0);
  EXPECT_EQ(y->flat<double>()[2], 4);
  y = KernelRunner("Exp").Input(AsTensor<float>({-INFINITY, 0, 100}, TensorShape({3}))).RunOne();
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y->flat<float>()[0], 0.f);
  EXPECT_EQ(y->flat<float>()[1], 1.f);
  EXPECT_EQ(y->flat<float>()[2], inf);
  // Half overflows to inf like TF (computed in float, rounded once).
  y = KernelRunner("Square").Input(FromDoubles(DT_HALF, TensorShape({1}), {300})).RunOne();
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(ToDoubles(*y)[0], inf);
}

TEST(CwiseUnaryTest, DtypeNotAllowedByOpDefIsRejected) {
  auto y = KernelRunner("Neg").Input(AsTensor<uint8_t>({1}, TensorShape({1}))).RunOne();
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument) << y.status();
  y = KernelRunner("Exp").Input(AsTensor<int32_t>({1}, TensorShape({1}))).RunOne();
  ASSERT_FALSE(y.ok());
}

// ---------------------------------------------------------------- forwarding, scheduling

TEST(CwiseForwardingTest, ExclusiveInputBufferIsReused) {
  Tensor x = FromDoubles(DT_FLOAT, TensorShape({4, 5}), Values(DT_FLOAT, 20, -1, 1, 1));
  const void* x_buf = x.raw_data();
  const std::vector<double> xv = ToDoubles(x);
  KernelRunner r("AddV2");
  r.Input(std::move(x)).Input(AsTensor<float>({1, 2, 3, 4, 5}, TensorShape({5})));
  auto z = r.RunOne();
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->raw_data(), x_buf);
  for (int i = 0; i < 20; ++i) EXPECT_FLOAT_EQ(z->flat<float>()[i], xv[i] + (i % 5 + 1));

  // The second input is forwarded when the first is broadcast.
  Tensor y = FromDoubles(DT_FLOAT, TensorShape({4, 5}), Values(DT_FLOAT, 20, -1, 1, 2));
  const void* y_buf = y.raw_data();
  z = KernelRunner("Sub")
          .Input(AsTensor<float>({1, 2, 3, 4, 5}, TensorShape({5})))
          .Input(std::move(y))
          .RunOne();
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->raw_data(), y_buf);

  // Unary, half (block conversion in place).
  Tensor h = FromDoubles(DT_HALF, TensorShape({1000}), Values(DT_HALF, 1000, -2, 2, 3));
  const void* h_buf = h.raw_data();
  const std::vector<double> hv = ToDoubles(h);
  z = KernelRunner("Neg").Input(std::move(h)).RunOne();
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->raw_data(), h_buf);
  const std::vector<double> zv = ToDoubles(*z);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(zv[i], -hv[i]);
}

TEST(CwiseForwardingTest, SharedInputBufferIsNotOverwritten) {
  Tensor x = AsTensor<float>({1, 2, 3}, TensorShape({3}));
  auto z = KernelRunner("Mul").Input(x).Input(AsTensor<float>({2}, TensorShape({}))).RunOne();
  ASSERT_TRUE(z.ok());
  EXPECT_NE(z->raw_data(), x.raw_data());
  EXPECT_EQ(x.flat<float>()[1], 2.f);
  EXPECT_EQ(z->flat<float>()[1], 4.f);
  // Same tensor as both inputs: neither is exclusive.
  z = KernelRunner("Mul").Input(x).Input(x).RunOne();
  ASSERT_TRUE(z.ok());
  EXPECT_NE(z->raw_data(), x.raw_data());
  EXPECT_EQ(z->flat<float>()[2], 9.f);
  // A broadcast input smaller than the output is never forwarded.
  Tensor small = AsTensor<float>({1, 2}, TensorShape({2, 1}));
  const void* small_buf = small.raw_data();
  z = KernelRunner("AddV2")
          .Input(std::move(small))
          .Input(AsTensor<float>({10, 20}, TensorShape({1, 2})))
          .RunOne();
  ASSERT_TRUE(z.ok());
  EXPECT_NE(z->raw_data(), small_buf);
  EXPECT_EQ(z->flat<float>()[3], 22.f);
}

TEST(CwiseKernelTest, KernelsAreCheapForTheExecutor) {
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum"}) {
    KernelRunner r(op);
    r.Input(AsTensor<float>({1}, TensorShape({}))).Input(AsTensor<float>({2}, TensorShape({})));
    ASSERT_TRUE(r.Run().ok()) << op;
    EXPECT_FALSE(r.kernel()->IsExpensive()) << op;
  }
  for (const char* op : {"Neg", "Square", "Sqrt", "Exp", "Log"}) {
    KernelRunner r(op);
    r.Input(AsTensor<double>({1}, TensorShape({})));
    ASSERT_TRUE(r.Run().ok()) << op;
    EXPECT_FALSE(r.kernel()->IsExpensive()) << op;
  }
}

}  // namespace
}  // namespace tensorflux
