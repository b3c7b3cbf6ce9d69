// _FusedMaxPoolGrad (kernels/cpu/fused_pool_grad_op.cc) against the unfused chain it replaces
// (MaxPoolGrad -> ReluGrad -> BiasAddGrad, the existing kernels) and against float64 values from
// pool_test::Reference's window maxima (pool_test_util.h): tiling, uncovered rows and columns
// (VALID remainders, strides > ksize), SAME and EXPLICIT padding, ties, values <= 0 at the
// maximum, float and double on one and two threads, the output taking the input's buffer, a
// hand-worked example, empty tensors, the shape function and every validation error.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernel_test_util.h"
#include "pool_test_util.h"

namespace tensorflux {
namespace {

using test::FromDoubles;
using test::KernelRunner;
using test::ToDoubles;
using pool_test::Cfg;
using pool_test::WindowAttrs;

// Values on a coarse grid (ties and zeros are common), about a third of them <= 0.
std::vector<double> Grid(int64_t n, uint32_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<double>(static_cast<int>(seed >> 27) - 10) * 0.25;
  }
  return v;
}

struct Expected {
  std::vector<int64_t> pooled;  // N, out_rows, out_cols, C
  std::vector<double> backprops, bias;
};

// pool_test::Reference's first maximum of every window gets g when it is > 0.
Expected FusedReference(const Cfg& c, const std::vector<double>& x, const std::vector<double>& g) {
  const pool_test::Ref r = pool_test::Reference(c, x, {});
  const int64_t C = c.in[3];
  Expected e{r.out_shape, std::vector<double>(x.size(), 0.0), std::vector<double>(C, 0.0)};
  for (size_t o = 0; o < r.max_at.size(); ++o) {
    const int64_t at = r.max_at[o];
    if (x[at] > 0) {
      e.backprops[at] = g[o];
      e.bias[o % C] += g[o];
    }
  }
  return e;
}

void ExpectNearAll(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "element " << i;
  }
}

TEST(FusedMaxPoolGrad, MatchesUnfusedChainAndFloat64Loop) {
  const std::vector<Cfg> cfgs = {
      {{2, 6, 6, 3}, 2, 2, 2, 2, "VALID", {}},
      {{2, 7, 5, 4}, 2, 2, 2, 2, "VALID", {}},       // last row and column in no window
      {{1, 7, 8, 5}, 2, 2, 3, 3, "SAME", {}},        // strides > ksize: gaps, padding
      {{2, 5, 6, 17}, 3, 2, 3, 2, "SAME", {}},       // odd depth, clipped last window
      {{1, 5, 5, 2}, 2, 2, 2, 2, "EXPLICIT", {1, 0, 1, 1}},
      {{1, 3, 4, 2}, 1, 1, 1, 1, "VALID", {}},       // 1x1 windows: ReluGrad alone
      {{3, 28, 28, 32}, 2, 2, 2, 2, "SAME", {}},     // many blocks: the parallel path
  };
  test::TestCpuDevice two_threads(2);
  for (const Cfg& c : cfgs) {
    const int64_t n = c.in[0] * c.in[1] * c.in[2] * c.in[3];
    const std::vector<double> x = Grid(n, 7);
    const std::vector<int64_t> pooled_dims = pool_test::Reference(c, x, {}).out_shape;
    const std::vector<double> g = Grid(
        pooled_dims[0] * pooled_dims[1] * pooled_dims[2] * pooled_dims[3], 11);
    const Expected want = FusedReference(c, x, g);
    for (DataType dt : {DT_FLOAT, DT_DOUBLE}) {
      for (bool parallel : {false, true}) {
        SCOPED_TRACE(c.padding + " " + TensorShape(c.in).DebugString() + " " +
                     DataTypeString(dt) + (parallel ? " 2 threads" : " 1 thread"));
        const Tensor xt = FromDoubles(dt, TensorShape(c.in), x);
        const Tensor gt = FromDoubles(dt, TensorShape(want.pooled), g);
        KernelRunner pool("MaxPool");
        pool.Input(xt);
        auto pooled = WindowAttrs(pool, c).RunOne();
        ASSERT_TRUE(pooled.ok()) << pooled.status();
        KernelRunner fused("_FusedMaxPoolGrad");
        fused.Input(xt).Input(*pooled).Input(gt);
        if (parallel) fused.OnDevice(&two_threads);
        auto out = WindowAttrs(fused, c).Run();
        ASSERT_TRUE(out.ok()) << out.status();
        ASSERT_EQ(out->size(), 2u);
        EXPECT_EQ((*out)[0].shape(), TensorShape(c.in));
        EXPECT_EQ((*out)[1].shape(), TensorShape({c.in[3]}));
        // The values are routed copies of g: exact.
        EXPECT_EQ(ToDoubles((*out)[0]), want.backprops);
        ExpectNearAll(ToDoubles((*out)[1]), want.bias, dt == DT_FLOAT ? 1e-6 : 1e-12);

        // The unfused chain: the same bits for backprops.
        KernelRunner mpg("MaxPoolGrad");
        mpg.Input(xt).Input(*pooled).Input(gt);
        auto routed = WindowAttrs(mpg, c).RunOne();
        ASSERT_TRUE(routed.ok()) << routed.status();
        auto relu = KernelRunner("ReluGrad").Input(*routed).Input(xt).RunOne();
        ASSERT_TRUE(relu.ok()) << relu.status();
        EXPECT_EQ(0, std::memcmp(relu->raw_data(), (*out)[0].raw_data(), relu->TotalBytes()));
        auto bias = KernelRunner("BiasAddGrad").Input(*relu).RunOne();
        ASSERT_TRUE(bias.ok()) << bias.status();
        ExpectNearAll(ToDoubles((*out)[1]), ToDoubles(*bias), dt == DT_FLOAT ? 1e-6 : 1e-12);
      }
    }
  }
}

TEST(FusedMaxPoolGrad, HandWorkedExample) {
  // One image 2x4, one channel, 2x2 windows: window 0 = {1, 3; 3, 0} has its first maximum 3 at
  // (0, 1) (tied with (1, 0)); window 1 = {-1, -2; -5, -1} has its maximum <= 0 (ReLU off).
  const Cfg c{{1, 2, 4, 1}, 2, 2, 2, 2, "VALID", {}};
  KernelRunner r("_FusedMaxPoolGrad");
  r.Input(test::AsTensor<float>({1, 3, -1, -2, 3, 0, -5, -1}, {1, 2, 4, 1}))
      .Input(test::AsTensor<float>({3, -1}, {1, 1, 2, 1}))
      .Input(test::AsTensor<float>({10, 20}, {1, 1, 2, 1}));
  auto out = WindowAttrs(r, c).Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles((*out)[0]), std::vector<double>({0, 10, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(ToDoubles((*out)[1]), std::vector<double>({10}));
}

TEST(FusedMaxPoolGrad, WritesIntoTheInputsBuffer) {
  const Cfg c{{2, 6, 4, 16}, 2, 2, 2, 2, "VALID", {}};
  const std::vector<double> x = Grid(2 * 6 * 4 * 16, 3), g = Grid(2 * 3 * 2 * 16, 5);
  const Expected want = FusedReference(c, x, g);
  Tensor xt = FromDoubles(DT_FLOAT, TensorShape(c.in), x);
  const void* buffer = xt.raw_data();
  KernelRunner r("_FusedMaxPoolGrad");
  r.Input(std::move(xt))
      .Input(FromDoubles(DT_FLOAT, TensorShape(want.pooled), std::vector<double>(g.size())))
      .Input(FromDoubles(DT_FLOAT, TensorShape(want.pooled), g));
  auto out = WindowAttrs(r, c).Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].raw_data(), buffer);  // forwarded: read and written in place
  EXPECT_EQ(ToDoubles((*out)[0]), want.backprops);
}

TEST(FusedMaxPoolGrad, EmptyTensors) {
  for (const std::vector<int64_t>& dims :
       std::vector<std::vector<int64_t>>{{0, 4, 4, 3}, {2, 4, 4, 0}, {2, 0, 4, 3}}) {
    const Cfg c{dims, 2, 2, 2, 2, "SAME", {}};
    int64_t oh, ow, unused;
    pool_test::Geometry(c, 1, &oh, &unused);
    pool_test::Geometry(c, 2, &ow, &unused);
    const TensorShape pooled({dims[0], oh, ow, dims[3]});
    KernelRunner r("_FusedMaxPoolGrad");
    r.Input(FromDoubles(DT_FLOAT, TensorShape(dims), {}))
        .Input(FromDoubles(DT_FLOAT, pooled, {}))
        .Input(FromDoubles(DT_FLOAT, pooled, {}));
    auto out = WindowAttrs(r, c).Run();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), TensorShape(dims));
    EXPECT_EQ(ToDoubles((*out)[1]), std::vector<double>(dims[3], 0.0));
  }
}

TEST(FusedMaxPoolGrad, InvalidAttrsAndShapes) {
  const Tensor x = FromDoubles(DT_FLOAT, TensorShape({1, 4, 4, 2}), Grid(32, 1));
  const Tensor p = FromDoubles(DT_FLOAT, TensorShape({1, 2, 2, 2}), Grid(8, 2));
  auto run = [&](const Cfg& c, const Tensor& a, const Tensor& b, const Tensor& g) {
    KernelRunner r("_FusedMaxPoolGrad");
    r.Input(a).Input(b).Input(g);
    return WindowAttrs(r, c).Run().status();
  };
  const Cfg ok{{1, 4, 4, 2}, 2, 2, 2, 2, "VALID", {}};
  // Overlapping windows: the op's precondition.
  test::ExpectInvalid(run({{}, 3, 2, 2, 2, "VALID", {}}, x, p, p), "windows must not overlap");
  test::ExpectInvalid(run({{}, 2, 2, 2, 1, "VALID", {}}, x, p, p), "windows must not overlap");
  // grad and orig_output must have the pooled shape; the input must be rank 4.
  const Tensor wrong = FromDoubles(DT_FLOAT, TensorShape({1, 2, 3, 2}), Grid(12, 3));
  test::ExpectInvalid(run(ok, x, p, wrong), "grad has shape");
  test::ExpectInvalid(run(ok, x, wrong, p), "orig_output has shape");
  test::ExpectInvalid(run(ok, FromDoubles(DT_FLOAT, TensorShape({4, 4, 2}), Grid(32, 1)), p, p),
                      "4-dimensional");
  // NCHW is not supported (the pooling kernels' layout is NHWC).
  KernelRunner nchw("_FusedMaxPoolGrad");
  nchw.Input(x).Input(p).Input(p).Attr("data_format", std::string("NCHW"));
  test::ExpectInvalid(WindowAttrs(nchw, ok).Run(), "NHWC");
  // Types other than float and double have no kernel.
  KernelRunner half("_FusedMaxPoolGrad");
  half.Input(FromDoubles(DT_HALF, TensorShape({1, 4, 4, 2}), Grid(32, 1)))
      .Input(FromDoubles(DT_HALF, TensorShape({1, 2, 2, 2}), Grid(8, 2)))
      .Input(FromDoubles(DT_HALF, TensorShape({1, 2, 2, 2}), Grid(8, 2)));
  EXPECT_FALSE(WindowAttrs(half, ok).Run().ok());
}

TEST(FusedMaxPoolGrad, ShapeFunction) {
  const Cfg c{{2, 6, 6, 3}, 2, 2, 2, 2, "VALID", {}};
  KernelRunner r("_FusedMaxPoolGrad");
  r.Input(Tensor(DT_FLOAT, TensorShape({0}))).Input(Tensor(DT_FLOAT, TensorShape({0})))
      .Input(Tensor(DT_FLOAT, TensorShape({0})));
  WindowAttrs(r, c);
  auto known = r.InferShapes({PartialTensorShape({2, 6, 6, 3}), PartialTensorShape({2, 3, 3, 3}),
                              PartialTensorShape({2, 3, 3, 3})});
  ASSERT_TRUE(known.ok()) << known.status();
  EXPECT_EQ((*known)[0], PartialTensorShape({2, 6, 6, 3}));
  EXPECT_EQ((*known)[1], PartialTensorShape({3}));
  auto unknown = r.InferShapes({PartialTensorShape(), PartialTensorShape(), PartialTensorShape()});
  ASSERT_TRUE(unknown.ok()) << unknown.status();
  EXPECT_EQ((*unknown)[0], PartialTensorShape({-1, -1, -1, -1}));
  EXPECT_EQ((*unknown)[1], PartialTensorShape({-1}));
  auto bad = r.InferShapes({PartialTensorShape({2, 6, 6, 3}), PartialTensorShape({2, 3, 3, 3}),
                            PartialTensorShape({2, 2, 3, 3})});
  test::ExpectInvalid(bad.status(), "_FusedMaxPoolGrad input 2");
}

}  // namespace
}  // namespace tensorflux
