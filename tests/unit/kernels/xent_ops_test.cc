// SparseSoftmaxCrossEntropyWithLogits and SoftmaxCrossEntropyWithLogits (ops/nn_ops.cc,
// kernels/cpu/xent_ops.cc) against float64 references: int32/int64 labels, broadcasting labels,
// logits of +-1e4, empty batch, the parallel path, labels out of range and bad shapes.
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
using test::ToDoubles;
using ::testing::HasSubstr;

std::vector<double> Values(int64_t n, uint32_t seed, double lo = -4, double hi = 4) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 3u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * ((s >> 8) / double(1 << 24));
  }
  return v;
}

// Float64 reference of one row, per class from its own differences d_k = x_k - x_j:
// log p_j = -log(sum_k exp(d_k)), in long double (with the largest d_k factored out so that
// differences of 2e4 do not overflow) — per class, not the kernel's one log-sum-exp per row.
void ReferenceRow(const double* x, const double* target, int64_t n, double* loss,
                  double* backprop) {
  *loss = 0;
  for (int64_t j = 0; j < n; ++j) {
    long double big = 0;  // d_j = 0 is one of the terms
    for (int64_t k = 0; k < n; ++k) big = std::max<long double>(big, x[k] - x[j]);
    long double s = 0;
    for (int64_t k = 0; k < n; ++k) s += std::exp(static_cast<long double>(x[k] - x[j]) - big);
    const long double log_p = -(big + std::log(s));
    if (target[j] != 0) *loss -= target[j] * static_cast<double>(log_p);
    backprop[j] = static_cast<double>(std::exp(log_p)) - target[j];
  }
}

void ExpectClose(const std::vector<double>& got, const std::vector<double>& want, double tol,
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

double Tol(DataType dt) {
  return dt == DT_DOUBLE ? 1e-12 : dt == DT_FLOAT ? 2e-5 : dt == DT_HALF ? 4e-3 : 3e-2;
}

using test::ExpectInvalid;

// ---------------------------------------------------------------- sparse

void CheckSparse(DataType dt, DataType label_dt, int64_t batch, int64_t classes,
                 std::vector<double> logits, int threads = 1) {
  const std::string what = absl::StrCat(DataTypeString(dt), "/", DataTypeString(label_dt), " ",
                                        batch, "x", classes);
  Tensor x = FromDoubles(dt, TensorShape({batch, classes}), logits);
  std::vector<double> label_values(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) label_values[b] = (b * 7 + 3) % classes;
  Tensor labels = FromDoubles(label_dt, TensorShape({batch}), label_values);
  test::TestCpuDevice device(threads);
  auto out = KernelRunner("SparseSoftmaxCrossEntropyWithLogits")
                 .Input(x)
                 .Input(labels)
                 .OnDevice(&device)
                 .Run();
  ASSERT_TRUE(out.ok()) << what << ": " << out.status();
  ASSERT_EQ((*out)[0].shape(), TensorShape({batch}));
  ASSERT_EQ((*out)[1].shape(), TensorShape({batch, classes}));
  const std::vector<double> xv = ToDoubles(x);
  std::vector<double> loss(batch), backprop(batch * classes);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<double> target(classes, 0.0);
    target[static_cast<int64_t>(label_values[b])] = 1;
    ReferenceRow(&xv[b * classes], target.data(), classes, &loss[b], &backprop[b * classes]);
  }
  ExpectClose(ToDoubles((*out)[0]), loss, Tol(dt), what + " loss");
  ExpectClose(ToDoubles((*out)[1]), backprop, Tol(dt), what + " backprop");
}

TEST(SparseXentOpTest, MatchesFloat64Reference) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
    for (DataType ldt : {DT_INT32, DT_INT64}) {
      CheckSparse(dt, ldt, 4, 5, Values(20, 1));
      CheckSparse(dt, ldt, 1, 1, {0.5});  // one class: loss 0, backprop 0
    }
  }
  CheckSparse(DT_FLOAT, DT_INT64, 500, 37, Values(500 * 37, 2), 4);  // parallel rows
  CheckSparse(DT_FLOAT, DT_INT32, 128, 10, Values(128 * 10, 3), 2);  // an MLP's batch: inline
}

TEST(SparseXentOpTest, StableForHugeLogits) {
  // Loss of a row whose label logit is -1e4 against a 1e4 one is 2e4; naive exp overflows.
  const std::vector<double> v = {1e4, -1e4, 0, -1e4, 1e4, 1e4, 3, 2, 1};
  for (DataType dt : {DT_FLOAT, DT_DOUBLE}) CheckSparse(dt, DT_INT32, 3, 3, v);
  auto out = KernelRunner("SparseSoftmaxCrossEntropyWithLogits")
                 .Input(AsTensor<float>({1e4f, -1e4f}, {1, 2}))
                 .Input(AsTensor<int32_t>({1}, {1}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<float>()[0], 2e4f);
  EXPECT_EQ((*out)[1].data<float>()[0], 1.0f);
  EXPECT_EQ((*out)[1].data<float>()[1], -1.0f);
}

TEST(SparseXentOpTest, EmptyBatch) {
  auto out = KernelRunner("SparseSoftmaxCrossEntropyWithLogits")
                 .Input(Tensor(DT_FLOAT, TensorShape({0, 4})))
                 .Input(Tensor(DT_INT64, TensorShape({0})))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0}));
  EXPECT_EQ((*out)[1].shape(), TensorShape({0, 4}));
}

TEST(SparseXentOpTest, LabelOutOfRangeNamesValueAndRow) {
  auto run = [](Tensor labels) {
    return KernelRunner("SparseSoftmaxCrossEntropyWithLogits", "xent_node")
        .Input(FromDoubles(DT_FLOAT, TensorShape({3, 4}), Values(12, 3)))
        .Input(labels)
        .Run()
        .status();
  };
  Status s = run(AsTensor<int32_t>({0, 4, 1}, {3}));
  ExpectInvalid(s, "xent_node");
  EXPECT_THAT(std::string(s.message()), HasSubstr("label value of 4 in row 1"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("[0, 4)"));
  s = run(AsTensor<int64_t>({0, 1, -1}, {3}));
  EXPECT_THAT(std::string(s.message()), HasSubstr("label value of -1 in row 2"));
  s = run(AsTensor<int64_t>({int64_t{1} << 40, 0, 0}, {3}));
  EXPECT_THAT(std::string(s.message()), HasSubstr("label value of 1099511627776 in row 0"));
  // No classes: every label is out of range.
  s = KernelRunner("SparseSoftmaxCrossEntropyWithLogits")
          .Input(Tensor(DT_FLOAT, TensorShape({2, 0})))
          .Input(AsTensor<int32_t>({0, 0}, {2}))
          .Run()
          .status();
  ExpectInvalid(s, "[0, 0)");
}

TEST(SparseXentOpTest, BadShapes) {
  auto run = [](TensorShape f, TensorShape l) {
    return KernelRunner("SparseSoftmaxCrossEntropyWithLogits", "sx")
        .Input(Tensor(DT_FLOAT, f))
        .Input(FromDoubles(DT_INT32, l, std::vector<double>(l.num_elements(), 0)))
        .Run()
        .status();
  };
  ExpectInvalid(run(TensorShape({2, 3, 4}), TensorShape({2})), "must be 2-D");
  ExpectInvalid(run(TensorShape({3}), TensorShape({3})), "must be 2-D");
  ExpectInvalid(run(TensorShape({2, 3}), TensorShape({2, 1})), "labels must be 1-D");
  ExpectInvalid(run(TensorShape({2, 3}), TensorShape({3})), "same first dimension");

  KernelRunner r("SparseSoftmaxCrossEntropyWithLogits", "sx");
  r.Input(Tensor(DT_FLOAT, TensorShape({1, 1}))).Input(Tensor(DT_INT32, TensorShape({1})));
  auto s = r.InferShapes({PartialTensorShape({-1, 10}), PartialTensorShape({32})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({32}));
  EXPECT_EQ((*s)[1], PartialTensorShape({32, 10}));
  ExpectInvalid(r.InferShapes({PartialTensorShape({4, 10}), PartialTensorShape({5})}).status(),
                "Dimensions must be equal");
  ExpectInvalid(r.InferShapes({PartialTensorShape({4}), PartialTensorShape({4})}).status(),
                "rank 2");
}

// ---------------------------------------------------------------- dense

// Runs the dense op on features/labels of the given shapes (broadcast to [batch, classes]).
void CheckDense(DataType dt, TensorShape fs, TensorShape ls, int64_t batch, int64_t classes,
                std::vector<double> fv = {}) {
  const std::string what = absl::StrCat(DataTypeString(dt), " ", fs.DebugString(), " vs ",
                                        ls.DebugString());
  if (fv.empty()) fv = Values(fs.num_elements(), 4);
  // Labels: positive weights, each row a distribution when not broadcast along classes.
  std::vector<double> lv = Values(ls.num_elements(), 5, 0, 1);
  Tensor x = FromDoubles(dt, fs, fv);
  Tensor l = FromDoubles(dt, ls, lv);
  auto out = KernelRunner("SoftmaxCrossEntropyWithLogits").Input(x).Input(l).Run();
  ASSERT_TRUE(out.ok()) << what << ": " << out.status();
  ASSERT_EQ((*out)[0].shape(), TensorShape({batch})) << what;
  ASSERT_EQ((*out)[1].shape(), TensorShape({batch, classes})) << what;
  // Broadcast both operands to [batch, classes] by explicit index arithmetic.
  auto at = [&](const std::vector<double>& v, const TensorShape& s, int64_t b, int64_t j) {
    const int r = s.dims();
    const int64_t cols = r >= 1 ? s.dim_size(r - 1) : 1;
    const int64_t row = (r == 2 && s.dim_size(0) != 1) ? b : 0;
    const int64_t col = cols != 1 ? j : 0;
    return v[row * cols + col];
  };
  const std::vector<double> xr = ToDoubles(x), lr = ToDoubles(l);
  std::vector<double> loss(batch), backprop(batch * classes);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<double> xrow(classes), trow(classes);
    for (int64_t j = 0; j < classes; ++j) {
      xrow[j] = at(xr, fs, b, j);
      trow[j] = at(lr, ls, b, j);
    }
    ReferenceRow(xrow.data(), trow.data(), classes, &loss[b], &backprop[b * classes]);
  }
  ExpectClose(ToDoubles((*out)[0]), loss, Tol(dt), what + " loss");
  ExpectClose(ToDoubles((*out)[1]), backprop, Tol(dt), what + " backprop");
}

TEST(XentOpTest, MatchesFloat64ReferenceWithBroadcasting) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
    CheckDense(dt, TensorShape({3, 5}), TensorShape({3, 5}), 3, 5);
    CheckDense(dt, TensorShape({3, 5}), TensorShape({5}), 3, 5);     // labels broadcast
    CheckDense(dt, TensorShape({1, 5}), TensorShape({4, 5}), 4, 5);  // features broadcast
    CheckDense(dt, TensorShape({4, 1}), TensorShape({4, 3}), 4, 3);  // one logit per row
    CheckDense(dt, TensorShape({2, 3}), TensorShape({}), 2, 3);      // scalar labels
  }
}

TEST(XentOpTest, StableForHugeLogitsAndEmpty) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE}) {
    CheckDense(dt, TensorShape({2, 3}), TensorShape({2, 3}), 2, 3,
               {1e4, -1e4, 0, -1e4, -1e4, 1e4});
  }
  auto out = KernelRunner("SoftmaxCrossEntropyWithLogits")
                 .Input(Tensor(DT_FLOAT, TensorShape({0, 3})))
                 .Input(Tensor(DT_FLOAT, TensorShape({0, 3})))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0}));
  out = KernelRunner("SoftmaxCrossEntropyWithLogits")
            .Input(Tensor(DT_FLOAT, TensorShape({2, 0})))
            .Input(Tensor(DT_FLOAT, TensorShape({2, 0})))
            .Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles((*out)[0]), std::vector<double>({0, 0}));
}

TEST(XentOpTest, BadShapes) {
  auto run = [](TensorShape f, TensorShape l) {
    return KernelRunner("SoftmaxCrossEntropyWithLogits", "dx")
        .Input(Tensor(DT_FLOAT, f))
        .Input(Tensor(DT_FLOAT, l))
        .Run()
        .status();
  };
  ExpectInvalid(run(TensorShape({2, 3}), TensorShape({2, 4})), "broadcastable");
  ExpectInvalid(run(TensorShape({2, 3, 4}), TensorShape({2, 3, 4})), "2-dimensional");
  ExpectInvalid(run(TensorShape({3}), TensorShape({3})), "dx");

  KernelRunner r("SoftmaxCrossEntropyWithLogits");
  r.Input(Tensor(DT_FLOAT, TensorShape({1, 1}))).Input(Tensor(DT_FLOAT, TensorShape({1, 1})));
  auto s = r.InferShapes({PartialTensorShape({-1, 10}), PartialTensorShape({10})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1}));
  EXPECT_EQ((*s)[1], PartialTensorShape({-1, 10}));
  ExpectInvalid(r.InferShapes({PartialTensorShape({10}), PartialTensorShape({10})}).status(),
                "rank 2");
}

}  // namespace
}  // namespace tensorflux
