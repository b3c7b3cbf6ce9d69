// ScalarSummary, HistogramSummary, MergeSummary kernels and the Histogram they use: the outputs
// parsed back and compared with values worked out here (numpy-free: sums in double, buckets by
// a linear search over the limits rebuilt from TF's formula).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "tensorflux/summary.pb.h"
#include "tensorflux/summary/histogram.h"

namespace tensorflux {
namespace {

Summary Parse(const Tensor& t) {
  Summary s;
  EXPECT_EQ(t.dims(), 0);
  EXPECT_TRUE(s.ParseFromString(t.data<std::string>()[0]));
  return s;
}

TEST(SummaryOpsTest, ScalarSummaryOneValuePerTag) {
  auto out = test::KernelRunner("ScalarSummary")
                 .Input(test::AsTensor<std::string>({"a", "b"}, {2}))
                 .Input(test::AsTensor<double>({0.25, -3.5}, {2}))
                 .RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  Summary s = Parse(*out);
  ASSERT_EQ(s.value_size(), 2);
  EXPECT_EQ(s.value(0).tag(), "a");
  EXPECT_EQ(s.value(0).simple_value(), 0.25f);
  EXPECT_EQ(s.value(1).tag(), "b");
  EXPECT_EQ(s.value(1).simple_value(), -3.5f);

  auto i32 = test::KernelRunner("ScalarSummary")
                 .Input(Tensor::Scalar<std::string>("step"))
                 .Input(Tensor::Scalar<int32_t>(7))
                 .RunOne();
  ASSERT_TRUE(i32.ok()) << i32.status();
  EXPECT_EQ(Parse(*i32).value(0).simple_value(), 7.0f);
}

TEST(SummaryOpsTest, ScalarSummaryBadInput) {
  test::ExpectInvalid(test::KernelRunner("ScalarSummary")
                          .Input(test::AsTensor<std::string>({"a", "b"}, {2}))
                          .Input(Tensor::Scalar<float>(1.0f))
                          .Run(),
                      "one shape");
  // A repeated tag is kept twice, as TF does (only MergeSummary refuses duplicates).
  auto dup = test::KernelRunner("ScalarSummary")
                 .Input(test::AsTensor<std::string>({"a", "a"}, {2}))
                 .Input(test::AsTensor<float>({1, 2}, {2}))
                 .RunOne();
  ASSERT_TRUE(dup.ok()) << dup.status();
  EXPECT_EQ(Parse(*dup).value_size(), 2);
  EXPECT_EQ(Parse(*dup).value(1).tag(), "a");
  EXPECT_EQ(Parse(*dup).value(1).simple_value(), 2.0f);
}

TEST(SummaryOpsTest, HistogramMatchesHandCount) {
  const std::vector<float> values = {-2.0f, 0.0f, 0.0f, 1e-13f, 1.0f, 1.0f, 3.5f, 1e6f};
  auto out = test::KernelRunner("HistogramSummary")
                 .Input(Tensor::Scalar<std::string>("w"))
                 .Input(test::AsTensor<float>(values, {2, 4}))
                 .RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  Summary s = Parse(*out);
  ASSERT_EQ(s.value_size(), 1);
  EXPECT_EQ(s.value(0).tag(), "w");
  const HistogramProto& h = s.value(0).histo();
  double sum = 0, sq = 0;
  for (float v : values) sum += v, sq += double(v) * v;
  EXPECT_EQ(h.num(), values.size());
  EXPECT_EQ(h.min(), -2.0);
  EXPECT_EQ(h.max(), 1e6f);
  EXPECT_DOUBLE_EQ(h.sum(), sum);
  EXPECT_DOUBLE_EQ(h.sum_squares(), sq);
  ASSERT_EQ(h.bucket_size(), h.bucket_limit_size());
  // Every value is counted in the first bucket whose limit exceeds it (empty runs merged away,
  // so the limits are increasing and the counts add up).
  double total = 0;
  for (int i = 0; i < h.bucket_size(); ++i) {
    total += h.bucket(i);
    if (i > 0) EXPECT_LT(h.bucket_limit(i - 1), h.bucket_limit(i));
    double expect = 0;
    const double lo = i == 0 ? -INFINITY : h.bucket_limit(i - 1);
    for (float v : values)
      if (v >= lo && v < h.bucket_limit(i)) expect += 1;
    EXPECT_EQ(h.bucket(i), expect) << "bucket " << i << " limit " << h.bucket_limit(i);
  }
  EXPECT_EQ(total, values.size());
}

TEST(SummaryOpsTest, DefaultBucketsFollowTheFormula) {
  const auto& limits = summary::DefaultBucketLimits();
  // 0 in the middle; +-1e-12 * 1.1^k below 1e20; +-DBL_MAX at the ends.
  int k = 0;
  for (double v = 1e-12; v < 1e20; v *= 1.1) ++k;
  ASSERT_EQ(limits.size(), static_cast<size_t>(2 * (k + 1) + 1));
  EXPECT_EQ(limits[k + 1], 0.0);
  EXPECT_EQ(limits[k + 2], 1e-12);
  EXPECT_EQ(limits.front(), -DBL_MAX);
  EXPECT_EQ(limits.back(), DBL_MAX);
  EXPECT_NEAR(limits[k + 3] / limits[k + 2], 1.1, 1e-12);
}

TEST(SummaryOpsTest, HistogramRejectsNonFinite) {
  for (float bad : {NAN, INFINITY}) {
    test::ExpectInvalid(test::KernelRunner("HistogramSummary")
                            .Input(Tensor::Scalar<std::string>("act"))
                            .Input(test::AsTensor<float>({1.0f, bad}, {2}))
                            .Run(),
                        "histogram for: act");
  }
  test::ExpectInvalid(test::KernelRunner("HistogramSummary")
                          .Input(test::AsTensor<std::string>({"a", "b"}, {2}))
                          .Input(test::AsTensor<float>({1.0f}, {1}))
                          .Run(),
                      "tag must be a scalar");
}

TEST(SummaryOpsTest, MergeSummaryUnionAndDuplicates) {
  Summary a, b;
  a.add_value()->set_tag("x");
  a.mutable_value(0)->set_simple_value(1);
  b.add_value()->set_tag("y");
  b.add_value()->set_tag("z");
  auto out = test::KernelRunner("MergeSummary")
                 .Input(Tensor::Scalar<std::string>(a.SerializeAsString()))
                 .Input(Tensor::Scalar<std::string>(b.SerializeAsString()))
                 .Attr("N", int64_t{2})
                 .RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  Summary m = Parse(*out);
  ASSERT_EQ(m.value_size(), 3);
  EXPECT_EQ(m.value(0).tag(), "x");
  EXPECT_EQ(m.value(0).simple_value(), 1.0f);
  EXPECT_EQ(m.value(2).tag(), "z");

  test::ExpectInvalid(test::KernelRunner("MergeSummary")
                          .Input(Tensor::Scalar<std::string>(a.SerializeAsString()))
                          .Input(Tensor::Scalar<std::string>(a.SerializeAsString()))
                          .Attr("N", int64_t{2})
                          .Run(),
                      "duplicate tag 'x'");
  test::ExpectInvalid(test::KernelRunner("MergeSummary")
                          .Input(Tensor::Scalar<std::string>("\xff\xff\xff"))
                          .Attr("N", int64_t{1})
                          .Run(),
                      "not a serialized Summary");
}

}  // namespace
}  // namespace tensorflux
