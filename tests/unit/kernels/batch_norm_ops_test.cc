// FusedBatchNormV3 and FusedBatchNormGradV3 (kernels/cpu/batch_norm_ops.cc) against the formulas
// evaluated in float64 here: training (biased variance in y and reserve_space_2, unbiased in
// batch_variance), exponential_avg_factor blending, inference, NHWC and NCHW, float32 (oneDNN)
// and float64/half/bfloat16 (loops) on one and several threads, a batch of one element per
// channel, an empty batch, large offsets, the shape function and the validation errors.

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

struct Case {
  std::vector<int64_t> dims;  // as stored: NHWC or NCHW
  bool nhwc = true;
  bool training = true;
  float factor = 1.0f;
  float epsilon = 1e-3f;
};

int64_t Channels(const Case& k) { return k.dims[k.nhwc ? 3 : 1]; }
int64_t Product(const std::vector<int64_t>& d) {
  int64_t p = 1;
  for (auto e : d) p *= e;
  return p;
}
// Channel of flat element i.
int64_t ChannelOf(const Case& k, int64_t i) {
  return k.nhwc ? i % k.dims[3] : (i / (k.dims[2] * k.dims[3])) % k.dims[1];
}

std::vector<double> Values(int64_t n, uint32_t seed, double lo, double hi) {
  std::vector<double> v(n);
  uint32_t s = seed * 747796405u + 2891336453u;
  for (auto& e : v) {
    s = s * 1664525u + 1013904223u;
    e = lo + (hi - lo) * static_cast<double>(s >> 8) / 16777216.0;
  }
  return v;
}

struct BnRef {
  std::vector<double> y, batch_mean, batch_var, r1, r2;
  std::vector<double> dx, dscale, doffset;
};

// The documented formulas, per channel, straight from the definitions.
BnRef Reference(const Case& k, const std::vector<double>& x, const std::vector<double>& scale,
                const std::vector<double>& offset, const std::vector<double>& mean_in,
                const std::vector<double>& var_in, const std::vector<double>& dy) {
  const int64_t C = Channels(k), total = Product(k.dims), n = total / C;
  BnRef r;
  std::vector<double> mean(C, 0), var(C, 0);
  if (k.training) {
    for (int64_t i = 0; i < total; ++i) mean[ChannelOf(k, i)] += x[i] / n;
    for (int64_t i = 0; i < total; ++i) {
      const double d = x[i] - mean[ChannelOf(k, i)];
      var[ChannelOf(k, i)] += d * d / n;
    }
  } else {
    mean = mean_in;
    var = var_in;
  }
  r.y.resize(total);
  for (int64_t i = 0; i < total; ++i) {
    const int64_t c = ChannelOf(k, i);
    r.y[i] = (x[i] - mean[c]) / std::sqrt(var[c] + k.epsilon) * scale[c] + offset[c];
  }
  // Inference: TF's CPU kernel leaves the reserve spaces zero.
  r.r1 = k.training ? mean : std::vector<double>(C, 0.0);
  r.r2 = k.training ? var : std::vector<double>(C, 0.0);
  r.batch_mean = mean;
  r.batch_var = var;
  if (k.training) {
    for (int64_t c = 0; c < C; ++c) {
      const double unbiased = n > 1 ? var[c] * n / (n - 1) : var[c];
      r.batch_var[c] = unbiased;
      if (k.factor != 1.0f) {
        r.batch_mean[c] = (1 - k.factor) * mean_in[c] + k.factor * mean[c];
        r.batch_var[c] = (1 - k.factor) * var_in[c] + k.factor * unbiased;
      }
    }
  }
  // Gradient of sum(dy * y): training differentiates through the batch statistics.
  std::vector<double> sum_dy(C, 0), sum_dy_xhat(C, 0);
  for (int64_t i = 0; i < total; ++i) {
    const int64_t c = ChannelOf(k, i);
    const double xhat = (x[i] - mean[c]) / std::sqrt(var[c] + k.epsilon);
    sum_dy[c] += dy[i];
    sum_dy_xhat[c] += dy[i] * xhat;
  }
  r.dscale = sum_dy_xhat;
  r.doffset = sum_dy;
  r.dx.resize(total);
  for (int64_t i = 0; i < total; ++i) {
    const int64_t c = ChannelOf(k, i);
    const double inv = 1 / std::sqrt(var[c] + k.epsilon);
    const double xhat = (x[i] - mean[c]) * inv;
    r.dx[i] = k.training ? scale[c] * inv * (dy[i] - sum_dy[c] / n - xhat * sum_dy_xhat[c] / n)
                         : dy[i] * scale[c] * inv;
  }
  return r;
}

double Tol(DataType dt) {
  switch (dt) {
    case DT_DOUBLE: return 1e-10;
    case DT_FLOAT: return 2e-4;
    case DT_HALF: return 2e-2;
    default: return 8e-2;
  }
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i]))) << what << " [" << i << "]";
  }
}

KernelRunner& BnAttrs(KernelRunner& r, const Case& k, bool with_factor = true) {
  r.Attr("epsilon", k.epsilon)
      .Attr("is_training", k.training)
      .Attr("data_format", std::string(k.nhwc ? "NHWC" : "NCHW"));
  if (with_factor) r.Attr("exponential_avg_factor", k.factor);
  return r;
}

// x_offset shifts x (a conditioning test); tol_scale widens the tolerances to match it.
void CheckCase(const Case& k, DataType dt, DeviceBase* device, double x_offset = 0,
               double tol_scale = 1) {
  const DataType ut = dt == DT_DOUBLE ? DT_DOUBLE : DT_FLOAT;
  const int64_t C = Channels(k), total = Product(k.dims);
  std::vector<double> x = Values(total, 1, -3, 3);
  for (double& v : x) v = test::RoundTo(dt, v + x_offset);
  std::vector<double> dy = Values(total, 2, -1, 1);
  for (double& v : dy) v = test::RoundTo(dt, v);
  auto vec = [&](uint32_t seed, double lo, double hi) {
    std::vector<double> v = Values(C, seed, lo, hi);
    for (double& e : v) e = test::RoundTo(ut, e);
    return v;
  };
  const std::vector<double> scale = vec(3, 0.5, 2), offset = vec(4, -1, 1), mean_in = vec(5, -1, 1),
                            var_in = vec(6, 0.5, 3);
  const bool pass_stats = !k.training || k.factor != 1.0f;
  const BnRef ref = Reference(k, x, scale, offset, mean_in, var_in, dy);
  const std::string label = std::string(k.training ? "training" : "inference") + " " +
                            TensorShape(k.dims).DebugString() + (k.nhwc ? " NHWC " : " NCHW ") +
                            DataTypeString(dt) + " factor " + std::to_string(k.factor);
  const TensorShape shape(k.dims), cshape({C});

  KernelRunner fwd("FusedBatchNormV3");
  fwd.OnDevice(device)
      .Input(FromDoubles(dt, shape, x))
      .Input(FromDoubles(ut, cshape, scale))
      .Input(FromDoubles(ut, cshape, offset))
      .Input(pass_stats ? FromDoubles(ut, cshape, mean_in) : Tensor(ut, TensorShape({0})))
      .Input(pass_stats ? FromDoubles(ut, cshape, var_in) : Tensor(ut, TensorShape({0})));
  auto out = BnAttrs(fwd, k).Run();
  ASSERT_TRUE(out.ok()) << label << ": " << out.status();
  ASSERT_EQ(out->size(), 6u);
  const double tol = Tol(dt) * tol_scale;
  // Statistics are computed in float32 or wider for every T: tighter than y for 16-bit x.
  const double stat_tol = (dt == DT_DOUBLE ? 1e-10 : 1e-4) * tol_scale;
  ExpectNear(ToDoubles((*out)[0]), ref.y, tol, label + " y");
  ExpectNear(ToDoubles((*out)[1]), ref.batch_mean, stat_tol, label + " batch_mean");
  ExpectNear(ToDoubles((*out)[2]), ref.batch_var, stat_tol, label + " batch_variance");
  ExpectNear(ToDoubles((*out)[3]), ref.r1, stat_tol, label + " reserve_space_1");
  ExpectNear(ToDoubles((*out)[4]), ref.r2, stat_tol, label + " reserve_space_2");
  EXPECT_EQ((*out)[5].shape(), TensorShape({})) << label;

  // The gradient takes the batch statistics (training) or the population ones (inference, as
  // TF's gradient function passes the forward's mean and variance inputs).
  KernelRunner bwd("FusedBatchNormGradV3");
  bwd.OnDevice(device)
      .Input(FromDoubles(dt, shape, dy))
      .Input(FromDoubles(dt, shape, x))
      .Input(FromDoubles(ut, cshape, scale))
      .Input(k.training ? (*out)[3] : FromDoubles(ut, cshape, mean_in))
      .Input(k.training ? (*out)[4] : FromDoubles(ut, cshape, var_in))
      .Input((*out)[5]);
  auto g = BnAttrs(bwd, k, false).Run();
  ASSERT_TRUE(g.ok()) << label << ": " << g.status();
  ASSERT_EQ(g->size(), 5u);
  ExpectNear(ToDoubles((*g)[0]), ref.dx, tol * 10, label + " x_backprop");
  ExpectNear(ToDoubles((*g)[1]), ref.dscale, dt == DT_DOUBLE ? tol : tol * 10, label + " scale_backprop");
  ExpectNear(ToDoubles((*g)[2]), ref.doffset, dt == DT_DOUBLE ? tol : tol * 10, label + " offset_backprop");
  EXPECT_EQ((*g)[3].shape(), TensorShape({0}));
  EXPECT_EQ((*g)[4].shape(), TensorShape({0}));
}

TEST(BatchNormOps, MatchesFormulas) {
  test::TestCpuDevice one(1), four(4);
  const std::vector<Case> cases = {
      {{2, 5, 3, 4}, true, true, 1.0f},
      {{2, 5, 3, 4}, true, true, 0.3f},
      {{2, 5, 3, 4}, true, false, 1.0f},
      {{3, 4, 5, 2}, false, true, 1.0f},   // NCHW
      {{3, 4, 5, 2}, false, false, 1.0f},
      {{3, 4, 5, 2}, false, true, 0.6f},
      {{1, 7, 3, 17}, true, true, 1.0f, 1e-5f},  // odd channel count
      {{1, 1, 1, 3}, true, true, 1.0f},    // one element per channel: no Bessel correction
      {{1, 1, 1, 3}, true, true, 0.5f},
  };
  for (const Case& k : cases) {
    for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
      CheckCase(k, dt, &one);
      CheckCase(k, dt, &four);
    }
  }
}

// A large common offset with a small spread: the two-pass variance keeps its precision (the
// one-pass E[x^2] - E[x]^2 would lose about 1e-4 relative at 1e6 in float64; the data's own
// conditioning allows about 1e-10, checked at 1e-7).
TEST(BatchNormOps, LargeOffset) {
  test::TestCpuDevice one(1);
  CheckCase({{4, 6, 6, 8}, true, true, 1.0f}, DT_DOUBLE, &one, 1e6, 1e3);
  CheckCase({{4, 6, 6, 8}, true, true, 1.0f}, DT_FLOAT, &one, 100);
}

TEST(BatchNormOps, EmptyBatch) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE}) {
    const DataType ut = dt;
    KernelRunner fwd("FusedBatchNormV3");
    fwd.Input(Tensor(dt, TensorShape({0, 2, 2, 3})))
        .Input(FromDoubles(ut, TensorShape({3}), {1, 1, 1}))
        .Input(FromDoubles(ut, TensorShape({3}), {0, 0, 0}))
        .Input(Tensor(ut, TensorShape({0})))
        .Input(Tensor(ut, TensorShape({0})));
    auto out = fwd.Run();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), TensorShape({0, 2, 2, 3}));
    // TF: NaN batch statistics, zero reserve spaces.
    for (int i = 1; i < 5; ++i) {
      for (double v : ToDoubles((*out)[i])) EXPECT_EQ(std::isnan(v), i < 3) << i;
    }
    KernelRunner bwd("FusedBatchNormGradV3");
    bwd.Input(Tensor(dt, TensorShape({0, 2, 2, 3})))
        .Input(Tensor(dt, TensorShape({0, 2, 2, 3})))
        .Input(FromDoubles(ut, TensorShape({3}), {1, 1, 1}))
        .Input(FromDoubles(ut, TensorShape({3}), {0, 0, 0}))
        .Input(FromDoubles(ut, TensorShape({3}), {1, 1, 1}))
        .Input(Tensor(ut, TensorShape({})));
    auto g = bwd.Run();
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ(ToDoubles((*g)[1]), std::vector<double>(3, 0.0));
    EXPECT_EQ(ToDoubles((*g)[2]), std::vector<double>(3, 0.0));
  }
}

using test::ExpectInvalid;

Status RunForward(TensorShape x, int64_t scale_n, int64_t offset_n, int64_t mean_n, bool training,
                  float factor = 1.0f, std::string format = "NHWC") {
  KernelRunner r("FusedBatchNormV3");
  r.Input(Tensor(DT_FLOAT, x))
      .Input(Tensor(DT_FLOAT, TensorShape({scale_n})))
      .Input(Tensor(DT_FLOAT, TensorShape({offset_n})))
      .Input(Tensor(DT_FLOAT, TensorShape({mean_n})))
      .Input(Tensor(DT_FLOAT, TensorShape({mean_n})))
      .Attr("is_training", training)
      .Attr("exponential_avg_factor", factor)
      .Attr("data_format", format);
  return r.Run().status();
}

TEST(BatchNormOps, InvalidInputs) {
  const TensorShape x({2, 3, 3, 4});
  ExpectInvalid(RunForward(TensorShape({2, 3, 4}), 4, 4, 0, true), "4-dimensional");
  ExpectInvalid(RunForward(x, 4, 4, 0, true, 1.0f, "NDHWC"), "5-dimensional");
  EXPECT_TRUE(RunForward(TensorShape({2, 3, 3, 2, 4}), 4, 4, 0, true, 1.0f, "NDHWC").ok());
  EXPECT_TRUE(RunForward(TensorShape({2, 4, 3, 3, 2}), 4, 4, 0, true, 1.0f, "NCDHW").ok());
  ExpectInvalid(RunForward(x, 3, 4, 0, true), "scale");
  ExpectInvalid(RunForward(x, 4, 5, 0, true), "offset");
  ExpectInvalid(RunForward(x, 4, 4, 0, false), "mean");
  ExpectInvalid(RunForward(x, 4, 4, 3, true, 0.5f), "mean");
  ExpectInvalid(RunForward(x, 4, 4, 0, true, 1.0f, "NHCW"), "data_format");
  ExpectInvalid(RunForward(x, 4, 4, 0, true, 1.0f, "NCHW"), "scale");  // NCHW: C is dim 1 (3)
  EXPECT_TRUE(RunForward(TensorShape({2, 4, 3, 3}), 4, 4, 0, true, 1.0f, "NCHW").ok());
  EXPECT_TRUE(RunForward(x, 4, 4, 0, true).ok());  // training, factor 1: mean/variance unused

  auto grad = [&](TensorShape dy, TensorShape xs, int64_t scale_n, int64_t r1_n) {
    KernelRunner r("FusedBatchNormGradV3");
    r.Input(Tensor(DT_FLOAT, dy))
        .Input(Tensor(DT_FLOAT, xs))
        .Input(Tensor(DT_FLOAT, TensorShape({scale_n})))
        .Input(Tensor(DT_FLOAT, TensorShape({r1_n})))
        .Input(Tensor(DT_FLOAT, TensorShape({4})))
        .Input(Tensor(DT_FLOAT, TensorShape({})));
    return r.Run().status();
  };
  ExpectInvalid(grad(TensorShape({2, 3, 3, 5}), x, 4, 4), "y_backprop");
  ExpectInvalid(grad(x, x, 3, 4), "scale");
  ExpectInvalid(grad(x, x, 4, 2), "reserve_space_1");
  ExpectInvalid(grad(TensorShape({3, 3, 4}), TensorShape({3, 3, 4}), 4, 4), "4-dimensional");
}

TEST(BatchNormOps, ShapeFunction) {
  KernelRunner r("FusedBatchNormV3");
  r.Input(Tensor(DT_FLOAT, TensorShape({1, 1, 1, 1})));
  for (int i = 0; i < 4; ++i) r.Input(Tensor(DT_FLOAT, TensorShape({1})));
  auto s = r.InferShapes({PartialTensorShape({-1, 5, 5, 8}), PartialTensorShape({8}),
                          PartialTensorShape({-1}), PartialTensorShape({0}),
                          PartialTensorShape({0})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, 5, 5, 8}));
  for (int i = 1; i < 5; ++i) EXPECT_EQ((*s)[i], PartialTensorShape({8}));
  EXPECT_EQ((*s)[5], PartialTensorShape::UnknownRank());  // TF's shape function
  s = r.InferShapes({PartialTensorShape({-1, 5, 5, 8}), PartialTensorShape({7}),
                     PartialTensorShape({8}), PartialTensorShape({0}), PartialTensorShape({0})});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.status().message()).find("test_node"), std::string::npos);
}

}  // namespace
}  // namespace tensorflux
