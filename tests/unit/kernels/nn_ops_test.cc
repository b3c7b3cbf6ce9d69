// BiasAdd, BiasAddGrad, Softmax, LogSoftmax and L2Loss (ops/nn_ops.cc, kernels/cpu/bias_add_op.cc,
// softmax_op.cc, l2loss_op.cc) against float64 loops: NHWC and NCHW, every dtype, empty tensors,
// logits of +-1e4, the intra-op-parallel paths (bit-identical to one thread), and bad inputs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace tensorflux {
namespace {

using test::AsTensor;
using test::FromDoubles;
using test::KernelRunner;
using test::RoundTo;
using test::ToDoubles;
using ::testing::HasSubstr;

// Deterministic values in [lo, hi) (integers for integer dtypes).
std::vector<double> Values(DataType dt, int64_t n, uint32_t seed, double lo = -3, double hi = 3) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 7u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * ((s >> 8) / double(1 << 24));
    if (DataTypeIsInteger(dt)) x = std::floor(x);
  }
  return v;
}

// Relative tolerance of one rounding to dt (plus accumulated float error for sums of n terms).
double Tol(DataType dt, int64_t n = 1) {
  switch (dt) {
    case DT_DOUBLE: return 1e-13 * (n + 1);
    case DT_FLOAT: return 1e-6 * (n + 1);
    case DT_HALF: return 2e-3;
    case DT_BFLOAT16: return 1.6e-2;
    default: return 0;
  }
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    if (!(std::fabs(got[i] - want[i]) <= tol * std::max(1.0, std::fabs(want[i])))) {
      ++bad;
      ADD_FAILURE() << what << " at " << i << ": got " << got[i] << ", want " << want[i];
    }
  }
}

using test::ExpectInvalid;

// The channel index of flat element i of `shape` in the data format.
int64_t ChannelOf(const TensorShape& shape, int64_t i, bool nchw) {
  std::vector<int64_t> idx(shape.dims());
  for (int d = shape.dims() - 1; d >= 0; --d) {
    idx[d] = i % shape.dim_size(d);
    i /= shape.dim_size(d);
  }
  return nchw ? idx[1] : idx.back();
}

// ---------------------------------------------------------------- BiasAdd / BiasAddGrad

void CheckBiasAdd(DataType dt, const TensorShape& shape, bool nchw, int threads = 1) {
  const std::string what = absl::StrCat(DataTypeString(dt), " ", shape.DebugString(),
                                        nchw ? " NCHW" : " NHWC", " threads=", threads);
  const int64_t c = shape.dim_size(nchw ? 1 : shape.dims() - 1);
  Tensor value = FromDoubles(dt, shape, Values(dt, shape.num_elements(), 3));
  Tensor bias = FromDoubles(dt, TensorShape({c}), Values(dt, c, 5));
  test::TestCpuDevice device(threads);
  KernelRunner r("BiasAdd");
  r.Attr("data_format", nchw ? "NCHW" : "NHWC").Input(value).Input(bias).OnDevice(&device);
  auto out = r.RunOne();
  ASSERT_TRUE(out.ok()) << what << ": " << out.status();
  ASSERT_EQ(out->shape(), shape) << what;
  const std::vector<double> v = ToDoubles(value), b = ToDoubles(bias);
  std::vector<double> want(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    want[i] = RoundTo(dt, v[i] + b[ChannelOf(shape, static_cast<int64_t>(i), nchw)]);
  }
  ExpectNear(ToDoubles(*out), want, Tol(dt), what);

  // BiasAddGrad of the same tensor: per-channel sums.
  KernelRunner g("BiasAddGrad");
  g.Attr("data_format", nchw ? "NCHW" : "NHWC").Input(value).OnDevice(&device);
  auto sums = g.RunOne();
  ASSERT_TRUE(sums.ok()) << what << ": " << sums.status();
  ASSERT_EQ(sums->shape(), TensorShape({c})) << what;
  std::vector<double> want_sums(static_cast<size_t>(c), 0.0);
  for (size_t i = 0; i < v.size(); ++i) {
    want_sums[ChannelOf(shape, static_cast<int64_t>(i), nchw)] += v[i];
  }
  for (double& s : want_sums) s = RoundTo(dt, s);
  ExpectNear(ToDoubles(*sums), want_sums, Tol(dt), what + " BiasAddGrad");
}

TEST(BiasAddOpTest, MatchesFloat64LoopsNhwcAndNchw) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT32, DT_INT64, DT_INT8}) {
    CheckBiasAdd(dt, TensorShape({2, 3}), false);
    CheckBiasAdd(dt, TensorShape({2, 3, 4, 5}), false);
    CheckBiasAdd(dt, TensorShape({2, 3, 4, 5}), true);
    CheckBiasAdd(dt, TensorShape({3, 2, 7}), true);
    CheckBiasAdd(dt, TensorShape({1, 2, 2, 3, 4}), true);  // NCDHW
  }
}

TEST(BiasAddOpTest, EmptyTensors) {
  CheckBiasAdd(DT_FLOAT, TensorShape({0, 3}), false);     // empty batch
  CheckBiasAdd(DT_FLOAT, TensorShape({2, 3, 0, 4}), true);
  CheckBiasAdd(DT_DOUBLE, TensorShape({4, 0}), false);    // zero channels: empty bias
  // Empty, with spatial dims whose product overflows int64 (the zero comes first).
  const int64_t big = int64_t{3} << 40;
  for (bool nchw : {false, true}) {
    const TensorShape s = nchw ? TensorShape({0, 3, big, big}) : TensorShape({0, big, big, 3});
    ASSERT_EQ(s.num_elements(), 0);
    auto sums = KernelRunner("BiasAddGrad")
                    .Attr("data_format", nchw ? "NCHW" : "NHWC")
                    .Input(Tensor(DT_FLOAT, s))
                    .RunOne();
    ASSERT_TRUE(sums.ok()) << sums.status();
    EXPECT_EQ(ToDoubles(*sums), std::vector<double>(3, 0.0));
    auto out = KernelRunner("BiasAdd")
                   .Attr("data_format", nchw ? "NCHW" : "NHWC")
                   .Input(Tensor(DT_FLOAT, s))
                   .Input(AsTensor<float>({1, 2, 3}, {3}))
                   .RunOne();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->shape(), s);
  }
}

TEST(BiasAddOpTest, ParallelPathsAndBitIdenticalSums) {
  for (bool nchw : {false, true}) {
    CheckBiasAdd(DT_FLOAT, TensorShape({64, 16, 9, 8}), nchw, 4);
    // An MLP layer's [batch, 256] (inline) and a 2-D shape sharded over the pool: the packet
    // channel loop (inner == 1) with a channel count that leaves a scalar tail (259).
    CheckBiasAdd(DT_FLOAT, TensorShape({128, 256}), false, 4);
    CheckBiasAdd(DT_FLOAT, TensorShape({1000, 259}), false, 4);
    CheckBiasAdd(DT_DOUBLE, TensorShape({1000, 259}), false, 4);
    // BiasAddGrad's sum is the same bits for 1 and 4 threads.
    const TensorShape shape({128, 8, 16, 10});
    Tensor value = FromDoubles(DT_FLOAT, shape, Values(DT_FLOAT, shape.num_elements(), 9));
    std::vector<std::vector<double>> results;
    for (int threads : {1, 4}) {
      test::TestCpuDevice device(threads);
      auto out = KernelRunner("BiasAddGrad")
                     .Attr("data_format", nchw ? "NCHW" : "NHWC")
                     .Input(value)
                     .OnDevice(&device)
                     .RunOne();
      ASSERT_TRUE(out.ok()) << out.status();
      results.push_back(ToDoubles(*out));
    }
    EXPECT_EQ(results[0], results[1]);
  }
}

TEST(BiasAddOpTest, IntegerOverflowWraps) {
  auto out = KernelRunner("BiasAdd")
                 .Input(AsTensor<int32_t>({2147483647, 1}, {1, 2}))
                 .Input(AsTensor<int32_t>({1, 1}, {2}))
                 .RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->data<int32_t>()[0], -2147483647 - 1);
  EXPECT_EQ(out->data<int32_t>()[1], 2);
}

TEST(BiasAddOpTest, BadInputs) {
  auto f = [](std::vector<int64_t> dims) {
    TensorShape s(dims);
    return FromDoubles(DT_FLOAT, s, std::vector<double>(s.num_elements(), 1.0));
  };
  auto run = [](Tensor v, Tensor b, const char* fmt = "NHWC") {
    return KernelRunner("BiasAdd", "my_bias").Attr("data_format", fmt).Input(v).Input(b).Run();
  };
  ExpectInvalid(run(f({3}), f({3})).status(), "at least 2-D");
  ExpectInvalid(run(f({2, 3}), f({1, 3})).status(), "bias must be 1-D");
  ExpectInvalid(run(f({2, 3}), f({4})).status(), "as many biases as the channel dimension");
  ExpectInvalid(run(f({2, 3, 4}), f({4}), "NCHW").status(), "my_bias");
  EXPECT_TRUE(run(f({2, 3, 4}), f({3}), "NCHW").ok());
  ExpectInvalid(run(f({2, 3}), f({3}), "NDHWC").status(), "data_format");
  auto g = KernelRunner("BiasAddGrad", "my_grad").Input(f({5})).Run();
  ExpectInvalid(g.status(), "my_grad");
  ExpectInvalid(KernelRunner("BiasAdd", "b").Input(f({2, 2})).Input(
                    FromDoubles(DT_DOUBLE, TensorShape({2}), {1, 2})).Run().status(), "");
}

TEST(BiasAddOpTest, ShapeFunctions) {
  KernelRunner r("BiasAdd", "ba");
  r.Input(Tensor(DT_FLOAT, TensorShape({1, 1}))).Input(Tensor(DT_FLOAT, TensorShape({1})));
  auto s = r.InferShapes({PartialTensorShape({-1, 4, 4, -1}), PartialTensorShape({3})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, 4, 4, 3}));
  s = r.InferShapes({PartialTensorShape({2, 5}), PartialTensorShape({3})});
  ExpectInvalid(s.status(), "Dimensions must be equal, but are 5 and 3");
  s = r.InferShapes({PartialTensorShape({5}), PartialTensorShape({5})});
  ExpectInvalid(s.status(), "at least rank 2");

  KernelRunner n("BiasAdd", "ba");
  n.Attr("data_format", "NCHW");
  n.Input(Tensor(DT_FLOAT, TensorShape({1, 1}))).Input(Tensor(DT_FLOAT, TensorShape({1})));
  s = n.InferShapes({PartialTensorShape({2, -1, 4, 4}), PartialTensorShape({3})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 3, 4, 4}));
  s = n.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({3})});
  ExpectInvalid(s.status(), "at least rank 3");

  KernelRunner g("BiasAddGrad");
  g.Attr("data_format", "NCHW").Input(Tensor(DT_FLOAT, TensorShape({1, 1})));
  s = g.InferShapes({PartialTensorShape({8, 6, 4, 4})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({6}));
}

// ---------------------------------------------------------------- Softmax / LogSoftmax

// Float64 softmax and log-softmax of each last-axis row, per element from its own differences
// d_k = x_k - x_j: log_softmax_j = -log(sum_k exp(d_k)), in long double with the largest d_k
// factored out (so differences of 2e4 do not overflow); softmax_j = exp(log_softmax_j).
// Per element rather than the kernel's one log-sum-exp per row.
void ReferenceSoftmax(const std::vector<double>& x, int64_t n, std::vector<double>* sm,
                      std::vector<double>* lsm) {
  sm->assign(x.size(), 0);
  lsm->assign(x.size(), 0);
  for (size_t r = 0; n > 0 && r + n <= x.size(); r += n) {
    for (int64_t j = 0; j < n; ++j) {
      long double big = 0;
      for (int64_t k = 0; k < n; ++k) big = std::max<long double>(big, x[r + k] - x[r + j]);
      long double s = 0;
      for (int64_t k = 0; k < n; ++k) {
        s += std::exp(static_cast<long double>(x[r + k] - x[r + j]) - big);
      }
      const long double log_p = -(big + std::log(s));
      (*sm)[r + j] = static_cast<double>(std::exp(log_p));
      (*lsm)[r + j] = static_cast<double>(log_p);
    }
  }
}

void CheckSoftmax(DataType dt, const TensorShape& shape, const std::vector<double>& values,
                  int threads = 1) {
  const std::string what = absl::StrCat(DataTypeString(dt), " ", shape.DebugString());
  Tensor x = FromDoubles(dt, shape, values);
  const int64_t n = shape.dim_size(shape.dims() - 1);
  std::vector<double> sm, lsm;
  ReferenceSoftmax(ToDoubles(x), n, &sm, &lsm);
  test::TestCpuDevice device(threads);
  for (bool log : {false, true}) {
    auto out = KernelRunner(log ? "LogSoftmax" : "Softmax").Input(x).OnDevice(&device).RunOne();
    ASSERT_TRUE(out.ok()) << what << ": " << out.status();
    ASSERT_EQ(out->shape(), shape);
    // Log-softmax values scale with |x|: the error is relative to the row's largest logit.
    const double scale = values.empty() ? 1 : std::fabs(*std::max_element(
        values.begin(), values.end(), [](double a, double b) { return std::fabs(a) < std::fabs(b); }));
    ExpectNear(ToDoubles(*out), log ? lsm : sm,
               Tol(dt, n) * (log ? std::max(1.0, scale) : 1.0), what + (log ? " log" : ""));
  }
}

TEST(SoftmaxOpTest, MatchesFloat64Reference) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
    CheckSoftmax(dt, TensorShape({5}), Values(dt, 5, 1));                 // rank 1
    CheckSoftmax(dt, TensorShape({3, 7}), Values(dt, 21, 2));
    CheckSoftmax(dt, TensorShape({2, 3, 4}), Values(dt, 24, 3, -20, 20));
    CheckSoftmax(dt, TensorShape({4, 1}), Values(dt, 4, 4));              // one class: 1 and 0
  }
  CheckSoftmax(DT_FLOAT, TensorShape({300, 50}), Values(DT_FLOAT, 15000, 5), 4);  // parallel
}

TEST(SoftmaxOpTest, StableForHugeLogits) {
  // exp(1e4) overflows float and double: only the max-subtracted form gets these right.
  const std::vector<double> v = {1e4, -1e4, 0, 1e4 - 1, -1e4, 1e4, 1e4, -1e4};
  for (DataType dt : {DT_FLOAT, DT_DOUBLE}) CheckSoftmax(dt, TensorShape({2, 4}), v);
  auto out = KernelRunner("Softmax").Input(AsTensor<float>({1e4f, -1e4f}, {1, 2})).RunOne();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->data<float>()[0], 1.0f);
  EXPECT_EQ(out->data<float>()[1], 0.0f);
}

TEST(SoftmaxOpTest, EmptyAndBadInputs) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (TensorShape s : {TensorShape({0, 5}), TensorShape({3, 0}), TensorShape({0})}) {
      auto out = KernelRunner(op).Input(Tensor(DT_FLOAT, s)).RunOne();
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->shape(), s);
    }
    ExpectInvalid(KernelRunner(op, "sm").Input(Tensor::Scalar<float>(1)).Run().status(),
                  "sm");
    EXPECT_FALSE(KernelRunner(op).Input(AsTensor<int32_t>({1, 2}, {2})).Run().ok());
    KernelRunner r(op, "sm");
    r.Input(Tensor(DT_FLOAT, TensorShape({1})));
    ExpectInvalid(r.InferShapes({PartialTensorShape::Scalar()}).status(), "at least rank 1");
  }
}

// ---------------------------------------------------------------- L2Loss

TEST(L2LossOpTest, MatchesFloat64Reference) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
    for (TensorShape s : {TensorShape({}), TensorShape({7}), TensorShape({3, 4, 5}),
                          TensorShape({0, 3})}) {
      Tensor t = FromDoubles(dt, s, Values(dt, s.num_elements(), 11));
      auto out = KernelRunner("L2Loss").Input(t).RunOne();
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ(out->shape(), TensorShape({}));
      double want = 0;
      for (double v : ToDoubles(t)) want += v * v / 2;
      ExpectNear(ToDoubles(*out), {RoundTo(dt, want)}, Tol(dt), DataTypeString(dt));
    }
  }
  // Big and small values: squares beyond the input type's range are summed in double.
  auto big = KernelRunner("L2Loss").Input(AsTensor<double>({1e150, 1e150}, {2})).RunOne();
  ASSERT_TRUE(big.ok());
  EXPECT_DOUBLE_EQ(big->data<double>()[0], 1e300);
  auto tiny = KernelRunner("L2Loss").Input(AsTensor<float>({1e-20f, 1e-20f}, {2})).RunOne();
  ASSERT_TRUE(tiny.ok());
  EXPECT_NEAR(tiny->data<float>()[0], 1e-40f, 3e-45f);  // a float subnormal, not zero
}

TEST(L2LossOpTest, ParallelSumIsBitIdentical) {
  const int64_t n = 200000;
  Tensor t = FromDoubles(DT_FLOAT, TensorShape({n}), Values(DT_FLOAT, n, 13));
  std::vector<double> got;
  for (int threads : {1, 3}) {
    test::TestCpuDevice device(threads);
    auto out = KernelRunner("L2Loss").Input(t).OnDevice(&device).RunOne();
    ASSERT_TRUE(out.ok()) << out.status();
    got.push_back(out->data<float>()[0]);
  }
  EXPECT_EQ(got[0], got[1]);
  double want = 0;
  for (double v : ToDoubles(t)) want += v * v / 2;
  EXPECT_NEAR(got[0], want, 1e-6 * want);
  EXPECT_FALSE(KernelRunner("L2Loss").Input(AsTensor<int32_t>({1}, {1})).Run().ok());
}

}  // namespace
}  // namespace tensorflux
