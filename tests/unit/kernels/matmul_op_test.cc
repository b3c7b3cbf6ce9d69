// MatMul (ops/math_ops_matmul.cc, kernels/cpu/matmul_op.cc) against a float64 triple-loop
// reference: every transpose combination, shapes on both sides of the small-product threshold
// (the Eigen and the oneDNN/OpenBLAS paths), vectors (1xK, Kx1), empty dims, every dtype, the
// intra-op-parallel integer path, errors and the shape function.

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
using test::ToDoubles;
using ::testing::HasSubstr;

// Deterministic pseudo-random values in [-1, 1] (integers in [-5, 5] for integer dtypes).
std::vector<double> Values(DataType dt, int64_t n, uint32_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    const double u = (s >> 8) / double(1 << 24);  // [0, 1)
    x = DataTypeIsInteger(dt) ? std::floor(u * 11) - 5 : 2 * u - 1;
  }
  return v;
}

// c[m, n] = sum_k op(a)[m, k] * op(b)[k, n], in float64, from the stored (already rounded) values.
std::vector<double> Reference(const std::vector<double>& a, const std::vector<double>& b,
                              int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double x = ta ? a[p * m + i] : a[i * k + p];
        const double y = tb ? b[j * k + p] : b[p * n + j];
        sum += x * y;
      }
      c[i * n + j] = sum;
    }
  }
  return c;
}

// Per-element tolerance for a K-term dot product of values in [-1, 1]: accumulation error of the
// working precision, plus one rounding of the result to the dtype.
double Tolerance(DataType dt, int64_t k) {
  switch (dt) {
    case DT_DOUBLE: return 1e-12 * (k + 1);
    case DT_FLOAT: return 2e-6 * (k + 1);
    case DT_HALF: return 1e-3 * std::max<int64_t>(k, 1) + 2e-6 * k;
    case DT_BFLOAT16: return 8e-3 * std::max<int64_t>(k, 1) + 2e-6 * k;
    default: return 0;  // integers: exact
  }
}

// Runs MatMul on [m,k] x [k,n] (stored transposed when ta / tb) and compares with Reference.
void CheckMatMul(DataType dt, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                 DeviceBase* device = nullptr) {
  const std::string what = absl::StrCat(DataTypeString(dt), " m=", m, " n=", n, " k=", k,
                                        " ta=", ta, " tb=", tb);
  const TensorShape sa = ta ? TensorShape({k, m}) : TensorShape({m, k});
  const TensorShape sb = tb ? TensorShape({n, k}) : TensorShape({k, n});
  Tensor a = FromDoubles(dt, sa, Values(dt, m * k, 1 + m + 7 * k));
  Tensor b = FromDoubles(dt, sb, Values(dt, k * n, 2 + n + 3 * k));
  KernelRunner r("MatMul");
  r.Attr("transpose_a", ta).Attr("transpose_b", tb).Input(a).Input(b);
  if (device != nullptr) r.OnDevice(device);
  auto out = r.RunOne();
  ASSERT_TRUE(out.ok()) << what << ": " << out.status();
  ASSERT_EQ(out->dtype(), dt) << what;
  ASSERT_EQ(out->shape(), TensorShape({m, n})) << what;
  const std::vector<double> want = Reference(ToDoubles(a), ToDoubles(b), m, n, k, ta, tb);
  const std::vector<double> got = ToDoubles(*out);
  const double tol = Tolerance(dt, k);
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    if (!(std::fabs(got[i] - want[i]) <= tol)) {
      ++bad;
      ADD_FAILURE() << what << " at " << i << ": got " << got[i] << ", want " << want[i];
    }
  }
}

struct Dims {
  int64_t m, n, k;
};

TEST(MatMulOpTest, Float32AllTransposesAndSizes) {
  const std::vector<Dims> sizes = {
      {1, 1, 1},    {2, 3, 4},     {1, 17, 5},   // 1xK row vector times a matrix
      {7, 1, 9},    {1, 1, 300},                 // Kx1 column results, a long dot product
      {33, 65, 17}, {90, 100, 110},              // below / above the small-product threshold
      {128, 128, 128}, {1, 300, 1000}, {257, 3, 513},
  };
  for (const Dims& d : sizes) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) CheckMatMul(DT_FLOAT, d.m, d.n, d.k, ta, tb);
    }
  }
}

TEST(MatMulOpTest, EveryDtype) {
  for (DataType dt : {DT_DOUBLE, DT_INT32, DT_INT64, DT_HALF, DT_BFLOAT16}) {
    for (const Dims& d : std::vector<Dims>{{1, 1, 1}, {3, 5, 4}, {1, 9, 6}, {90, 100, 110}}) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) CheckMatMul(dt, d.m, d.n, d.k, ta, tb);
      }
    }
  }
}

TEST(MatMulOpTest, ParallelIntegerPathOnAnIntraOpPool) {
  test::TestCpuDevice device(/*intra_op_threads=*/3);
  for (DataType dt : {DT_INT32, DT_INT64}) {
    CheckMatMul(dt, 121, 97, 83, false, false, &device);
    CheckMatMul(dt, 121, 97, 83, true, true, &device);
  }
}

TEST(MatMulOpTest, EmptyDimensions) {
  // M = 0 and N = 0 give empty products; K = 0 gives zeros.
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_HALF}) {
    CheckMatMul(dt, 0, 4, 3, false, false);
    CheckMatMul(dt, 4, 0, 3, false, true);
    CheckMatMul(dt, 0, 0, 0, true, false);
  }
  for (DataType dt : {DT_FLOAT, DT_INT64, DT_BFLOAT16}) {
    Tensor a(dt, TensorShape({3, 0}));
    Tensor b(dt, TensorShape({0, 2}));
    auto out = KernelRunner("MatMul").Input(a).Input(b).RunOne();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->shape(), TensorShape({3, 2}));
    EXPECT_THAT(ToDoubles(*out), ::testing::Each(0.0)) << DataTypeString(dt);
  }
}

TEST(MatMulOpTest, InnerDimensionMismatch) {
  auto out = KernelRunner("MatMul", "mm")
                 .Input(AsTensor<float>(std::vector<float>(6, 1), {2, 3}))
                 .Input(AsTensor<float>(std::vector<float>(20, 1), {4, 5}))
                 .Run();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]"));

  // With transpose_a the inner dimension of [3,2] is 3: [3,2]^T x [2,5] does not match.
  out = KernelRunner("MatMul")
            .Attr("transpose_a", true)
            .Input(AsTensor<float>(std::vector<float>(6, 1), {3, 2}))
            .Input(AsTensor<float>(std::vector<float>(10, 1), {2, 5}))
            .Run();
  EXPECT_THAT(out.status().message(),
              HasSubstr("Matrix size-incompatible: In[0]: [3,2], In[1]: [2,5]"));
}

TEST(MatMulOpTest, RankErrorsAndUnsupportedTypes) {
  auto out = KernelRunner("MatMul")
                 .Input(AsTensor<float>(std::vector<float>(8, 1), {2, 2, 2}))
                 .Input(AsTensor<float>(std::vector<float>(4, 1), {2, 2}))
                 .Run();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("In[0] is not a matrix"));

  out = KernelRunner("MatMul")
            .Input(AsTensor<float>(std::vector<float>(4, 1), {2, 2}))
            .Input(AsTensor<float>(std::vector<float>(2, 1), {2}))
            .Run();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("In[1] is not a matrix"));

  out = KernelRunner("MatMul")
            .Input(FromDoubles(DT_BOOL, TensorShape({1, 1}), {1}))
            .Input(FromDoubles(DT_BOOL, TensorShape({1, 1}), {1}))
            .Run();
  EXPECT_FALSE(out.ok());
}

TEST(MatMulOpTest, ShapeFunction) {
  KernelRunner r("MatMul", "mm");
  r.Input(Tensor(DT_FLOAT, TensorShape({1, 1}))).Input(Tensor(DT_FLOAT, TensorShape({1, 1})));
  auto s = r.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({3, 5})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 5}));

  s = r.InferShapes({PartialTensorShape({-1, 3}), PartialTensorShape()});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, -1}));

  s = r.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({4, 5})});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("Dimensions must be equal, but are 3 and 4"));

  s = r.InferShapes({PartialTensorShape({2, 3, 4}), PartialTensorShape({4, 5})});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("must be rank 2"));

  KernelRunner t("MatMul");
  t.Attr("transpose_a", true).Attr("transpose_b", true);
  t.Input(Tensor(DT_FLOAT, TensorShape({1, 1}))).Input(Tensor(DT_FLOAT, TensorShape({1, 1})));
  s = t.InferShapes({PartialTensorShape({3, 2}), PartialTensorShape({5, -1})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 5}));
}

TEST(MatMulOpTest, IsExpensive) {
  KernelRunner r("MatMul");
  r.Input(AsTensor<float>({2}, {1, 1})).Input(AsTensor<float>({3}, {1, 1}));
  auto out = r.RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->scalar<float>(), 6.0f);
  ASSERT_NE(r.kernel(), nullptr);
  EXPECT_TRUE(r.kernel()->IsExpensive());
}

}  // namespace
}  // namespace tensorflux
