// Select (TF v1 rules), SelectV2 (three-way broadcasting), ClipByValue and AddN against
// references computed here by naive index loops: every dtype, broadcasting, empty and rank-0
// tensors, strings, NaN, buffer forwarding, and the INVALID_ARGUMENT cases.

#include <cmath>
#include <cstdint>
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
using test::cwise::ExpectNear;
using test::cwise::Values;

// Index of output element `lin` (of shape `out`) in an input of shape `in` broadcast to it.
int64_t BroadcastIndex(const TensorShape& out, const TensorShape& in, int64_t lin) {
  const int r = out.dims();
  int64_t idx = 0, mul = 1;
  for (int d = r - 1; d >= 0; --d) {
    const int64_t i = lin % out.dim_size(d);
    lin /= out.dim_size(d);
    const int k = d - (r - in.dims());
    if (k < 0) continue;
    if (in.dim_size(k) != 1) idx += i * mul;
    mul *= in.dim_size(k);
  }
  return idx;
}

std::vector<double> Bools(const TensorShape& s, int seed) {
  std::vector<double> v(static_cast<size_t>(s.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = ((i * 7 + seed * 3) % 5) < 2;
  return v;
}

TEST(CwiseSelectTest, SelectV2BroadcastsAllThreeEveryDtype) {
  struct Case {
    TensorShape c, t, e, out;
  };
  const std::vector<Case> cases = {
      {TensorShape({2, 3}), TensorShape({2, 3}), TensorShape({2, 3}), TensorShape({2, 3})},
      {TensorShape({}), TensorShape({2, 3}), TensorShape({3}), TensorShape({2, 3})},
      {TensorShape({2, 1}), TensorShape({1, 3}), TensorShape({}), TensorShape({2, 3})},
      {TensorShape({4, 1, 1}), TensorShape({1, 3, 1}), TensorShape({2}), TensorShape({4, 3, 2})},
      {TensorShape({0, 1}), TensorShape({3}), TensorShape({1}), TensorShape({0, 3})},
      {TensorShape({}), TensorShape({}), TensorShape({}), TensorShape({})},
  };
  std::vector<DataType> types = {DT_HALF,  DT_BFLOAT16, DT_FLOAT,  DT_DOUBLE, DT_INT8,
                                 DT_INT16, DT_INT32,    DT_INT64,  DT_UINT8,  DT_UINT16,
                                 DT_UINT32, DT_UINT64,  DT_BOOL};
  for (DataType dt : types) {
    for (const Case& k : cases) {
      const std::vector<double> cv = Bools(k.c, 1);
      std::vector<double> tv = Values(DT_INT32, k.t.num_elements(), 1, 50, 2);
      std::vector<double> ev = Values(DT_INT32, k.e.num_elements(), 51, 99, 3);
      if (dt == DT_BOOL) {
        tv.assign(tv.size(), 1);
        ev.assign(ev.size(), 0);
      }
      auto z = KernelRunner("SelectV2")
                   .Input(FromDoubles(DT_BOOL, k.c, cv))
                   .Input(FromDoubles(dt, k.t, tv))
                   .Input(FromDoubles(dt, k.e, ev))
                   .RunOne();
      const std::string what = DataTypeString(dt) + " " + k.c.DebugString() + " " +
                               k.t.DebugString() + " " + k.e.DebugString();
      ASSERT_TRUE(z.ok()) << what << ": " << z.status();
      ASSERT_EQ(z->shape(), k.out) << what;
      const std::vector<double> got = ToDoubles(*z);
      for (int64_t i = 0; i < k.out.num_elements(); ++i) {
        const bool c = cv[BroadcastIndex(k.out, k.c, i)] != 0;
        const double want = c ? tv[BroadcastIndex(k.out, k.t, i)] : ev[BroadcastIndex(k.out, k.e, i)];
        EXPECT_EQ(got[i], want) << what << " at " << i;
      }
    }
  }
  auto bad = KernelRunner("SelectV2")
                 .Input(Tensor(DT_BOOL, TensorShape({2})))
                 .Input(Tensor(DT_FLOAT, TensorShape({3})))
                 .Input(Tensor(DT_FLOAT, TensorShape({})))
                 .RunOne();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("Incompatible shapes"), std::string::npos);
}

TEST(CwiseSelectTest, SelectV1ConditionShapes) {
  const std::vector<float> t = {1, 2, 3, 4, 5, 6}, e = {-1, -2, -3, -4, -5, -6};
  auto run = [&](Tensor cond, TensorShape shape) {
    return KernelRunner("Select")
        .Input(std::move(cond))
        .Input(AsTensor<float>(t, shape))
        .Input(AsTensor<float>(e, shape))
        .RunOne();
  };
  // Same shape: elementwise.
  auto z = run(BoolTensor({true, false, false, true, true, false}, TensorShape({2, 3})),
               TensorShape({2, 3}));
  ASSERT_TRUE(z.ok()) << z.status();
  const std::vector<float> w1 = {1, -2, -3, 4, 5, -6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(z->flat<float>()[i], w1[i]);
  // Vector of the first dim: whole rows.
  z = run(BoolTensor({false, true}, TensorShape({2})), TensorShape({2, 3}));
  ASSERT_TRUE(z.ok()) << z.status();
  const std::vector<float> w2 = {-1, -2, -3, 4, 5, 6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(z->flat<float>()[i], w2[i]);
  z = run(BoolTensor({true, false, true}, TensorShape({3})), TensorShape({3, 2, 1}));
  ASSERT_TRUE(z.ok()) << z.status();
  const std::vector<float> w3 = {1, 2, -3, -4, 5, 6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(z->flat<float>()[i], w3[i]);
  // Scalar: all of t or all of e.
  z = run(BoolTensor({false}, TensorShape({})), TensorShape({6}));
  ASSERT_TRUE(z.ok());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(z->flat<float>()[i], e[i]);
  // Errors: condition neither; t/e shapes differ; a vector condition of the wrong length.
  for (const auto& [cs, ts, es] : std::vector<std::tuple<TensorShape, TensorShape, TensorShape>>{
           {TensorShape({3}), TensorShape({2, 3}), TensorShape({2, 3})},
           {TensorShape({2, 1}), TensorShape({2, 3}), TensorShape({2, 3})},
           {TensorShape({2}), TensorShape({2, 3}), TensorShape({3})},
           {TensorShape({6}), TensorShape({6}), TensorShape({1})},
           {TensorShape({1, 6}), TensorShape({6}), TensorShape({6})}}) {
    auto err = KernelRunner("Select")
                   .Input(Tensor(DT_BOOL, cs))
                   .Input(Tensor(DT_FLOAT, ts))
                   .Input(Tensor(DT_FLOAT, es))
                   .RunOne();
    ASSERT_FALSE(err.ok()) << cs.DebugString() << ts.DebugString() << es.DebugString();
    EXPECT_EQ(err.status().code(), absl::StatusCode::kInvalidArgument);
  }
  // Strings, and an empty t.
  auto s = KernelRunner("Select")
               .Input(BoolTensor({true, false}, TensorShape({2})))
               .Input(AsTensor<std::string>({"a", "b"}, TensorShape({2})))
               .Input(AsTensor<std::string>({"x", "y"}, TensorShape({2})))
               .RunOne();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->flat<std::string>()[0], "a");
  EXPECT_EQ(s->flat<std::string>()[1], "y");
  auto empty = KernelRunner("Select")
                   .Input(Tensor(DT_BOOL, TensorShape({0})))
                   .Input(Tensor(DT_INT32, TensorShape({0, 4})))
                   .Input(Tensor(DT_INT32, TensorShape({0, 4})))
                   .RunOne();
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape(), TensorShape({0, 4}));
  // Shape function.
  KernelRunner r("Select");
  r.Attr("T", DT_FLOAT);
  auto sh = r.InferShapes(
      {PartialTensorShape({2}), PartialTensorShape({2, -1}), PartialTensorShape({-1, 3})});
  ASSERT_TRUE(sh.ok()) << sh.status();
  EXPECT_EQ((*sh)[0], PartialTensorShape({2, 3}));
  EXPECT_FALSE(r.InferShapes({PartialTensorShape({3}), PartialTensorShape({2, 3}),
                              PartialTensorShape({2, 3})})
                   .ok());
}

TEST(CwiseSelectTest, ClipByValueEveryDtypeAndBroadcastBounds) {
  const std::vector<DataType> types = AllowedTypes("ClipByValue");
  EXPECT_GE(types.size(), 12u);
  struct Case {
    TensorShape t, lo, hi;
  };
  const std::vector<Case> cases = {
      {TensorShape({3, 4}), TensorShape({}), TensorShape({})},
      {TensorShape({3, 4}), TensorShape({3, 4}), TensorShape({3, 4})},
      {TensorShape({3, 4}), TensorShape({4}), TensorShape({3, 1})},
      {TensorShape({}), TensorShape({}), TensorShape({})},
      {TensorShape({0, 4}), TensorShape({}), TensorShape({4})},
  };
  for (DataType dt : types) {
    for (const Case& k : cases) {
      std::vector<double> tv = Values(DT_INT32, k.t.num_elements(), 0, 60, 1);
      std::vector<double> lv = Values(DT_INT32, k.lo.num_elements(), 5, 25, 2);
      std::vector<double> hv = Values(DT_INT32, k.hi.num_elements(), 30, 50, 3);
      auto z = KernelRunner("ClipByValue")
                   .Input(FromDoubles(dt, k.t, tv))
                   .Input(FromDoubles(dt, k.lo, lv))
                   .Input(FromDoubles(dt, k.hi, hv))
                   .RunOne();
      const std::string what = DataTypeString(dt) + " " + k.t.DebugString();
      ASSERT_TRUE(z.ok()) << what << ": " << z.status();
      ASSERT_EQ(z->shape(), k.t);
      const std::vector<double> got = ToDoubles(*z);
      for (int64_t i = 0; i < k.t.num_elements(); ++i) {
        const double lo = lv[BroadcastIndex(k.t, k.lo, i)], hi = hv[BroadcastIndex(k.t, k.hi, i)];
        EXPECT_EQ(got[i], std::max(std::min(tv[i], hi), lo)) << what << " at " << i;
      }
    }
  }
  // NaN stays NaN; min > max gives min (max(min(t, hi), lo)).
  auto n = KernelRunner("ClipByValue")
               .Input(AsTensor<float>({NAN, 5, -5}, TensorShape({3})))
               .Input(AsTensor<float>({2}, TensorShape({})))
               .Input(AsTensor<float>({1}, TensorShape({})))
               .RunOne();
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(std::isnan(n->flat<float>()[0]));
  EXPECT_EQ(n->flat<float>()[1], 2.f);
  EXPECT_EQ(n->flat<float>()[2], 2.f);
  // Bounds that would enlarge t, or do not broadcast: INVALID_ARGUMENT.
  for (const TensorShape& bad : {TensorShape({2, 3, 4}), TensorShape({5}), TensorShape({2, 4})}) {
    auto e = KernelRunner("ClipByValue")
                 .Input(Tensor(DT_FLOAT, TensorShape({3, 4})))
                 .Input(Tensor(DT_FLOAT, bad))
                 .Input(AsTensor<float>({1}, TensorShape({})))
                 .RunOne();
    ASSERT_FALSE(e.ok()) << bad.DebugString();
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  }
  KernelRunner r("ClipByValue");
  r.Attr("T", DT_FLOAT);
  auto sh = r.InferShapes({PartialTensorShape({3, -1}), PartialTensorShape({}),
                           PartialTensorShape({4})});
  ASSERT_TRUE(sh.ok()) << sh.status();
  EXPECT_EQ((*sh)[0], PartialTensorShape({3, -1}));
  EXPECT_FALSE(r.InferShapes({PartialTensorShape({3, 4}), PartialTensorShape({2, 3, 4}),
                              PartialTensorShape({})})
                   .ok());
}

// ---------------------------------------------------------------- AddN

TEST(CwiseAddNTest, SumsEveryDtypeAgainstFloat64) {
  const std::vector<DataType> types = AllowedTypes("AddN");
  EXPECT_GE(types.size(), 12u);
  for (DataType dt : types) {
    for (int n : {1, 2, 3, 4, 7}) {
      for (const TensorShape& shape :
           {TensorShape({}), TensorShape({5}), TensorShape({3, 1000}), TensorShape({0, 3})}) {
        KernelRunner r("AddN");
        std::vector<double> want(static_cast<size_t>(shape.num_elements()), 0.0);
        for (int k = 0; k < n; ++k) {
          Tensor x = FromDoubles(dt, shape, Values(dt, shape.num_elements(), 0, 9, k));
          const std::vector<double> xv = ToDoubles(x);
          for (size_t i = 0; i < want.size(); ++i) want[i] += xv[i];
          r.Input(std::move(x));
        }
        auto z = r.RunOne();
        const std::string what =
            DataTypeString(dt) + " N=" + std::to_string(n) + " " + shape.DebugString();
        ASSERT_TRUE(z.ok()) << what << ": " << z.status();
        EXPECT_EQ(z->shape(), shape);
        // half/bfloat16 accumulate in float and round once: within the dtype's tolerance.
        ExpectNear(dt, ToDoubles(*z), want, what);
      }
    }
  }
}

TEST(CwiseAddNTest, ForwardingWrapAroundAndErrors) {
  // An exclusive input's buffer becomes the output, also when it is not the first input.
  Tensor shared = FromDoubles(DT_FLOAT, TensorShape({4096 + 3}), Values(DT_FLOAT, 4099, -1, 1, 1));
  Tensor mine = FromDoubles(DT_FLOAT, TensorShape({4096 + 3}), Values(DT_FLOAT, 4099, -1, 1, 2));
  Tensor third = FromDoubles(DT_FLOAT, TensorShape({4096 + 3}), Values(DT_FLOAT, 4099, -1, 1, 3));
  const void* buf = mine.raw_data();
  const std::vector<double> a = ToDoubles(shared), b = ToDoubles(mine), c = ToDoubles(third);
  Tensor third_copy = third;  // keep `third` shared too
  auto z = KernelRunner("AddN").Input(shared).Input(std::move(mine)).Input(third).RunOne();
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->raw_data(), buf);
  std::vector<double> want(a.size());
  for (size_t i = 0; i < a.size(); ++i) want[i] = a[i] + b[i] + c[i];
  ExpectNear(DT_FLOAT, ToDoubles(*z), want, "AddN forwarded");
  EXPECT_EQ(ToDoubles(shared), a);  // shared inputs untouched
  EXPECT_EQ(ToDoubles(third_copy), c);

  const int32_t mx = std::numeric_limits<int32_t>::max();
  auto w = KernelRunner("AddN")
               .Input(AsTensor<int32_t>({mx, -5}, TensorShape({2})))
               .Input(AsTensor<int32_t>({1, 2}, TensorShape({2})))
               .Input(AsTensor<int32_t>({mx, 3}, TensorShape({2})))
               .RunOne();
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->flat<int32_t>()[0], static_cast<int32_t>(0u + mx + 1u + mx));
  EXPECT_EQ(w->flat<int32_t>()[1], 0);

  auto err = KernelRunner("AddN")
                 .Input(Tensor(DT_FLOAT, TensorShape({2, 3})))
                 .Input(Tensor(DT_FLOAT, TensorShape({2, 3})))
                 .Input(Tensor(DT_FLOAT, TensorShape({3})))
                 .RunOne();
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(err.status().message().find("Input 0: [2,3] != input 2: [3]"), std::string::npos)
      << err.status();
  KernelRunner r("AddN");
  r.Attr("T", DT_FLOAT).Attr("N", int64_t{3});
  auto sh = r.InferShapes(
      {PartialTensorShape({-1, 3}), PartialTensorShape(), PartialTensorShape({2, -1})});
  ASSERT_TRUE(sh.ok()) << sh.status();
  EXPECT_EQ((*sh)[0], PartialTensorShape({2, 3}));
  EXPECT_FALSE(r.InferShapes({PartialTensorShape({2}), PartialTensorShape({3}),
                              PartialTensorShape({2})})
                   .ok());
}

TEST(CwiseAddNTest, LargeOnAThreadPool) {
  test::TestCpuDevice device(4);
  const int64_t n = 1 << 20;
  KernelRunner r("AddN");
  r.OnDevice(&device);
  std::vector<double> want(n, 0.0);
  for (int k = 0; k < 5; ++k) {
    Tensor x = FromDoubles(DT_DOUBLE, TensorShape({n}), Values(DT_DOUBLE, n, -10, 10, k));
    const std::vector<double> xv = ToDoubles(x);
    for (int64_t i = 0; i < n; ++i) want[i] += xv[i];
    r.Input(std::move(x));
  }
  auto z = r.RunOne();
  ASSERT_TRUE(z.ok());
  ExpectNear(DT_DOUBLE, ToDoubles(*z), want, "AddN threaded");
}

}  // namespace
}  // namespace tensorflux
