// BatchMatMulV2 (ops/math_ops_matmul.cc, kernels/cpu/matmul_op.cc) against a float64 loop with
// explicit NumPy batch broadcasting: every adjoint combination, broadcast and missing batch dims,
// the folded [B*M, K] x [K, N] path, products on both sides of the small-product threshold, the
// parallel-over-batch path, every dtype, empty dims, errors and the shape function.
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

using test::FromDoubles;
using test::KernelRunner;
using test::ToDoubles;
using ::testing::HasSubstr;

std::vector<double> Values(DataType dt, int64_t n, uint32_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 99u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    const double u = (s >> 8) / double(1 << 24);
    x = DataTypeIsInteger(dt) ? std::floor(u * 11) - 5 : 2 * u - 1;
  }
  return v;
}

// The flat index in a tensor of batch dims `bd` of the output batch multi-index `idx`
// (right-aligned, size-1 dims broadcast).
int64_t BatchIndex(const std::vector<int64_t>& bd, const std::vector<int64_t>& idx) {
  int64_t flat = 0;
  const size_t off = idx.size() - bd.size();
  for (size_t i = 0; i < bd.size(); ++i) flat = flat * bd[i] + (bd[i] == 1 ? 0 : idx[off + i]);
  return flat;
}

struct Case {
  std::vector<int64_t> x, y;  // full shapes as stored
  bool adj_x = false, adj_y = false;
};

void Check(DataType dt, const Case& c, int threads = 1) {
  const std::string what = absl::StrCat(DataTypeString(dt), " x=", TensorShape(c.x).DebugString(),
                                        " y=", TensorShape(c.y).DebugString(), " adj=", c.adj_x,
                                        c.adj_y, " threads=", threads);
  const TensorShape sx(c.x), sy(c.y);
  Tensor x = FromDoubles(dt, sx, Values(dt, sx.num_elements(), 1 + sx.num_elements()));
  Tensor y = FromDoubles(dt, sy, Values(dt, sy.num_elements(), 2 + sy.num_elements()));
  test::TestCpuDevice device(threads);
  auto out = KernelRunner("BatchMatMulV2")
                 .Attr("adj_x", c.adj_x)
                 .Attr("adj_y", c.adj_y)
                 .Input(x)
                 .Input(y)
                 .OnDevice(&device)
                 .RunOne();
  ASSERT_TRUE(out.ok()) << what << ": " << out.status();
  const int rx = sx.dims(), ry = sy.dims();
  const int64_t m = c.x[rx - (c.adj_x ? 1 : 2)], k = c.x[rx - (c.adj_x ? 2 : 1)];
  const int64_t n = c.y[ry - (c.adj_y ? 2 : 1)];
  const std::vector<int64_t> bx(c.x.begin(), c.x.end() - 2), by(c.y.begin(), c.y.end() - 2);
  std::vector<int64_t> bo(std::max(bx.size(), by.size()), 1);
  for (size_t i = 0; i < bo.size(); ++i) {
    const int64_t ix = static_cast<int64_t>(i) - static_cast<int64_t>(bo.size() - bx.size());
    const int64_t iy = static_cast<int64_t>(i) - static_cast<int64_t>(bo.size() - by.size());
    const int64_t dx = ix >= 0 ? bx[ix] : 1, dy = iy >= 0 ? by[iy] : 1;
    bo[i] = dx == 1 ? dy : dx;  // NumPy: 1 broadcasts to anything, including 0
  }
  std::vector<int64_t> want_dims = bo;
  want_dims.push_back(m);
  want_dims.push_back(n);
  ASSERT_EQ(out->shape(), TensorShape(want_dims)) << what;
  const std::vector<double> xv = ToDoubles(x), yv = ToDoubles(y), got = ToDoubles(*out);
  int64_t batches = 1;
  for (int64_t d : bo) batches *= d;
  const double tol = dt == DT_DOUBLE ? 1e-12 * (k + 1)
                     : dt == DT_FLOAT ? 2e-6 * (k + 1)
                     : dt == DT_HALF ? 1e-3 * std::max<int64_t>(k, 1)
                     : dt == DT_BFLOAT16 ? 8e-3 * std::max<int64_t>(k, 1) : 0;
  int bad = 0;
  for (int64_t b = 0; b < batches && bad < 5; ++b) {
    std::vector<int64_t> idx(bo.size());
    for (int64_t r = b, i = static_cast<int64_t>(bo.size()) - 1; i >= 0; --i) {
      idx[i] = r % bo[i];
      r /= bo[i];
    }
    const double* xm = xv.data() + BatchIndex(bx, idx) * m * k;
    const double* ym = yv.data() + BatchIndex(by, idx) * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) {
          s += (c.adj_x ? xm[p * m + i] : xm[i * k + p]) * (c.adj_y ? ym[j * k + p] : ym[p * n + j]);
        }
        const double g = got[(b * m + i) * n + j];
        if (!(std::fabs(g - s) <= tol) && bad++ < 5) {
          ADD_FAILURE() << what << " batch " << b << " (" << i << "," << j << "): got " << g
                        << ", want " << s;
        }
      }
    }
  }
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (bool ax : {false, true}) {
    for (bool ay : {false, true}) {
      auto mat = [&](std::vector<int64_t> batch, int64_t r, int64_t c, bool adj) {
        batch.push_back(adj ? c : r);
        batch.push_back(adj ? r : c);
        return batch;
      };
      // {batch dims of x, of y}, m, k, n
      cases.push_back({mat({3}, 2, 4, ax), mat({3}, 4, 5, ay), ax, ay});
      cases.push_back({mat({2, 1}, 3, 2, ax), mat({4}, 2, 3, ay), ax, ay});   // broadcast
      cases.push_back({mat({}, 3, 4, ax), mat({2, 3}, 4, 2, ay), ax, ay});    // x has no batch
      cases.push_back({mat({2, 3}, 3, 4, ax), mat({}, 4, 2, ay), ax, ay});    // y shared: fold
      cases.push_back({mat({1, 3}, 3, 4, ax), mat({1}, 4, 2, ay), ax, ay});   // size-1 y batch
      cases.push_back({mat({}, 5, 6, ax), mat({}, 6, 7, ay), ax, ay});        // plain matrices
      cases.push_back({mat({2}, 90, 100, ax), mat({2}, 100, 110, ay), ax, ay});  // big: library
    }
  }
  return cases;
}

TEST(BatchMatMulV2OpTest, Float32MatchesFloat64Loop) {
  for (const Case& c : Cases()) Check(DT_FLOAT, c);
}

TEST(BatchMatMulV2OpTest, EveryDtype) {
  for (DataType dt : {DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT32, DT_INT64}) {
    for (const Case& c : Cases()) Check(dt, c);
  }
}

TEST(BatchMatMulV2OpTest, ParallelOverTheBatch) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_INT32}) {
    Check(dt, {{64, 8, 5}, {64, 5, 9}}, 4);
    Check(dt, {{8, 1, 6, 5}, {7, 6, 5}, false, true}, 4);
    Check(dt, {{3, 100, 90}, {3, 100, 96}, true, false}, 4);
  }
}

TEST(BatchMatMulV2OpTest, EmptyDims) {
  for (DataType dt : {DT_FLOAT, DT_INT64, DT_HALF}) {
    Check(dt, {{0, 2, 3}, {0, 3, 4}});   // empty batch
    Check(dt, {{0, 2, 3}, {1, 3, 4}});   // broadcast to an empty batch
    Check(dt, {{2, 0, 3}, {2, 3, 4}});   // M = 0
    Check(dt, {{2, 2, 0}, {2, 0, 4}});   // K = 0: zeros
    Check(dt, {{2, 2, 0}, {0, 4}});      // K = 0, folded
  }
}

TEST(BatchMatMulV2OpTest, Errors) {
  auto run = [](TensorShape a, TensorShape b, bool adj_x = false) {
    return KernelRunner("BatchMatMulV2", "bmm")
        .Attr("adj_x", adj_x)
        .Input(Tensor(DT_FLOAT, a))
        .Input(Tensor(DT_FLOAT, b))
        .Run()
        .status();
  };
  Status s = run(TensorShape({3}), TensorShape({3, 2}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("In[0] ndims must be >= 2: 1"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("bmm"));
  s = run(TensorShape({2, 3}), TensorShape({}));
  EXPECT_THAT(std::string(s.message()), HasSubstr("In[1] ndims must be >= 2: 0"));
  s = run(TensorShape({2, 2, 3}), TensorShape({2, 4, 5}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("Matrix size-incompatible"));
  s = run(TensorShape({2, 3, 2}), TensorShape({2, 2, 5}), /*adj_x=*/true);
  EXPECT_THAT(std::string(s.message()), HasSubstr("Matrix size-incompatible"));
  s = run(TensorShape({2, 2, 3}), TensorShape({3, 3, 5}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("compatible batch dimensions"));
  // A broadcast batch whose element count overflows int64.
  s = KernelRunner("BatchMatMulV2")
          .Input(Tensor(DT_FLOAT, TensorShape({int64_t{1} << 40, 1, 1, 0})))
          .Input(Tensor(DT_FLOAT, TensorShape({1, int64_t{1} << 40, 0, 1})))
          .Run()
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_FALSE(KernelRunner("BatchMatMulV2")
                   .Input(Tensor(DT_BOOL, TensorShape({1, 1})))
                   .Input(Tensor(DT_BOOL, TensorShape({1, 1})))
                   .Run()
                   .ok());
}

TEST(BatchMatMulV2OpTest, ShapeFunction) {
  KernelRunner r("BatchMatMulV2", "bmm");
  r.Input(Tensor(DT_FLOAT, TensorShape({1, 1}))).Input(Tensor(DT_FLOAT, TensorShape({1, 1})));
  auto s = r.InferShapes({PartialTensorShape({2, 1, 3, 4}), PartialTensorShape({5, 4, 6})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 5, 3, 6}));
  s = r.InferShapes({PartialTensorShape({-1, 3, 4}), PartialTensorShape({4, -1})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, 3, -1}));
  s = r.InferShapes({PartialTensorShape(), PartialTensorShape({4, 2})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE((*s)[0].unknown_rank());
  EXPECT_EQ(r.InferShapes({PartialTensorShape({3, 4}), PartialTensorShape({5, 6})})
                .status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.InferShapes({PartialTensorShape({2, 3, 4}), PartialTensorShape({3, 4, 6})})
                .status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.InferShapes({PartialTensorShape({4}), PartialTensorShape({4, 6})}).status().code(),
            absl::StatusCode::kInvalidArgument);

  KernelRunner a("BatchMatMulV2");
  a.Attr("adj_x", true).Attr("adj_y", true);
  a.Input(Tensor(DT_FLOAT, TensorShape({1, 1}))).Input(Tensor(DT_FLOAT, TensorShape({1, 1})));
  s = a.InferShapes({PartialTensorShape({7, 4, 3}), PartialTensorShape({7, 6, 4})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({7, 3, 6}));
}

}  // namespace
}  // namespace tensorflux
