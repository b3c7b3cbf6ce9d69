// Qr (ops/linalg_ops.cc, kernels/cpu/qr_op.cc): for reduced and full factorizations of tall,
// wide, square and batched inputs, q x r rebuilds the input (float64 loop), q's columns are
// orthonormal and r is upper triangular; empty matrices, a rank-1 input, an unsupported dtype and
// the shape function. (tests/python/test_init_ops.py also compares with numpy.linalg.qr.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace tensorflux {
namespace {

using test::FromDoubles;
using test::KernelRunner;
using test::ToDoubles;

std::vector<double> Values(int64_t n, uint32_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 7u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = 2 * ((s >> 8) / double(1 << 24)) - 1;
  }
  return v;
}

void Check(DataType dt, std::vector<int64_t> dims, bool full, int threads = 1) {
  const std::string what = absl::StrCat(DataTypeString(dt), " ", TensorShape(dims).DebugString(),
                                        " full=", full, " threads=", threads);
  const double tol = dt == DT_FLOAT ? 2e-5 : 1e-12;
  const TensorShape shape(dims);
  Tensor a = FromDoubles(dt, shape, Values(shape.num_elements(), 3 + shape.num_elements()));
  test::TestCpuDevice device(threads);
  auto out = KernelRunner("Qr").Attr("full_matrices", full).Input(a).OnDevice(&device).Run();
  ASSERT_TRUE(out.ok()) << what << ": " << out.status();
  const int rank = shape.dims();
  const int64_t m = dims[rank - 2], n = dims[rank - 1], p = std::min(m, n);
  const int64_t qc = full ? m : p;
  std::vector<int64_t> qd(dims.begin(), dims.end() - 1), rd(dims.begin(), dims.end() - 2);
  qd.push_back(qc);
  rd.push_back(qc);
  rd.push_back(n);
  const Tensor& q = (*out)[0];
  const Tensor& r = (*out)[1];
  ASSERT_EQ(q.shape(), TensorShape(qd)) << what;
  ASSERT_EQ(r.shape(), TensorShape(rd)) << what;
  const std::vector<double> av = ToDoubles(a), qv = ToDoubles(q), rv = ToDoubles(r);
  const int64_t batch = m * n == 0 ? 0 : shape.num_elements() / (m * n);
  for (int64_t b = 0; b < batch; ++b) {
    const double* A = &av[b * m * n];
    const double* Q = &qv[b * m * qc];
    const double* R = &rv[b * qc * n];
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t k = 0; k < qc; ++k) s += Q[i * qc + k] * R[k * n + j];
        ASSERT_NEAR(s, A[i * n + j], tol) << what << " batch " << b << " (q r)[" << i << "," << j
                                          << "]";
      }
    }
    for (int64_t c1 = 0; c1 < qc; ++c1) {
      for (int64_t c2 = 0; c2 < qc; ++c2) {
        double s = 0;
        for (int64_t i = 0; i < m; ++i) s += Q[i * qc + c1] * Q[i * qc + c2];
        ASSERT_NEAR(s, c1 == c2 ? 1.0 : 0.0, tol) << what << " (q^T q)[" << c1 << "," << c2 << "]";
      }
    }
    for (int64_t i = 0; i < qc; ++i) {
      for (int64_t j = 0; j < std::min(i, n); ++j) {
        ASSERT_EQ(R[i * n + j], 0.0) << what << " r below the diagonal at " << i << "," << j;
      }
    }
  }
}

TEST(QrOpTest, ReducedAndFullFactorizations) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE}) {
    for (bool full : {false, true}) {
      Check(dt, {1, 1}, full);
      Check(dt, {5, 3}, full);   // tall
      Check(dt, {3, 5}, full);   // wide
      Check(dt, {6, 6}, full);   // square
      Check(dt, {2, 3, 7, 4}, full);  // batch of 6
    }
  }
}

TEST(QrOpTest, ParallelBatchMatchesSerial) {
  Check(DT_DOUBLE, {9, 8, 5}, false, /*threads=*/4);
  const TensorShape shape({9, 8, 5});
  Tensor a = FromDoubles(DT_FLOAT, shape, Values(shape.num_elements(), 11));
  test::TestCpuDevice pool(4);
  auto serial = KernelRunner("Qr").Input(a).Run();
  auto parallel = KernelRunner("Qr").Input(a).OnDevice(&pool).Run();
  ASSERT_TRUE(serial.ok() && parallel.ok());
  for (int i = 0; i < 2; ++i) EXPECT_EQ(ToDoubles((*serial)[i]), ToDoubles((*parallel)[i]));
}

TEST(QrOpTest, EmptyMatrices) {
  Check(DT_FLOAT, {0, 3}, false);
  Check(DT_FLOAT, {2, 0, 3}, true);
  Check(DT_FLOAT, {0, 4, 4}, false);
  // [3, 0] with full_matrices: q is the 3x3 identity, r is [3, 0].
  auto out = KernelRunner("Qr").Attr("full_matrices", true)
                 .Input(Tensor(DT_DOUBLE, TensorShape({3, 0}))).Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].shape(), TensorShape({3, 0}));
  EXPECT_EQ(ToDoubles((*out)[0]), std::vector<double>({1, 0, 0, 0, 1, 0, 0, 0, 1}));
}

TEST(QrOpTest, Errors) {
  test::ExpectInvalid(
      KernelRunner("Qr").Input(FromDoubles(DT_FLOAT, TensorShape({3}), {1, 2, 3})).Run(),
      "rank >= 2");
  auto bad_type = KernelRunner("Qr").Input(Tensor(DT_INT32, TensorShape({2, 2}))).Run();
  EXPECT_FALSE(bad_type.ok());
}

TEST(QrOpTest, ShapeFunction) {
  KernelRunner r("Qr", "qr");
  r.Input(Tensor(DT_FLOAT, TensorShape({1, 1})));
  auto s = r.InferShapes({PartialTensorShape({4, 7, 3})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({4, 7, 3}));
  EXPECT_EQ((*s)[1], PartialTensorShape({4, 3, 3}));
  s = r.InferShapes({PartialTensorShape({-1, 5})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, -1}));
  EXPECT_EQ((*s)[1], PartialTensorShape({-1, 5}));
  s = r.InferShapes({PartialTensorShape()});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE((*s)[0].unknown_rank() && (*s)[1].unknown_rank());
  test::ExpectInvalid(r.InferShapes({PartialTensorShape({5})}), "'qr'");

  KernelRunner f("Qr");
  f.Attr("full_matrices", true).Input(Tensor(DT_FLOAT, TensorShape({1, 1})));
  s = f.InferShapes({PartialTensorShape({2, 3, 5})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 3, 3}));
  EXPECT_EQ((*s)[1], PartialTensorShape({2, 3, 5}));
}

}  // namespace
}  // namespace tensorflux
