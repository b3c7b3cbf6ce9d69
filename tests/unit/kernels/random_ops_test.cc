// Random kernels: the exact Philox stream layout (recomputed here from Philox4x32 directly),
// determinism across runs and intra-op thread counts, statistics of 1e6 samples against the
// distributions' moments (5 standard errors), truncation, integer range and a chi-square test,
// RandomShuffle permutations, and every bad input.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_test_util.h"
#include "tensorflux/core/philox.h"
#include "tensorflux/gradients/gradients.h"

namespace tensorflux {
namespace {

using random::Philox4x32;
using random::PhiloxWordStream;
using test::AsTensor;
using test::KernelRunner;
using test::TestCpuDevice;
using test::ToDoubles;

// One kernel instance, computed several times (KernelRunner builds a fresh kernel per Run).
class RandomKernel {
 public:
  RandomKernel(const std::string& op, std::vector<Tensor> inputs, int64_t seed, int64_t seed2,
               DataType dtype = DT_INVALID, int threads = 1)
      : device_(threads), inputs_(std::move(inputs)) {
    KernelRunner r(op, "rnd");
    for (const Tensor& t : inputs_) r.Input(t);
    r.Attr("seed", seed).Attr("seed2", seed2);
    if (dtype != DT_INVALID) r.Attr("dtype", dtype);
    status_ = r.InferTypeAttrs();
    if (status_.ok()) status_ = CreateOpKernel(&device_, r.def(), &kernel_);
  }

  const Status& status() const { return status_; }

  StatusOr<Tensor> Run() {
    TX_RETURN_IF_ERROR(status_);
    std::vector<Tensor> inputs = inputs_;
    OpKernelContext::Params params;
    params.op_kernel = kernel_.get();
    params.device = &device_;
    params.inputs = inputs.data();
    params.num_inputs = static_cast<int>(inputs.size());
    CancellationManager cm;
    params.cancellation_manager = &cm;
    OpKernelContext ctx(&params);
    kernel_->Compute(&ctx);
    TX_RETURN_IF_ERROR(ctx.status());
    return ctx.outputs()[0];
  }

 private:
  TestCpuDevice device_;
  std::vector<Tensor> inputs_;
  std::unique_ptr<OpKernel> kernel_;
  Status status_;
};

Tensor Shape(std::vector<int64_t> dims) {
  return AsTensor<int64_t>(dims, TensorShape({static_cast<int64_t>(dims.size())}));
}
Tensor Shape32(std::vector<int32_t> dims) {
  return AsTensor<int32_t>(dims, TensorShape({static_cast<int64_t>(dims.size())}));
}

StatusOr<Tensor> RunOnce(const std::string& op, std::vector<Tensor> inputs, int64_t seed,
                         int64_t seed2, DataType dtype = DT_INVALID, int threads = 1) {
  RandomKernel k(op, std::move(inputs), seed, seed2, dtype, threads);
  return k.Run();
}

bool BitwiseEqual(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0;
}

const DataType kFloatTypes[] = {DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE};
const char* const kFloatOps[] = {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"};

// ---------------------------------------------------------------- stream layout

TEST(RandomOpsTest, UniformFloatIsTheSeededPhiloxStream) {
  RandomKernel k("RandomUniform", {Shape({3, 7})}, 42, 17, DT_FLOAT);
  auto first = k.Run();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->shape(), TensorShape({3, 7}));
  PhiloxWordStream s(Philox4x32::FromSeeds(42, 17));
  const float* p = first->data<float>();
  for (int i = 0; i < 21; ++i) {
    const uint32_t w = s.Next32();
    EXPECT_EQ(p[i], (w & 0x7fffff) * 0x1p-23f) << i;
  }
  // The second run starts 256 counters per output later: 21 * 256.
  auto second = k.Run();
  ASSERT_TRUE(second.ok());
  Philox4x32 gen = Philox4x32::FromSeeds(42, 17);
  gen.Skip(21 * 256);
  PhiloxWordStream s2(gen);
  for (int i = 0; i < 21; ++i) {
    EXPECT_EQ(second->data<float>()[i], (s2.Next32() & 0x7fffff) * 0x1p-23f) << i;
  }
}

TEST(RandomOpsTest, UniformDoubleUsesTwoWordsPerValue) {
  auto out = RunOnce("RandomUniform", {Shape({5})}, 3, 4, DT_DOUBLE);
  ASSERT_TRUE(out.ok()) << out.status();
  PhiloxWordStream s(Philox4x32::FromSeeds(3, 4));
  for (int i = 0; i < 5; ++i) {
    const uint64_t hi = s.Next32() & 0xfffff;
    const uint64_t lo = s.Next32();
    EXPECT_EQ(out->data<double>()[i], static_cast<double>((hi << 32) | lo) * 0x1p-52) << i;
  }
}

TEST(RandomOpsTest, NormalIsBoxMullerOfConsecutiveWords) {
  auto out = RunOnce("RandomStandardNormal", {Shape({7})}, 5, 6, DT_DOUBLE);
  ASSERT_TRUE(out.ok()) << out.status();
  PhiloxWordStream s(Philox4x32::FromSeeds(5, 6));
  for (int i = 0; i < 7; i += 2) {
    uint32_t w[4];
    for (uint32_t& x : w) x = s.Next32();
    const double u1 = std::max(((uint64_t{w[0] & 0xfffff} << 32) | w[1]) * 0x1p-52, 1e-7);
    const double th = 2 * M_PI * (((uint64_t{w[2] & 0xfffff} << 32) | w[3]) * 0x1p-52);
    const double r = std::sqrt(-2 * std::log(u1));
    EXPECT_NEAR(out->data<double>()[i], r * std::sin(th), 1e-12) << i;
    if (i + 1 < 7) EXPECT_NEAR(out->data<double>()[i + 1], r * std::cos(th), 1e-12) << i;
  }
}

TEST(RandomOpsTest, TruncatedNormalGroupsHaveTheirOwnSubstreams) {
  // float: groups of 4 outputs; group g reads from counter base + g * 256.
  const int n = 10;
  auto out = RunOnce("TruncatedNormal", {Shape({n})}, 8, 9, DT_FLOAT);
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> expect;
  for (int g = 0; g * 4 < n; ++g) {
    Philox4x32 gen = Philox4x32::FromSeeds(8, 9);
    gen.Skip(uint64_t(g) * 256);
    PhiloxWordStream s(gen);
    int kept = 0;
    while (kept < 4) {
      const uint32_t x0 = s.Next32();
      const uint32_t x1 = s.Next32();
      float f[2];
      random::BoxMullerFloat(x0, x1, &f[0], &f[1]);
      for (float v : f) {
        if (kept < 4 && std::abs(v) < 2.0f) {
          expect.push_back(v);
          ++kept;
        }
      }
    }
  }
  for (int i = 0; i < n; ++i) EXPECT_EQ(out->data<float>()[i], expect[i]) << i;
}

TEST(RandomOpsTest, UniformIntStreamAndRange) {
  auto out = RandomKernel("RandomUniformInt",
                          {Shape({6}), Tensor::Scalar<int64_t>(-5), Tensor::Scalar<int64_t>(1000)},
                          11, 12)
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->dtype(), DT_INT64);
  PhiloxWordStream s(Philox4x32::FromSeeds(11, 12));
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(out->data<int64_t>()[i], -5 + static_cast<int64_t>(s.Next64() % 1005)) << i;
  }
}

// ---------------------------------------------------------------- determinism

TEST(RandomOpsTest, SameSeedsSameBitsAcrossRunsAndThreadCounts) {
  // Several blocks plus a ragged tail, so the 4-thread run really shards.
  const int64_t n = 3 * 4096 + 3;
  for (const char* op : kFloatOps) {
    for (DataType dt : kFloatTypes) {
      SCOPED_TRACE(std::string(op) + " " + DataTypeString(dt));
      RandomKernel one(op, {Shape({n})}, 1234, 5678, dt, /*threads=*/1);
      RandomKernel four(op, {Shape({n})}, 1234, 5678, dt, /*threads=*/4);
      for (int run = 0; run < 2; ++run) {
        auto a = one.Run();
        auto b = four.Run();
        ASSERT_TRUE(a.ok()) << a.status();
        ASSERT_TRUE(b.ok()) << b.status();
        EXPECT_TRUE(BitwiseEqual(*a, *b)) << "run " << run;
      }
    }
  }
  for (DataType dt : {DT_INT32, DT_INT64}) {
    auto lo = dt == DT_INT32 ? Tensor::Scalar<int32_t>(-7) : Tensor::Scalar<int64_t>(-7);
    auto hi = dt == DT_INT32 ? Tensor::Scalar<int32_t>(99) : Tensor::Scalar<int64_t>(99);
    auto a = RunOnce("RandomUniformInt", {Shape({n}), lo, hi}, 1, 2, DT_INVALID, 1);
    auto b = RunOnce("RandomUniformInt", {Shape({n}), lo, hi}, 1, 2, DT_INVALID, 4);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(BitwiseEqual(*a, *b)) << DataTypeString(dt);
  }
}

TEST(RandomOpsTest, RunsAdvanceTheStreamButRepeatPerProcess) {
  for (const char* op : kFloatOps) {
    SCOPED_TRACE(op);
    RandomKernel k1(op, {Shape({64})}, 77, 88, DT_FLOAT);
    RandomKernel k2(op, {Shape({64})}, 77, 88, DT_FLOAT);
    auto a1 = k1.Run(), a2 = k1.Run();
    auto b1 = k2.Run(), b2 = k2.Run();
    ASSERT_TRUE(a1.ok() && a2.ok() && b1.ok() && b2.ok());
    EXPECT_FALSE(BitwiseEqual(*a1, *a2));  // a second run continues the stream
    EXPECT_TRUE(BitwiseEqual(*a1, *b1));   // a fresh kernel with the same seeds repeats it
    EXPECT_TRUE(BitwiseEqual(*a2, *b2));
  }
}

TEST(RandomOpsTest, DifferentSeedsDiffer) {
  for (const char* op : kFloatOps) {
    SCOPED_TRACE(op);
    auto a = RunOnce(op, {Shape({256})}, 1, 2, DT_FLOAT);
    auto b = RunOnce(op, {Shape({256})}, 1, 3, DT_FLOAT);
    auto c = RunOnce(op, {Shape({256})}, 2, 2, DT_FLOAT);
    auto d = RunOnce(op, {Shape({256})}, 0, 2, DT_FLOAT);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok());
    EXPECT_FALSE(BitwiseEqual(*a, *b));
    EXPECT_FALSE(BitwiseEqual(*a, *c));
    EXPECT_FALSE(BitwiseEqual(*a, *d));
  }
}

TEST(RandomOpsTest, ZeroSeedsAreNondeterministic) {
  auto a = RunOnce("RandomUniform", {Shape({64})}, 0, 0, DT_FLOAT);
  auto b = RunOnce("RandomUniform", {Shape({64})}, 0, 0, DT_FLOAT);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(BitwiseEqual(*a, *b));
}

TEST(RandomOpsTest, Int32ShapeInputAndEmptyAndScalarOutputs) {
  for (const char* op : kFloatOps) {
    SCOPED_TRACE(op);
    auto a = RunOnce(op, {Shape32({2, 3})}, 1, 1, DT_FLOAT);
    auto b = RunOnce(op, {Shape({2, 3})}, 1, 1, DT_FLOAT);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(BitwiseEqual(*a, *b));  // the shape's dtype does not change the values
    auto empty = RunOnce(op, {Shape({4, 0, 2})}, 1, 1, DT_FLOAT);
    ASSERT_TRUE(empty.ok()) << empty.status();
    EXPECT_EQ(empty->shape(), TensorShape({4, 0, 2}));
    auto scalar = RunOnce(op, {Shape({})}, 1, 1, DT_FLOAT);
    ASSERT_TRUE(scalar.ok()) << scalar.status();
    EXPECT_EQ(scalar->shape(), TensorShape({}));
    EXPECT_EQ(scalar->data<float>()[0], b->data<float>()[0]);  // element 0 is the same draw
  }
}

// ---------------------------------------------------------------- statistics

struct Moments {
  double mean = 0, var = 0, min = 0, max = 0;
};
Moments MomentsOf(const std::vector<double>& v) {
  Moments m;
  m.min = *std::min_element(v.begin(), v.end());
  m.max = *std::max_element(v.begin(), v.end());
  for (double x : v) m.mean += x;
  m.mean /= v.size();
  for (double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= v.size() - 1;
  return m;
}

// Checks the sample mean and variance against (mu, sigma2) within 5 standard errors, given the
// distribution's fourth central moment mu4.
void ExpectMoments(const std::vector<double>& v, double mu, double sigma2, double mu4) {
  const double n = static_cast<double>(v.size());
  const Moments m = MomentsOf(v);
  EXPECT_NEAR(m.mean, mu, 5 * std::sqrt(sigma2 / n));
  EXPECT_NEAR(m.var, sigma2, 5 * std::sqrt((mu4 - sigma2 * sigma2) / n));
}

constexpr int64_t kSamples = 1000000;

TEST(RandomOpsStatsTest, UniformMoments) {
  // m * 2^-k with m uniform on [0, 2^k): mean (2^k - 1) / 2^(k+1), variance (4^k - 1) / (12 4^k).
  // Fourth central moment of a uniform of width w: w^4 / 80 (exact enough for k >= 7).
  const std::pair<DataType, int> kBits[] = {
      {DT_FLOAT, 23}, {DT_DOUBLE, 52}, {DT_HALF, 10}, {DT_BFLOAT16, 7}};
  for (auto [dt, k] : kBits) {
    SCOPED_TRACE(DataTypeString(dt));
    auto out = RunOnce("RandomUniform", {Shape({kSamples})}, 2024, 1, dt, 4);
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> v = ToDoubles(*out);
    const double q = std::ldexp(1.0, k);
    const Moments m = MomentsOf(v);
    EXPECT_GE(m.min, 0.0);
    EXPECT_LT(m.max, 1.0);
    ExpectMoments(v, (q - 1) / (2 * q), (q * q - 1) / (12 * q * q), 1.0 / 80);
  }
}

TEST(RandomOpsStatsTest, NormalMoments) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
    SCOPED_TRACE(DataTypeString(dt));
    auto out = RunOnce("RandomStandardNormal", {Shape({1000, 1000})}, 99, 3, dt, 4);
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> v = ToDoubles(*out);
    // bfloat16 rounding (8 significant bits) adds variance of about 2^-16 / 12 * E[x^2]
    // relative, well inside the 5-sigma band of 0.0141.
    ExpectMoments(v, 0.0, 1.0, 3.0);
    // The tails are there: |x| > 4 has probability 6.3e-5, so about 63 of 1e6.
    const auto tail = std::count_if(v.begin(), v.end(), [](double x) { return std::abs(x) > 4; });
    EXPECT_GT(tail, 63 - 5 * 8);
    EXPECT_LT(tail, 63 + 5 * 8);
  }
}

TEST(RandomOpsStatsTest, TruncatedNormalMomentsAndBounds) {
  // Standard normal restricted to (-a, a), a = 2: Z = erf(a / sqrt 2), phi(a) the density;
  // E[x^2] = 1 - 2 a phi(a) / Z, E[x^4] = 3 - 2 (a^3 + 3a) phi(a) / Z.
  const double a = 2.0;
  const double z = std::erf(a / std::sqrt(2.0));
  const double phi = std::exp(-a * a / 2) / std::sqrt(2 * M_PI);
  const double var = 1 - 2 * a * phi / z;
  const double m4 = 3 - 2 * (a * a * a + 3 * a) * phi / z;
  EXPECT_NEAR(var, 0.7737413, 1e-6);  // hand check of the formula
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
    SCOPED_TRACE(DataTypeString(dt));
    auto out = RunOnce("TruncatedNormal", {Shape({kSamples})}, 31, 41, dt, 4);
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> v = ToDoubles(*out);
    const Moments m = MomentsOf(v);
    // Strictly inside for float/double; rounding to half/bfloat16 can reach +-2 exactly.
    EXPECT_GE(m.min, -2.0);
    EXPECT_LE(m.max, 2.0);
    if (dt == DT_FLOAT || dt == DT_DOUBLE) {
      EXPECT_GT(m.min, -2.0);
      EXPECT_LT(m.max, 2.0);
    }
    ExpectMoments(v, 0.0, var, m4);
    // Mass near the edge: P(1.9 < |x| < 2) = 2 (Phi(2) - Phi(1.9)) / Z ~ 0.01196.
    if (dt == DT_FLOAT || dt == DT_DOUBLE) {
      const double p = (std::erf(2 / std::sqrt(2.0)) - std::erf(1.9 / std::sqrt(2.0))) / z;
      const double expect = p * kSamples;
      const auto edge =
          std::count_if(v.begin(), v.end(), [](double x) { return std::abs(x) > 1.9; });
      EXPECT_NEAR(edge, expect, 5 * std::sqrt(expect));
    }
  }
}

TEST(RandomOpsStatsTest, UniformIntRangeAndChiSquare) {
  for (DataType dt : {DT_INT32, DT_INT64}) {
    SCOPED_TRACE(DataTypeString(dt));
    const int kBuckets = 10;
    auto lo = dt == DT_INT32 ? Tensor::Scalar<int32_t>(-3) : Tensor::Scalar<int64_t>(-3);
    auto hi = dt == DT_INT32 ? Tensor::Scalar<int32_t>(7) : Tensor::Scalar<int64_t>(7);
    auto out = RunOnce("RandomUniformInt", {Shape({kSamples}), lo, hi}, 5, 6, DT_INVALID, 4);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->dtype(), dt);
    std::vector<int64_t> count(kBuckets, 0);
    for (double x : ToDoubles(*out)) {
      ASSERT_GE(x, -3);
      ASSERT_LT(x, 7);
      ++count[static_cast<int>(x) + 3];
    }
    const double expect = double(kSamples) / kBuckets;
    double chi2 = 0;
    for (int64_t c : count) chi2 += (c - expect) * (c - expect) / expect;
    // 9 degrees of freedom: mean 9, sd sqrt(18); P(chi2 > 9 + 5 sd = 30.2) ~ 4e-4.
    EXPECT_LT(chi2, 9 + 5 * std::sqrt(18.0));
  }
}

TEST(RandomOpsStatsTest, UniformIntExtremeRanges) {
  // The full int32 range minus the top value, and the full int64 range: no overflow, both signs.
  auto o32 = RunOnce("RandomUniformInt",
                     {Shape({4096}), Tensor::Scalar<int32_t>(std::numeric_limits<int32_t>::min()),
                      Tensor::Scalar<int32_t>(std::numeric_limits<int32_t>::max())},
                     1, 2);
  ASSERT_TRUE(o32.ok()) << o32.status();
  auto v32 = o32->flat<int32_t>();
  EXPECT_TRUE(std::any_of(v32.begin(), v32.end(), [](int32_t x) { return x < -(1 << 30); }));
  EXPECT_TRUE(std::any_of(v32.begin(), v32.end(), [](int32_t x) { return x > (1 << 30); }));
  EXPECT_TRUE(std::none_of(v32.begin(), v32.end(),
                           [](int32_t x) { return x == std::numeric_limits<int32_t>::max(); }));
  auto o64 = RunOnce("RandomUniformInt",
                     {Shape({4096}), Tensor::Scalar<int64_t>(std::numeric_limits<int64_t>::min()),
                      Tensor::Scalar<int64_t>(std::numeric_limits<int64_t>::max())},
                     1, 2);
  ASSERT_TRUE(o64.ok()) << o64.status();
  auto v64 = o64->flat<int64_t>();
  EXPECT_TRUE(std::any_of(v64.begin(), v64.end(), [](int64_t x) { return x < -(1ll << 62); }));
  EXPECT_TRUE(std::any_of(v64.begin(), v64.end(), [](int64_t x) { return x > (1ll << 62); }));
  // A range of one value.
  auto one = RunOnce("RandomUniformInt",
                     {Shape({5}), Tensor::Scalar<int32_t>(9), Tensor::Scalar<int32_t>(10)}, 1, 2);
  ASSERT_TRUE(one.ok());
  for (int32_t x : one->flat<int32_t>()) EXPECT_EQ(x, 9);
}

// ---------------------------------------------------------------- RandomShuffle

// The permutation RandomShuffle should apply to n rows: TF's forward Fisher-Yates, swapping i
// with i + word mod (n - i) for i = 0 .. n-2, words read in order from the seeded stream.
std::vector<int64_t> ReferencePermutation(int64_t n, int64_t seed, int64_t seed2) {
  std::vector<int64_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  PhiloxWordStream s(Philox4x32::FromSeeds(seed, seed2));
  for (int64_t i = 0; i + 1 < n; ++i) std::swap(p[i], p[i + s.Next32() % uint32_t(n - i)]);
  return p;
}

TEST(RandomShuffleTest, MatchesTensorFlow) {
  // TF 2.15: tf.random_shuffle(tf.range(10), seed=87654321, seed2=12345) on CPU.
  const std::vector<int64_t> tf = {9, 4, 8, 2, 7, 6, 1, 3, 0, 5};
  EXPECT_EQ(ReferencePermutation(10, 87654321, 12345), tf);
  std::vector<int32_t> values(10);
  std::iota(values.begin(), values.end(), 0);
  auto out = RunOnce("RandomShuffle", {AsTensor<int32_t>(values, TensorShape({10}))}, 87654321,
                     12345);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int i = 0; i < 10; ++i) EXPECT_EQ(out->data<int32_t>()[i], tf[i]) << i;
}

TEST(RandomShuffleTest, VectorIsTheReferencePermutation) {
  std::vector<int32_t> values(1000);
  std::iota(values.begin(), values.end(), 0);
  auto out = RunOnce("RandomShuffle", {AsTensor<int32_t>(values, TensorShape({1000}))}, 3, 5);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<int64_t> perm = ReferencePermutation(1000, 3, 5);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(out->data<int32_t>()[i], perm[i]) << i;
  std::vector<int32_t> sorted(out->flat<int32_t>().begin(), out->flat<int32_t>().end());
  EXPECT_NE(sorted, values);
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, values);  // a permutation
}

TEST(RandomShuffleTest, MatrixMovesWholeRows) {
  const int64_t rows = 37, cols = 5;
  std::vector<double> values(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) values[r * cols + c] = r * 100 + c;
  }
  for (int threads : {1, 4}) {
    RandomKernel k("RandomShuffle", {AsTensor<double>(values, TensorShape({rows, cols}))}, 8, 1,
                   DT_INVALID, threads);
    auto out = k.Run();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->shape(), TensorShape({rows, cols}));
    const std::vector<int64_t> perm = ReferencePermutation(rows, 8, 1);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        EXPECT_EQ(out->data<double>()[r * cols + c], perm[r] * 100 + c);
      }
    }
    // The second run draws a different permutation.
    auto again = k.Run();
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(BitwiseEqual(*out, *again));
  }
}

TEST(RandomShuffleTest, StringsAndBools) {
  std::vector<std::string> words = {"a", "bb", "ccc", "dddd", "eeeee", "ffffff"};
  Tensor t(DT_STRING, TensorShape({3, 2}));
  for (int i = 0; i < 6; ++i) t.data<std::string>()[i] = words[i];
  auto out = RunOnce("RandomShuffle", {t}, 4, 4);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<int64_t> perm = ReferencePermutation(3, 4, 4);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(out->data<std::string>()[2 * r], words[2 * perm[r]]);
    EXPECT_EQ(out->data<std::string>()[2 * r + 1], words[2 * perm[r] + 1]);
  }
  Tensor bools(DT_BOOL, TensorShape({4}));
  for (int i = 0; i < 4; ++i) bools.data<bool>()[i] = i == 2;
  auto b = RunOnce("RandomShuffle", {bools}, 1, 9);
  ASSERT_TRUE(b.ok()) << b.status();
  auto bv = b->flat<bool>();
  EXPECT_EQ(std::count(bv.begin(), bv.end(), true), 1);
}

TEST(RandomShuffleTest, ScalarsAndSingleRowsPassThrough) {
  auto s = RunOnce("RandomShuffle", {Tensor::Scalar<float>(2.5f)}, 1, 2);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->shape(), TensorShape({}));
  EXPECT_EQ(s->scalar<float>(), 2.5f);
  auto one_row = RunOnce("RandomShuffle", {AsTensor<int32_t>({1, 2, 3}, {1, 3})}, 1, 2);
  ASSERT_TRUE(one_row.ok());
  EXPECT_EQ(ToDoubles(*one_row), (std::vector<double>{1, 2, 3}));
  auto empty = RunOnce("RandomShuffle", {Tensor(DT_FLOAT, TensorShape({4, 0}))}, 1, 2);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape(), TensorShape({4, 0}));
  auto none = RunOnce("RandomShuffle", {Tensor(DT_FLOAT, TensorShape({0}))}, 1, 2);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->shape(), TensorShape({0}));
}

// ---------------------------------------------------------------- errors

// INVALID_ARGUMENT containing `fragment` and naming the node.
void ExpectInvalidNamingNode(const StatusOr<Tensor>& r, const std::string& fragment) {
  test::ExpectInvalid(r, fragment);
  EXPECT_NE(std::string(r.status().message()).find("'rnd'"), std::string::npos) << r.status();
}

TEST(RandomOpsErrorTest, BadShapes) {
  for (const char* op : kFloatOps) {
    SCOPED_TRACE(op);
    ExpectInvalidNamingNode(RunOnce(op, {AsTensor<int32_t>({2, 2}, {1, 2})}, 1, 1, DT_FLOAT), "vector");
    ExpectInvalidNamingNode(RunOnce(op, {Tensor::Scalar<int32_t>(3)}, 1, 1, DT_FLOAT), "vector");
    ExpectInvalidNamingNode(RunOnce(op, {Shape({3, -1})}, 1, 1, DT_FLOAT), "-1");
    ExpectInvalidNamingNode(RunOnce(op, {Shape({1ll << 40, 1ll << 40})}, 1, 1, DT_FLOAT), "overflow");
    ExpectInvalidNamingNode(RunOnce(op, {Shape({1, 1, 1, 1, 1, 1, 1, 1, 1})}, 1, 1, DT_FLOAT), "maximum");
  }
  ExpectInvalidNamingNode(RunOnce("RandomUniformInt",
                        {Shape({-2}), Tensor::Scalar<int32_t>(0), Tensor::Scalar<int32_t>(3)},
                        1, 1),
                "-2");
}

TEST(RandomOpsErrorTest, UniformIntRange) {
  ExpectInvalidNamingNode(RunOnce("RandomUniformInt",
                        {Shape({3}), Tensor::Scalar<int32_t>(5), Tensor::Scalar<int32_t>(5)}, 1, 1),
                "Need minval < maxval: 5 >= 5");
  ExpectInvalidNamingNode(RunOnce("RandomUniformInt",
                        {Shape({3}), Tensor::Scalar<int64_t>(6), Tensor::Scalar<int64_t>(-2)}, 1,
                        1),
                "Need minval < maxval: 6 >= -2");
  ExpectInvalidNamingNode(RunOnce("RandomUniformInt",
                        {Shape({3}), AsTensor<int32_t>({0, 1}, {2}), Tensor::Scalar<int32_t>(5)},
                        1, 1),
                "minval must be 0-D");
  ExpectInvalidNamingNode(RunOnce("RandomUniformInt",
                        {Shape({3}), Tensor::Scalar<int32_t>(0), AsTensor<int32_t>({5}, {1})}, 1,
                        1),
                "maxval must be 0-D");
  // As TF: an empty output does not need a valid range.
  auto empty = RunOnce("RandomUniformInt",
                       {Shape({0, 4}), Tensor::Scalar<int32_t>(5), Tensor::Scalar<int32_t>(5)}, 1,
                       1);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape(), TensorShape({0, 4}));
}

TEST(RandomOpsErrorTest, DisallowedDtypes) {
  // dtype int32 is not a float type for RandomUniform: rejected when the kernel is built.
  RandomKernel k("RandomUniform", {Shape({3})}, 1, 1, DT_INT32);
  EXPECT_FALSE(k.status().ok());
  RandomKernel s("RandomShuffle", {Tensor(DT_RESOURCE, TensorShape({2}))}, 1, 1);
  if (s.status().ok()) {
    auto r = s.Run();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

// ---------------------------------------------------------------- shape functions, gradients

TEST(RandomOpsShapeTest, ShapeFunctions) {
  KernelRunner r("RandomUniform");
  r.Input(Shape({2, 3})).Attr("dtype", DT_FLOAT);
  Tensor value = Shape({2, 3});
  auto known = r.InferShapes({PartialTensorShape({2})}, {&value});
  ASSERT_TRUE(known.ok()) << known.status();
  EXPECT_EQ((*known)[0], PartialTensorShape({2, 3}));
  auto rank_only = r.InferShapes({PartialTensorShape({3})});
  ASSERT_TRUE(rank_only.ok());
  EXPECT_EQ((*rank_only)[0], PartialTensorShape({-1, -1, -1}));
  auto unknown = r.InferShapes({PartialTensorShape()});
  ASSERT_TRUE(unknown.ok());
  EXPECT_TRUE((*unknown)[0].unknown_rank());
  EXPECT_FALSE(r.InferShapes({PartialTensorShape({2, 2})}).ok());

  KernelRunner ri("RandomUniformInt");
  ri.Input(Shape({2})).Input(Tensor::Scalar<int32_t>(0)).Input(Tensor::Scalar<int32_t>(4));
  EXPECT_TRUE(ri.InferShapes({PartialTensorShape({1}), PartialTensorShape({}),
                              PartialTensorShape({})})
                  .ok());
  EXPECT_FALSE(ri.InferShapes({PartialTensorShape({1}), PartialTensorShape({2}),
                               PartialTensorShape({})})
                   .ok());

  KernelRunner rs("RandomShuffle");
  rs.Input(Tensor(DT_FLOAT, TensorShape({4, 2})));
  auto same = rs.InferShapes({PartialTensorShape({-1, 2})});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ((*same)[0], PartialTensorShape({-1, 2}));
}

TEST(RandomOpsShapeTest, NoGradients) {
  for (const char* op : {"RandomStandardNormal", "TruncatedNormal", "RandomUniform",
                         "RandomUniformInt", "RandomShuffle"}) {
    GradFunc fn;
    EXPECT_TRUE(GradientRegistry::Global()->Lookup(op, &fn).ok()) << op;
    EXPECT_FALSE(static_cast<bool>(fn)) << op;
  }
}

TEST(RandomOpsShapeTest, OpsAreStateful) {
  for (const char* op : {"RandomStandardNormal", "TruncatedNormal", "RandomUniform",
                         "RandomUniformInt", "RandomShuffle"}) {
    auto def = OpRegistry::Global()->LookUpOpDef(op);
    ASSERT_TRUE(def.ok()) << op;
    EXPECT_TRUE((*def)->is_stateful()) << op;
  }
}

}  // namespace
}  // namespace tensorflux
