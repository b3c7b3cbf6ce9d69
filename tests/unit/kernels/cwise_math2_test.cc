// Elementwise ops added with the second half of the family: FloorDiv, FloorMod, Pow,
// SquaredDifference, comparisons (bool output), logical ops, and the unary Abs, Sign,
// Reciprocal, Rsqrt, Log1p, Tanh, Sigmoid, Erf. Every op x every dtype its OpDef allows against
// float64 references computed here (NumPy broadcasting via a naive index map), plus the integer
// error cases (division by zero, negative powers), wraparound, NaN and extreme values.

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
using test::cwise::BoolTensor;
using test::cwise::BroadcastRef;
using test::cwise::ExpectNear;
using test::cwise::IsUnsigned;
using test::cwise::Values;

const std::vector<std::pair<TensorShape, TensorShape>>& BinaryShapes() {
  static const auto* shapes = new std::vector<std::pair<TensorShape, TensorShape>>{
      {TensorShape({4, 5}), TensorShape({4, 5})},     // same shape
      {TensorShape({2, 3}), TensorShape({3})},        // row vector
      {TensorShape({}), TensorShape({2, 3})},         // scalar on the left
      {TensorShape({2, 3}), TensorShape({})},         // scalar on the right
      {TensorShape({2, 1}), TensorShape({1, 3})},     // outer product
      {TensorShape({}), TensorShape({})},             // rank 0
      {TensorShape({0, 3}), TensorShape({3})},        // empty
      {TensorShape({3, 1, 4}), TensorShape({2, 1})},  // rank 3, both broadcast
  };
  return *shapes;
}

struct BinaryCase {
  std::string op;
  // Input ranges for floating types (x, y); y's sign alternates when y_alternate.
  double xlo, xhi, ylo, yhi;
  bool y_alternate;
  std::function<double(double, double)> ref;  // on the values as stored, in float64
};

void CheckBinary(const BinaryCase& c, DataType dt, const TensorShape& xs, const TensorShape& ys) {
  std::vector<double> xv, yv;
  const bool is_int = DataTypeIsInteger(dt);
  if (!is_int) {
    xv = Values(dt, xs.num_elements(), c.xlo, c.xhi, 1);
    yv = Values(dt, ys.num_elements(), c.ylo, c.yhi, 2);
    if (c.y_alternate)
      for (size_t i = 0; i < yv.size(); i += 2) yv[i] = -yv[i];
  } else if (c.op == "Pow") {  // |x|^3 <= 125 fits int8
    xv = Values(dt, xs.num_elements(), -5, 5, 1);
    yv = Values(dt, ys.num_elements(), 0, 3, 2);
  } else if (IsUnsigned(dt)) {
    xv = Values(dt, xs.num_elements(), 0, 25, 1);
    yv = Values(dt, ys.num_elements(), 1, 9, 2);
  } else {
    xv = Values(dt, xs.num_elements(), -12, 12, 1);
    yv = Values(dt, ys.num_elements(), 1, 9, 2);
    for (size_t i = 0; i < yv.size(); i += 2) yv[i] = -yv[i];
  }
  Tensor x = FromDoubles(dt, xs, xv), y = FromDoubles(dt, ys, yv);
  xv = ToDoubles(x);
  yv = ToDoubles(y);
  TensorShape want_shape;
  const std::vector<double> want = BroadcastRef(xs, xv, ys, yv, c.ref, &want_shape);
  auto z = KernelRunner(c.op).Input(x).Input(y).RunOne();
  const std::string what =
      c.op + " " + DataTypeString(dt) + " " + xs.DebugString() + " vs " + ys.DebugString();
  ASSERT_TRUE(z.ok()) << what << ": " << z.status();
  EXPECT_EQ(z->dtype(), dt) << what;
  EXPECT_EQ(z->shape(), want_shape) << what;
  ExpectNear(dt, ToDoubles(*z), want, what);
}

double FloorModRef(double a, double b) { return a - std::floor(a / b) * b; }

TEST(CwiseMath2Test, BinaryOpsEveryDtypeMatchFloat64Reference) {
  const std::vector<BinaryCase> cases = {
      {"FloorDiv", -5, 5, 0.5, 3, true, [](double a, double b) { return std::floor(a / b); }},
      {"FloorMod", -5, 5, 0.5, 3, true, FloorModRef},
      {"Pow", 0.5, 3, -2, 2, false, [](double a, double b) { return std::pow(a, b); }},
      {"SquaredDifference", -5, 5, -3, 3, false,
       [](double a, double b) { return (a - b) * (a - b); }},
  };
  int checked = 0;
  for (const BinaryCase& c : cases) {
    const std::vector<DataType> types = AllowedTypes(c.op);
    EXPECT_GE(types.size(), 6u) << c.op;
    for (DataType dt : types) {
      for (const auto& [xs, ys] : BinaryShapes()) {
        CheckBinary(c, dt, xs, ys);
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 8 * (12 + 12 + 8 + 6));
}

TEST(CwiseMath2Test, LongVectorsThroughSimdPathsAndThreads) {
  test::TestCpuDevice device(4);
  const BinaryCase fm{"FloorMod", -50, 50, 0.5, 7, true, FloorModRef};
  const BinaryCase sd{"SquaredDifference", -5, 5, -3, 3, false,
                      [](double a, double b) { return (a - b) * (a - b); }};
  for (int64_t n : {17, 513, 1500}) {
    for (DataType dt : {DT_FLOAT, DT_HALF, DT_INT32}) {
      CheckBinary(fm, dt, TensorShape({n}), TensorShape({n}));
      CheckBinary(sd, dt, TensorShape({n}), TensorShape({}));
    }
  }
  Tensor x = FromDoubles(DT_FLOAT, TensorShape({300, 500}), Values(DT_FLOAT, 150000, -9, 9, 4));
  Tensor y = FromDoubles(DT_FLOAT, TensorShape({500}), Values(DT_FLOAT, 500, 1, 4, 5));
  auto z = KernelRunner("FloorDiv").OnDevice(&device).Input(x).Input(y).RunOne();
  ASSERT_TRUE(z.ok()) << z.status();
  TensorShape s;
  ExpectNear(DT_FLOAT, ToDoubles(*z),
             BroadcastRef(x.shape(), ToDoubles(x), y.shape(), ToDoubles(y),
                          [](double a, double b) { return std::floor(a / b); }, &s),
             "FloorDiv threaded");
}

// Hand-worked: floor toward -inf and the divisor's sign, as Python's // and %.
TEST(CwiseMath2Test, FloorDivAndFloorModSigns) {
  const std::vector<int32_t> a = {7, -7, 7, -7, 0, 6, -6};
  const std::vector<int32_t> b = {2, 2, -2, -2, 3, -3, 3};
  auto q = KernelRunner("FloorDiv")
               .Input(AsTensor<int32_t>(a, TensorShape({7})))
               .Input(AsTensor<int32_t>(b, TensorShape({7})))
               .RunOne();
  auto r = KernelRunner("FloorMod")
               .Input(AsTensor<int32_t>(a, TensorShape({7})))
               .Input(AsTensor<int32_t>(b, TensorShape({7})))
               .RunOne();
  ASSERT_TRUE(q.ok() && r.ok());
  const std::vector<int32_t> want_q = {3, -4, -4, 3, 0, -2, -2};
  const std::vector<int32_t> want_r = {1, 1, -1, -1, 0, 0, 0};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(q->flat<int32_t>()[i], want_q[i]) << i;
    EXPECT_EQ(r->flat<int32_t>()[i], want_r[i]) << i;
  }
  auto rf = KernelRunner("FloorMod")
                .Input(AsTensor<double>({7.5, -7.5, 7.5, -7.5, -0.0}, TensorShape({5})))
                .Input(AsTensor<double>({2, 2, -2, -2, 1}, TensorShape({5})))
                .RunOne();
  ASSERT_TRUE(rf.ok());
  const std::vector<double> want_rf = {1.5, 0.5, -0.5, -1.5, 0};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(rf->flat<double>()[i], want_rf[i]) << i;
}

TEST(CwiseMath2Test, IntegerDivisionByZeroIsAnErrorNotATrap) {
  for (const char* op : {"FloorDiv", "FloorMod"}) {
    for (DataType dt : {DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT32, DT_UINT64}) {
      auto z = KernelRunner(op)
                   .Input(FromDoubles(dt, TensorShape({2, 2}), {4, 5, 6, 7}))
                   .Input(FromDoubles(dt, TensorShape({2}), {3, 0}))
                   .RunOne();
      ASSERT_FALSE(z.ok()) << op << " " << DataTypeString(dt);
      EXPECT_EQ(z.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_EQ(z.status().message(), "Integer division by zero");
    }
  }
  // MIN / -1 wraps (no SIGFPE); MIN % -1 is 0.
  for (DataType dt : {DT_INT8, DT_INT16, DT_INT32, DT_INT64}) {
    Tensor mn(dt, TensorShape({2}));
    (void)VisitPodType(dt, "min", [&](auto tag) {
      using T = typename decltype(tag)::type;
      mn.data<T>()[0] = std::numeric_limits<T>::min();
      mn.data<T>()[1] = std::numeric_limits<T>::max();
      return OkStatus();
    });
    Tensor m1 = FromDoubles(dt, TensorShape({}), {-1});
    auto q = KernelRunner("FloorDiv").Input(mn).Input(m1).RunOne();
    auto r = KernelRunner("FloorMod").Input(mn).Input(m1).RunOne();
    ASSERT_TRUE(q.ok() && r.ok()) << DataTypeString(dt);
    const std::vector<double> mnv = ToDoubles(mn), qv = ToDoubles(*q), rv = ToDoubles(*r);
    EXPECT_EQ(qv[0], mnv[0]) << DataTypeString(dt);
    EXPECT_EQ(qv[1], -mnv[1]);
    EXPECT_EQ(rv[0], 0);
    EXPECT_EQ(rv[1], 0);
  }
  // Floating: IEEE (inf, NaN), no error.
  auto q = KernelRunner("FloorDiv")
               .Input(AsTensor<float>({1, -1, 0}, TensorShape({3})))
               .Input(AsTensor<float>({0}, TensorShape({})))
               .RunOne();
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->flat<float>()[0], INFINITY);
  EXPECT_EQ(q->flat<float>()[1], -INFINITY);
  EXPECT_TRUE(std::isnan(q->flat<float>()[2]));
  auto r = KernelRunner("FloorMod")
               .Input(AsTensor<float>({1}, TensorShape({1})))
               .Input(AsTensor<float>({0}, TensorShape({1})))
               .RunOne();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(std::isnan(r->flat<float>()[0]));
}

TEST(CwiseMath2Test, PowIntegersAndSpecialValues) {
  auto z = KernelRunner("Pow")
               .Input(AsTensor<int32_t>({2, -3, 0, 7, -1, 3}, TensorShape({6})))
               .Input(AsTensor<int32_t>({10, 3, 0, 0, 5, 21}, TensorShape({6})))
               .RunOne();
  ASSERT_TRUE(z.ok()) << z.status();
  // 3^21 = 10460353203 wraps mod 2^32 like repeated Mul.
  const std::vector<int32_t> want = {1024, -27, 1, 1, -1, static_cast<int32_t>(1870418611u)};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(z->flat<int32_t>()[i], want[i]) << i;
  auto e = KernelRunner("Pow")
               .Input(AsTensor<int64_t>({2, 2}, TensorShape({2})))
               .Input(AsTensor<int64_t>({1, -1}, TensorShape({2})))
               .RunOne();
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(e.status().message(), "Integers to negative integer powers are not allowed");
  auto f = KernelRunner("Pow")
               .Input(AsTensor<double>({-8, -8, 0, 0, 4, 10}, TensorShape({6})))
               .Input(AsTensor<double>({1.0 / 3, 2, -1, 0, 0.5, 400}, TensorShape({6})))
               .RunOne();
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(std::isnan(f->flat<double>()[0]));  // negative base, fractional exponent
  EXPECT_EQ(f->flat<double>()[1], 64);
  EXPECT_EQ(f->flat<double>()[2], INFINITY);
  EXPECT_EQ(f->flat<double>()[3], 1);
  EXPECT_EQ(f->flat<double>()[4], 2);
  EXPECT_EQ(f->flat<double>()[5], INFINITY);
}

TEST(CwiseMath2Test, SquaredDifferenceWrapsForIntegers) {
  const int32_t mx = std::numeric_limits<int32_t>::max();
  auto z = KernelRunner("SquaredDifference")
               .Input(AsTensor<int32_t>({mx, 5}, TensorShape({2})))
               .Input(AsTensor<int32_t>({-1, 8}, TensorShape({2})))
               .RunOne();
  ASSERT_TRUE(z.ok());
  // (2^31)^2 mod 2^32 = 0.
  EXPECT_EQ(z->flat<int32_t>()[0], 0);
  EXPECT_EQ(z->flat<int32_t>()[1], 9);
}

// ---------------------------------------------------------------- comparisons and logic

TEST(CwiseCompareTest, EveryOpEveryDtypeMatchesFloat64Reference) {
  const std::vector<std::pair<std::string, std::function<double(double, double)>>> ops = {
      {"Less", [](double a, double b) -> double { return a < b; }},
      {"LessEqual", [](double a, double b) -> double { return a <= b; }},
      {"Greater", [](double a, double b) -> double { return a > b; }},
      {"GreaterEqual", [](double a, double b) -> double { return a >= b; }},
      {"Equal", [](double a, double b) -> double { return a == b; }},
      {"NotEqual", [](double a, double b) -> double { return a != b; }},
  };
  int checked = 0;
  for (const auto& [op, ref] : ops) {
    std::vector<DataType> types = AllowedTypes(op);
    if (types.empty()) {  // Equal/NotEqual allow any type: the numeric ones and bool
      types = {DT_HALF, DT_BFLOAT16, DT_FLOAT,  DT_DOUBLE, DT_INT8,   DT_INT16, DT_INT32,
               DT_INT64, DT_UINT8,   DT_UINT16, DT_UINT32, DT_UINT64, DT_BOOL};
    }
    EXPECT_GE(types.size(), 12u) << op;
    for (DataType dt : types) {
      for (const auto& [xs, ys] : BinaryShapes()) {
        // Small integers in every dtype: many ties.
        std::vector<double> xv = Values(DT_INT32, xs.num_elements(), 0, 4, 1);
        std::vector<double> yv = Values(DT_INT32, ys.num_elements(), 0, 4, 2);
        if (dt == DT_BOOL) {
          for (double& v : xv) v = static_cast<int>(v) % 2;
          for (double& v : yv) v = static_cast<int>(v) % 2;
        }
        Tensor x = FromDoubles(dt, xs, xv), y = FromDoubles(dt, ys, yv);
        TensorShape want_shape;
        const std::vector<double> want = BroadcastRef(xs, xv, ys, yv, ref, &want_shape);
        auto z = KernelRunner(op).Input(x).Input(y).RunOne();
        const std::string what = op + " " + DataTypeString(dt) + " " + xs.DebugString();
        ASSERT_TRUE(z.ok()) << what << ": " << z.status();
        EXPECT_EQ(z->dtype(), DT_BOOL) << what;
        EXPECT_EQ(z->shape(), want_shape) << what;
        EXPECT_EQ(ToDoubles(*z), want) << what;
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 6 * 12 * 8);
}

TEST(CwiseCompareTest, NaNComparesFalseExceptNotEqual) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> xv(20, 1.0);
    xv[3] = nan;
    xv[19] = nan;
    Tensor x = FromDoubles(dt, TensorShape({20}), xv);
    for (const char* op : {"Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual"}) {
      auto z = KernelRunner(op).Input(x).Input(x).RunOne();
      ASSERT_TRUE(z.ok()) << op;
      const bool is_ne = std::string(op) == "NotEqual";
      const bool reflexive = is_ne ? false : std::string(op).find("Equal") != std::string::npos;
      for (int i = 0; i < 20; ++i) {
        const bool want = (i == 3 || i == 19) ? is_ne : reflexive;
        EXPECT_EQ(z->flat<bool>()[i], want) << op << " " << DataTypeString(dt) << " " << i;
      }
    }
  }
}

TEST(CwiseCompareTest, EqualOnStringsAndIncompatibleShapes) {
  auto z = KernelRunner("Equal")
               .Input(AsTensor<std::string>({"a", "bb"}, TensorShape({2, 1})))
               .Input(AsTensor<std::string>({"a", "bb", ""}, TensorShape({1, 3})))
               .RunOne();
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->shape(), TensorShape({2, 3}));
  const std::vector<bool> want = {true, false, false, false, true, false};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(z->flat<bool>()[i], want[i]) << i;
  auto ne = KernelRunner("NotEqual")
                .Input(AsTensor<std::string>({"x"}, TensorShape({})))
                .Input(AsTensor<std::string>({"x", "y"}, TensorShape({2})))
                .RunOne();
  ASSERT_TRUE(ne.ok());
  EXPECT_FALSE(ne->flat<bool>()[0]);
  EXPECT_TRUE(ne->flat<bool>()[1]);

  // Shapes that do not broadcast: an error by default, a scalar when asked.
  for (const char* op : {"Equal", "NotEqual"}) {
    auto err = KernelRunner(op)
                   .Input(Tensor(DT_FLOAT, TensorShape({2, 3})))
                   .Input(Tensor(DT_FLOAT, TensorShape({4})))
                   .RunOne();
    ASSERT_FALSE(err.ok());
    EXPECT_EQ(err.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(err.status().message(), "Incompatible shapes: [2,3] vs. [4]");
    KernelRunner r(op);
    r.Attr("incompatible_shape_error", false);
    auto s = r.Input(Tensor(DT_FLOAT, TensorShape({2, 3})))
                 .Input(Tensor(DT_FLOAT, TensorShape({4})))
                 .RunOne();
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->shape(), TensorShape({}));
    EXPECT_EQ(s->flat<bool>()[0], std::string(op) == "NotEqual");
    auto shape = r.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({4})});
    ASSERT_TRUE(shape.ok()) << shape.status();
    EXPECT_EQ((*shape)[0], PartialTensorShape::Scalar());  // TF's shape function: a scalar
  }
  KernelRunner lt("Less");
  lt.Attr("T", DT_FLOAT);
  auto shape = lt.InferShapes({PartialTensorShape({-1, 1}), PartialTensorShape({3})});
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ((*shape)[0], PartialTensorShape({-1, 3}));
  EXPECT_FALSE(lt.InferShapes({PartialTensorShape({2}), PartialTensorShape({3})}).ok());
}

TEST(CwiseLogicalTest, TruthTablesWithBroadcasting) {
  Tensor x = BoolTensor({false, true}, TensorShape({2, 1}));
  Tensor y = BoolTensor({false, true, true}, TensorShape({1, 3}));
  auto a = KernelRunner("LogicalAnd").Input(x).Input(y).RunOne();
  auto o = KernelRunner("LogicalOr").Input(x).Input(y).RunOne();
  ASSERT_TRUE(a.ok() && o.ok()) << a.status() << o.status();
  EXPECT_EQ(a->shape(), TensorShape({2, 3}));
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      const bool xi = i == 1, yj = j > 0;
      EXPECT_EQ(a->flat<bool>()[i * 3 + j], xi && yj);
      EXPECT_EQ(o->flat<bool>()[i * 3 + j], xi || yj);
    }
  }
  std::vector<bool> v(37);
  for (int i = 0; i < 37; ++i) v[i] = (i * 7) % 3 == 0;
  auto n = KernelRunner("LogicalNot").Input(BoolTensor(v, TensorShape({37}))).RunOne();
  ASSERT_TRUE(n.ok());
  for (int i = 0; i < 37; ++i) EXPECT_EQ(n->flat<bool>()[i], !v[i]);
  auto e = KernelRunner("LogicalNot").Input(Tensor(DT_BOOL, TensorShape({0, 4}))).RunOne();
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->shape(), TensorShape({0, 4}));
  // Only bool inputs.
  EXPECT_FALSE(KernelRunner("LogicalAnd")
                   .Input(AsTensor<float>({1}, TensorShape({})))
                   .Input(AsTensor<float>({1}, TensorShape({})))
                   .RunOne()
                   .ok());
}

// ---------------------------------------------------------------- unary

struct UnaryCase {
  std::string op;
  double lo, hi;  // input range for floating types
  std::function<double(double)> ref;
};

TEST(CwiseMath2Test, UnaryOpsEveryDtypeMatchFloat64Reference) {
  const std::vector<UnaryCase> cases = {
      {"Abs", -5, 5, [](double v) { return std::fabs(v); }},
      {"Sign", -5, 5, [](double v) -> double { return (v > 0) - (v < 0); }},
      {"Reciprocal", 0.2, 5, [](double v) { return 1 / v; }},
      {"Rsqrt", 0.01, 100, [](double v) { return 1 / std::sqrt(v); }},
      {"Log1p", -0.9, 10, [](double v) { return std::log1p(v); }},
      {"Tanh", -6, 6, [](double v) { return std::tanh(v); }},
      {"Sigmoid", -12, 12, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"Erf", -3, 3, [](double v) { return std::erf(v); }},
      {"Cos", -7, 7, [](double v) { return std::cos(v); }},
      {"Sin", -7, 7, [](double v) { return std::sin(v); }},
  };
  int checked = 0;
  for (const UnaryCase& c : cases) {
    const std::vector<DataType> types = AllowedTypes(c.op);
    EXPECT_GE(types.size(), 4u);
    for (DataType dt : types) {
      for (const TensorShape& shape :
           {TensorShape({}), TensorShape({6}), TensorShape({17}), TensorShape({3, 200}),
            TensorShape({0, 5})}) {
        const int64_t n = shape.num_elements();
        std::vector<double> xv;
        if (DataTypeIsInteger(dt)) {
          xv = Values(dt, n, -11, 11, 3);
          if (c.op == "Reciprocal")
            for (double& v : xv) v = v == 0 ? 1 : v;
        } else {
          xv = Values(dt, n, c.lo, c.hi, 3);
          if (c.op == "Reciprocal")  // negative half too
            for (size_t i = 0; i < xv.size(); i += 2) xv[i] = -xv[i];
        }
        Tensor x = FromDoubles(dt, shape, xv);
        xv = ToDoubles(x);
        std::vector<double> want;
        for (double v : xv) {
          double w = c.ref(v);
          if (DataTypeIsInteger(dt)) w = std::trunc(w);
          want.push_back(w);
        }
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
  EXPECT_GE(checked, 5 * (8 + 8 + 8 + 4 * 5));
}

TEST(CwiseMath2Test, UnarySpecialValues) {
  const float inf = INFINITY, nan = NAN;
  // Abs / Sign: |MIN| wraps; sign(NaN) = NaN (TF's kernel), sign(-0) = 0.
  auto a = KernelRunner("Abs")
               .Input(AsTensor<int8_t>({-128, -5, 127}, TensorShape({3})))
               .RunOne();
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->flat<int8_t>()[0], -128);
  EXPECT_EQ(a->flat<int8_t>()[1], 5);
  auto s = KernelRunner("Sign")
               .Input(AsTensor<float>({nan, -0.f, -inf, inf, 1e-30f}, TensorShape({5})))
               .RunOne();
  ASSERT_TRUE(s.ok());
  const std::vector<float> want_s = {nan, 0, -1, 1, 1};
  EXPECT_TRUE(std::isnan(s->flat<float>()[0]));
  for (int i = 1; i < 5; ++i) EXPECT_EQ(s->flat<float>()[i], want_s[i]) << i;
  // Reciprocal: integer zero is an error; float zero is inf.
  auto r = KernelRunner("Reciprocal").Input(AsTensor<int32_t>({1, 0}, TensorShape({2}))).RunOne();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "Integer division by zero");
  auto rf = KernelRunner("Reciprocal").Input(AsTensor<float>({0, -0.f}, TensorShape({2}))).RunOne();
  ASSERT_TRUE(rf.ok());
  EXPECT_EQ(rf->flat<float>()[0], inf);
  EXPECT_EQ(rf->flat<float>()[1], -inf);
  // Rsqrt(0) = inf, Rsqrt(-1) = NaN.
  auto q = KernelRunner("Rsqrt").Input(AsTensor<float>({0, -1, 4}, TensorShape({3}))).RunOne();
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->flat<float>()[0], inf);
  EXPECT_TRUE(std::isnan(q->flat<float>()[1]));
  EXPECT_EQ(q->flat<float>()[2], 0.5f);
  // Log1p is accurate for tiny x (log(1 + x) would give 0); -1 gives -inf.
  auto l = KernelRunner("Log1p")
               .Input(AsTensor<double>({1e-12, -1, 1e300}, TensorShape({3})))
               .RunOne();
  ASSERT_TRUE(l.ok());
  EXPECT_NEAR(l->flat<double>()[0], 1e-12, 1e-24);
  EXPECT_EQ(l->flat<double>()[1], -INFINITY);
  EXPECT_NEAR(l->flat<double>()[2], std::log(1e300), 1e-12 * std::log(1e300));
  // Tanh and Sigmoid saturate without NaN for huge inputs; NaN stays NaN.
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF}) {
    Tensor x = FromDoubles(dt, TensorShape({5}), {-1e4, 1e4, -60000, 60000, nan});
    auto t = KernelRunner("Tanh").Input(x).RunOne();
    auto g = KernelRunner("Sigmoid").Input(x).RunOne();
    ASSERT_TRUE(t.ok() && g.ok());
    const std::vector<double> tv = ToDoubles(*t), gv = ToDoubles(*g);
    const std::vector<double> want_t = {-1, 1, -1, 1}, want_g = {0, 1, 0, 1};
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(tv[i], want_t[i]) << DataTypeString(dt) << " " << i;
      EXPECT_NEAR(gv[i], want_g[i], 1e-30) << DataTypeString(dt) << " " << i;
    }
    EXPECT_TRUE(std::isnan(tv[4]));
    EXPECT_TRUE(std::isnan(gv[4]));
  }
  auto e = KernelRunner("Erf").Input(AsTensor<float>({-inf, inf, 0}, TensorShape({3}))).RunOne();
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->flat<float>()[0], -1.f);
  EXPECT_EQ(e->flat<float>()[1], 1.f);
  EXPECT_EQ(e->flat<float>()[2], 0.f);
}

TEST(CwiseMath2Test, DtypesOutsideTheOpDefAreRejected) {
  EXPECT_FALSE(KernelRunner("Tanh").Input(AsTensor<int32_t>({1}, TensorShape({1}))).RunOne().ok());
  EXPECT_FALSE(KernelRunner("Abs").Input(AsTensor<uint8_t>({1}, TensorShape({1}))).RunOne().ok());
  EXPECT_FALSE(KernelRunner("Less")
                   .Input(BoolTensor({true}, TensorShape({1})))
                   .Input(BoolTensor({true}, TensorShape({1})))
                   .RunOne()
                   .ok());
  auto p = KernelRunner("Pow")
               .Input(AsTensor<uint8_t>({1}, TensorShape({1})))
               .Input(AsTensor<uint8_t>({1}, TensorShape({1})))
               .RunOne();
  ASSERT_FALSE(p.ok());
}

}  // namespace
}  // namespace tensorflux
