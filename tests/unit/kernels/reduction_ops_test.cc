// Reductions (kernels/cpu/reduction_ops.cc) against float64 loops: every axes subset of rank-3
// and rank-4 inputs with keep_dims on and off, negative/duplicate/empty axes, int64 indices,
// zero-size dims, rank 0, NaN, All/Any, ArgMax/ArgMin, the shape function and the errors.

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace tensorflux {
namespace {

using test::AsTensor;
using test::FromDoubles;
using test::KernelRunner;
using test::ToDoubles;

constexpr double kInf = std::numeric_limits<double>::infinity();

StatusOr<Tensor> Reduce(const std::string& op, Tensor x, Tensor axes, bool keep_dims = false) {
  KernelRunner r(op);
  r.Input(std::move(x)).Input(std::move(axes)).Attr("keep_dims", keep_dims);
  return r.RunOne();
}

Tensor Axes(const std::vector<int32_t>& a) {
  return AsTensor<int32_t>(a, TensorShape({static_cast<int64_t>(a.size())}));
}

// Float64 reference: reduces `x` (dims `dims`) over `axes` (already non-negative).
std::vector<double> Reference(const std::string& op, const std::vector<double>& x,
                              const std::vector<int64_t>& dims, const std::set<int>& axes,
                              bool is_int) {
  const int rank = static_cast<int>(dims.size());
  int64_t out_n = 1, count = 1;
  for (int d = 0; d < rank; ++d) (axes.count(d) ? count : out_n) *= dims[d];
  double init = 0;
  if (op == "Prod" || op == "All") init = 1;
  if (op == "Max") init = -kInf;
  if (op == "Min") init = kInf;
  std::vector<double> acc(out_n, init);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t rem = static_cast<int64_t>(i), o = 0, ostride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t id = rem % dims[d];
      rem /= dims[d];
      if (!axes.count(d)) {
        o += id * ostride;
        ostride *= dims[d];
      }
    }
    double& a = acc[o];
    const double v = x[i];
    if (op == "Sum" || op == "Mean") a += v;
    if (op == "Prod") a *= v;
    if (op == "Max") a = std::max(a, v);
    if (op == "Min") a = std::min(a, v);
    if (op == "All") a = (a != 0 && v != 0);
    if (op == "Any") a = (a != 0 || v != 0);
  }
  if (op == "Mean") {
    for (double& a : acc) a = is_int ? std::trunc(a / count) : a / count;
  }
  return acc;
}

std::vector<double> Pattern(int64_t n, bool for_prod) {
  std::vector<double> v(n);
  const double vals[] = {-2, 1, 3, -1, 2, 0.5, -3, 1.5};
  const double pvals[] = {-1, 1, 2, 1, -1, 1};
  for (int64_t i = 0; i < n; ++i) v[i] = for_prod ? pvals[(i * 5) % 6] : vals[(i * 7) % 8];
  return v;
}

void CheckAllSubsets(const std::vector<int64_t>& dims) {
  const int rank = static_cast<int>(dims.size());
  const TensorShape shape(dims);
  const std::vector<std::string> ops = {"Sum", "Mean", "Max", "Min", "Prod"};
  const std::vector<DataType> types = {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT32,
                                       DT_INT64, DT_INT8};
  int checked = 0;
  for (const std::string& op : ops) {
    for (DataType dt : types) {
      const bool is_int = DataTypeIsInteger(dt);
      std::vector<double> vals = Pattern(shape.num_elements(), op == "Prod");
      if (is_int) {
        for (double& v : vals) v = std::trunc(v);
      }
      const Tensor x = FromDoubles(dt, shape, vals);
      const std::vector<double> xd = ToDoubles(x);
      for (int mask = 0; mask < (1 << rank); ++mask) {
        std::set<int> axes;
        std::vector<int32_t> axes_v;
        for (int d = 0; d < rank; ++d) {
          if (mask & (1 << d)) {
            axes.insert(d);
            // Alternate positive and negative spellings.
            axes_v.push_back(d % 2 ? d - rank : d);
          }
        }
        for (bool keep : {false, true}) {
          auto y = Reduce(op, x, Axes(axes_v), keep);
          const std::string what = op + " " + DataTypeString(dt) + " mask " +
                                   std::to_string(mask) + (keep ? " keep" : "");
          ASSERT_TRUE(y.ok()) << what << ": " << y.status();
          std::vector<int64_t> want_dims;
          for (int d = 0; d < rank; ++d) {
            if (!axes.count(d)) {
              want_dims.push_back(dims[d]);
            } else if (keep) {
              want_dims.push_back(1);
            }
          }
          EXPECT_EQ(y->shape(), TensorShape(want_dims)) << what;
          EXPECT_EQ(y->dtype(), dt) << what;
          const std::vector<double> want = Reference(op, xd, dims, axes, is_int);
          const std::vector<double> got = ToDoubles(*y);
          ASSERT_EQ(got.size(), want.size()) << what;
          const double tol = (dt == DT_HALF || dt == DT_BFLOAT16) ? 1e-2 : 1e-6;
          for (size_t i = 0; i < want.size(); ++i) {
            EXPECT_NEAR(got[i], test::RoundTo(dt, want[i]),
                        tol * std::max(1.0, std::abs(want[i])))
                << what << " at " << i;
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 5 * 7 * (1 << rank) * 2);
}

TEST(ReductionOpsTest, EveryAxesSubsetRank3) { CheckAllSubsets({2, 3, 4}); }
TEST(ReductionOpsTest, EveryAxesSubsetRank4WithUnitDim) { CheckAllSubsets({3, 1, 4, 5}); }

TEST(ReductionOpsTest, ParallelPathMatchesSerialAndReference) {
  // Big enough to shard over the leading kept group on a 4-thread pool.
  test::TestCpuDevice pool_device(4);
  const std::vector<std::vector<int64_t>> shapes = {{64, 1000}, {16, 50, 60}, {40, 3, 300}};
  const std::vector<std::vector<int32_t>> axes_list = {{1}, {1}, {1}};
  for (size_t c = 0; c < shapes.size(); ++c) {
    const TensorShape shape(shapes[c]);
    std::vector<double> vals(shape.num_elements());
    for (size_t i = 0; i < vals.size(); ++i) vals[i] = static_cast<double>((i * 31) % 97) / 8 - 6;
    for (const char* op : {"Sum", "Max", "Mean"}) {
      const Tensor x = FromDoubles(DT_FLOAT, shape, vals);
      KernelRunner par(op);
      par.Input(x).Input(Axes(axes_list[c])).Attr("keep_dims", false).OnDevice(&pool_device);
      auto p = par.RunOne();
      auto s = Reduce(op, x, Axes(axes_list[c]));
      ASSERT_TRUE(p.ok() && s.ok()) << p.status() << s.status();
      EXPECT_EQ(ToDoubles(*p), ToDoubles(*s)) << op << " case " << c;  // same order: exact
      std::set<int> axes(axes_list[c].begin(), axes_list[c].end());
      const std::vector<double> want = Reference(op, ToDoubles(x), shapes[c], axes, false);
      const std::vector<double> got = ToDoubles(*p);
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_NEAR(got[i], want[i], 1e-4 * std::max(1.0, std::abs(want[i]))) << op << " " << i;
      }
    }
  }
}

TEST(ReductionOpsTest, HandWorkedSum) {
  // [[1, 2, 3], [4, 5, 6]]: rows sum to 6, 15; columns to 5, 7, 9.
  const Tensor x = AsTensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(ToDoubles(*Reduce("Sum", x, Axes({1}))), (std::vector<double>{6, 15}));
  EXPECT_EQ(ToDoubles(*Reduce("Sum", x, Axes({0}))), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(ToDoubles(*Reduce("Mean", x, Axes({0, 1}))), (std::vector<double>{3.5}));
  EXPECT_EQ(ToDoubles(*Reduce("Max", x, Axes({-1}))), (std::vector<double>{3, 6}));
  EXPECT_EQ(ToDoubles(*Reduce("Prod", x, Axes({0}))), (std::vector<double>{4, 10, 18}));
}

TEST(ReductionOpsTest, ScalarAxisDuplicatesAndInt64Indices) {
  const Tensor x = AsTensor<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto a = Reduce("Sum", x, AsTensor<int32_t>({1}, {}));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->shape(), TensorShape({2}));
  EXPECT_EQ(ToDoubles(*a), (std::vector<double>{6, 15}));
  auto b = Reduce("Sum", x, AsTensor<int64_t>({-2}, {1}), true);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->shape(), TensorShape({1, 3}));
  EXPECT_EQ(ToDoubles(*b), (std::vector<double>{5, 7, 9}));
  // A dim named twice (also as d and d - rank) is an error, as TF's kernels.
  for (const Tensor& axes : {AsTensor<int64_t>({0, -2}, {2}), AsTensor<int64_t>({1, 1}, {2})}) {
    auto d = Reduce("Sum", x, axes, true);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(d.status().message().find("Axes contains duplicate dimension"), std::string::npos)
        << d.status();
  }
}

TEST(ReductionOpsTest, EmptyAxesIsIdentity) {
  const Tensor x = AsTensor<float>({1, -2, 3, 4}, {2, 2});
  for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod"}) {
    auto y = Reduce(op, x, Axes({}), false);
    ASSERT_TRUE(y.ok()) << op << ": " << y.status();
    EXPECT_EQ(y->shape(), TensorShape({2, 2})) << op;
    EXPECT_EQ(ToDoubles(*y), (std::vector<double>{1, -2, 3, 4})) << op;
  }
}

TEST(ReductionOpsTest, ZeroSizeDims) {
  const Tensor x(DT_FLOAT, TensorShape({2, 0, 3}));
  auto s = Reduce("Sum", x, Axes({1}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->shape(), TensorShape({2, 3}));
  EXPECT_EQ(ToDoubles(*s), std::vector<double>(6, 0.0));
  auto p = Reduce("Prod", x, Axes({1}));
  EXPECT_EQ(ToDoubles(*p), std::vector<double>(6, 1.0));
  auto mx = Reduce("Max", x, Axes({1}));
  EXPECT_EQ(ToDoubles(*mx), std::vector<double>(6, -kInf));
  auto mn = Reduce("Min", x, Axes({1}), true);
  EXPECT_EQ(mn->shape(), TensorShape({2, 1, 3}));
  EXPECT_EQ(ToDoubles(*mn), std::vector<double>(6, kInf));
  auto mean = Reduce("Mean", x, Axes({1}));
  for (double v : ToDoubles(*mean)) EXPECT_TRUE(std::isnan(v));
  // Reducing a non-empty axis of an empty tensor gives an empty tensor.
  auto e = Reduce("Sum", x, Axes({0}));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->shape(), TensorShape({0, 3}));
  // Integer max of nothing is the lowest value.
  const Tensor xi(DT_INT32, TensorShape({0}));
  auto mi = Reduce("Max", xi, Axes({0}));
  ASSERT_TRUE(mi.ok()) << mi.status();
  EXPECT_EQ(mi->data<int32_t>()[0], std::numeric_limits<int32_t>::lowest());
  auto ai = Reduce("All", Tensor(DT_BOOL, TensorShape({0})), Axes({0}));
  EXPECT_TRUE(ai->data<bool>()[0]);
  auto an = Reduce("Any", Tensor(DT_BOOL, TensorShape({0})), Axes({0}));
  EXPECT_FALSE(an->data<bool>()[0]);
}

TEST(ReductionOpsTest, RankZero) {
  const Tensor x = AsTensor<float>({7}, {});
  auto y = Reduce("Sum", x, Axes({}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), TensorShape({}));
  EXPECT_EQ(ToDoubles(*y), (std::vector<double>{7}));
  auto bad = Reduce("Sum", x, Axes({0}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("Invalid reduction dimension 0 for input with 0 dimensions"),
            std::string::npos)
      << bad.status();
}

TEST(ReductionOpsTest, NanPropagatesThroughMaxMin) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = AsTensor<double>({1, nan, 3, 4, 5, nan}, {2, 3});
  auto mx = ToDoubles(*Reduce("Max", x, Axes({1})));
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]));
  auto mn = ToDoubles(*Reduce("Min", x, Axes({0})));
  EXPECT_EQ(mn[0], 1);
  EXPECT_TRUE(std::isnan(mn[1]) && std::isnan(mn[2]));
}

TEST(ReductionOpsTest, IntegerMeanTruncatesAndSumWraps) {
  auto m = Reduce("Mean", AsTensor<int32_t>({-7, 0, 7, 2}, {2, 2}), Axes({1}));
  EXPECT_EQ(ToDoubles(*m), (std::vector<double>{-3, 4}));  // -3.5 -> -3, 4.5 -> 4
  auto w = Reduce("Sum", AsTensor<int8_t>({100, 100}, {2}), Axes({0}));
  EXPECT_EQ(w->data<int8_t>()[0], static_cast<int8_t>(-56));
}

// TF's integer Mean sums in int64 / uint64 and divides by the count there (values from
// tools/oracle/reductions.py): neither the sum nor the count wraps in a small type; Sum still
// wraps in the element type; int64/uint64 means wrap their 64-bit sum.
TEST(ReductionOpsTest, IntegerMeanAccumulatesInSixtyFourBits) {
  auto ones = Reduce("Mean", AsTensor<uint8_t>(std::vector<uint8_t>(256, 1), {256}), Axes({0}));
  ASSERT_TRUE(ones.ok()) << ones.status();
  EXPECT_EQ(ones->data<uint8_t>()[0], 1);  // count 256 is 0 in uint8; the sum too
  auto i8 = Reduce("Mean", AsTensor<int8_t>(std::vector<int8_t>(300, 127), {300}), Axes({0}));
  EXPECT_EQ(i8->data<int8_t>()[0], 127);
  auto neg = Reduce("Mean", AsTensor<int8_t>({-128, -128, -1}, {3}), Axes({0}));
  EXPECT_EQ(neg->data<int8_t>()[0], -85);  // -257 / 3 truncates toward zero
  auto u32 = Reduce("Mean", AsTensor<uint32_t>(std::vector<uint32_t>(300, 4294967295u), {300}),
                    Axes({0}));
  EXPECT_EQ(u32->data<uint32_t>()[0], 4294967295u);
  auto i64 = Reduce("Mean", AsTensor<int64_t>(std::vector<int64_t>(
                                300, std::numeric_limits<int64_t>::max()), {300}), Axes({0}));
  EXPECT_EQ(i64->data<int64_t>()[0], -1);  // the int64 sum wraps to -300, as in TF
  auto u64 = Reduce("Mean", AsTensor<uint64_t>(std::vector<uint64_t>(
                                300, std::numeric_limits<uint64_t>::max()), {300}), Axes({0}));
  EXPECT_EQ(u64->data<uint64_t>()[0], uint64_t{61489146912365171});
  auto sum = Reduce("Sum", AsTensor<uint8_t>(std::vector<uint8_t>(256, 1), {256}), Axes({0}));
  EXPECT_EQ(sum->data<uint8_t>()[0], 0);
  // Kept leading group, large enough to shard: 2 x 40000 int16 of 32767.
  auto big = Reduce("Mean", AsTensor<int16_t>(std::vector<int16_t>(80000, 32767), {2, 40000}),
                    Axes({1}));
  EXPECT_EQ(big->data<int16_t>()[0], 32767);
  EXPECT_EQ(big->data<int16_t>()[1], 32767);
  auto empty = Reduce("Mean", AsTensor<int8_t>({}, {0, 3}), Axes({0}));
  EXPECT_EQ(ToDoubles(*empty), (std::vector<double>{0, 0, 0}));
}

TEST(ReductionOpsTest, AllAny) {
  const Tensor x = FromDoubles(DT_BOOL, TensorShape({3, 2}), {1, 1, 0, 1, 0, 0});
  EXPECT_EQ(ToDoubles(*Reduce("All", x, Axes({1}))), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(ToDoubles(*Reduce("Any", x, Axes({1}))), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(ToDoubles(*Reduce("All", x, Axes({0}))), (std::vector<double>{0, 0}));
  EXPECT_EQ(ToDoubles(*Reduce("Any", x, Axes({0, 1}), true)), (std::vector<double>{1}));
}

TEST(ReductionOpsTest, Errors) {
  const Tensor x = AsTensor<float>({1, 2, 3, 4}, {2, 2});
  for (int bad : {5, 2, -3}) {
    auto y = Reduce("Sum", x, Axes({0, bad}));
    ASSERT_FALSE(y.ok()) << bad;
    EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string want = "Invalid reduction dimension " + std::to_string(bad) +
                             " for input with 2 dimensions";
    EXPECT_NE(y.status().message().find(want), std::string::npos) << y.status();
    EXPECT_NE(y.status().message().find("test_node"), std::string::npos) << y.status();
  }
  auto r2 = Reduce("Max", x, AsTensor<int32_t>({0, 1}, {1, 2}));
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.status().code(), absl::StatusCode::kInvalidArgument);
  // bool is not a numeric type for Sum (rejected by the op's type list or the kernel).
  auto b = Reduce("Sum", FromDoubles(DT_BOOL, TensorShape({1}), {1}), Axes({0}));
  EXPECT_FALSE(b.ok());
}

TEST(ReductionOpsTest, ShapeFunction) {
  const Tensor axes = Axes({-1, 0});
  KernelRunner r("Sum");
  r.Input(Tensor(DT_FLOAT, TensorShape({2, 3, 4}))).Input(axes).Attr("keep_dims", false);
  auto s = r.InferShapes({PartialTensorShape({2, -1, 4}), PartialTensorShape({2})}, {nullptr, &axes});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1}));
  auto u = r.InferShapes({PartialTensorShape({2, 3, 4}), PartialTensorShape({2})});
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_TRUE((*u)[0].unknown_rank());
  const Tensor bad = Axes({3});
  auto e = r.InferShapes({PartialTensorShape({2, 3, 4}), PartialTensorShape({1})}, {nullptr, &bad});
  EXPECT_FALSE(e.ok());

  KernelRunner k("Mean");
  k.Input(Tensor(DT_FLOAT, TensorShape({2, 3}))).Input(axes).Attr("keep_dims", true);
  auto kd = k.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({2})});
  ASSERT_TRUE(kd.ok()) << kd.status();
  EXPECT_EQ((*kd)[0], PartialTensorShape({-1, -1}));
}

// ---------------------------------------------------------------- ArgMax / ArgMin

StatusOr<Tensor> Arg(const std::string& op, Tensor x, int64_t dim, DataType out = DT_INT64) {
  KernelRunner r(op);
  r.Input(std::move(x)).Input(AsTensor<int64_t>({dim}, {})).Attr("output_type", out);
  return r.RunOne();
}

TEST(ArgOpsTest, AgainstLoops) {
  const std::vector<int64_t> dims = {3, 4, 5};
  std::vector<double> vals(60);
  for (int i = 0; i < 60; ++i) vals[i] = static_cast<double>((i * 37) % 11) - 5;  // has ties
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT32, DT_INT64, DT_UINT8}) {
    std::vector<double> v = vals;
    if (dt == DT_UINT8) {
      for (double& e : v) e += 5;
    }
    const Tensor x = FromDoubles(dt, TensorShape(dims), v);
    for (int axis = 0; axis < 3; ++axis) {
      for (bool is_max : {true, false}) {
        for (DataType out_t : {DT_INT64, DT_INT32}) {
          auto y = Arg(is_max ? "ArgMax" : "ArgMin", x, axis - (axis == 2 ? 3 : 0), out_t);
          ASSERT_TRUE(y.ok()) << y.status();
          EXPECT_EQ(y->dtype(), out_t);
          const std::vector<double> got = ToDoubles(*y);
          int64_t outer = 1, inner = 1;
          for (int d = 0; d < 3; ++d) {
            if (d < axis) outer *= dims[d];
            if (d > axis) inner *= dims[d];
          }
          ASSERT_EQ(static_cast<int64_t>(got.size()), outer * inner);
          for (int64_t o = 0; o < outer; ++o) {
            for (int64_t i = 0; i < inner; ++i) {
              int64_t best = 0;
              for (int64_t j = 1; j < dims[axis]; ++j) {
                const double c = v[(o * dims[axis] + j) * inner + i];
                const double b = v[(o * dims[axis] + best) * inner + i];
                if (is_max ? c > b : c < b) best = j;
              }
              EXPECT_EQ(got[o * inner + i], best)
                  << DataTypeString(dt) << " axis " << axis << " max " << is_max;
            }
          }
        }
      }
    }
  }
}

TEST(ArgOpsTest, ShapeAndErrors) {
  const Tensor x = AsTensor<float>({3, 9, 1, 9}, {2, 2});
  auto y = Arg("ArgMax", x, 1);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), TensorShape({2}));
  EXPECT_EQ(ToDoubles(*y), (std::vector<double>{1, 1}));
  auto empty = Arg("ArgMax", Tensor(DT_FLOAT, TensorShape({2, 0})), 1);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  // An empty output is fine even when the reduced dim is empty.
  auto empty_out = Arg("ArgMax", Tensor(DT_FLOAT, TensorShape({0, 0})), 1);
  ASSERT_TRUE(empty_out.ok()) << empty_out.status();
  EXPECT_EQ(empty_out->shape(), TensorShape({0}));
  auto range = Arg("ArgMin", x, 2);
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(range.status().code(), absl::StatusCode::kInvalidArgument);
  auto scalar = Arg("ArgMin", AsTensor<float>({1}, {}), 0);
  ASSERT_FALSE(scalar.ok());
  EXPECT_EQ(scalar.status().code(), absl::StatusCode::kInvalidArgument);
  KernelRunner r("ArgMax");
  r.Input(x).Input(AsTensor<int32_t>({0, 1}, {2}));
  auto vec_dim = r.RunOne();
  ASSERT_FALSE(vec_dim.ok());
  EXPECT_EQ(vec_dim.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorflux
