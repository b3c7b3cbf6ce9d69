// The Conv2D family (ops/conv_ops.cc, kernels/cpu/conv_*.cc) against a float64 reference built
// here another way: the test enumerates every (output, input, filter) element triple that a
// convolution connects, with its own output-size/padding arithmetic and its own indexing of the
// depthwise [kh, kw, C, M] filter; the forward op and both backprop ops are then the three sums
// over that list. Cases: strides, dilations, SAME/VALID/EXPLICIT, batch 1 and 3, odd sizes, 1x1,
// empty batch and zero spatial dims, grouped Conv2D, NCHW, big and small values; float32 (oneDNN),
// half and bfloat16 (widened to float32) and float64 (direct loops). Then invalid attrs/inputs (INVALID_ARGUMENT, never a crash), the
// shape functions and a session run that reuses the cached primitive.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

struct Case {
  std::string label;
  int64_t n, h, w, c;        // input, logical NHWC
  int64_t kh, kw, kin, kout;  // filter dims as the op receives them
  int64_t sr = 1, sc = 1, dr = 1, dc = 1;
  std::string padding = "VALID";
  std::vector<int64_t> pads = {};  // EXPLICIT: top, bottom, left, right
  bool nchw = false;
  bool depthwise = false;
  double scale = 1;  // multiplies every value (big/small magnitudes)
};

struct Dim {
  int64_t out, before;
};

// Output size and leading pad of one spatial dim, TF's rules written out directly.
Dim SpatialDim(const Case& c, int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb,
               int64_t pa) {
  const int64_t keff = (k - 1) * d + 1;
  if (c.padding == "VALID") return {in >= keff ? (in - keff) / s + 1 : 0, 0};
  if (c.padding == "SAME") {
    const int64_t out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (out - 1) * s + keff - in);
    return {out, total / 2};
  }
  const int64_t span = in + pb + pa - keff;  // the padded input must hold the filter once
  return {span >= 0 ? span / s + 1 : 0, pb};
}

struct Conn {
  int64_t y, x, f;
};

struct Reference {
  TensorShape x_shape, f_shape, y_shape;
  std::vector<Conn> conns;
};

Reference Connect(const Case& c) {
  Reference r;
  const int64_t pt = c.pads.empty() ? 0 : c.pads[0], pbm = c.pads.empty() ? 0 : c.pads[1];
  const int64_t pl = c.pads.empty() ? 0 : c.pads[2], pr = c.pads.empty() ? 0 : c.pads[3];
  const Dim rows = SpatialDim(c, c.h, c.kh, c.sr, c.dr, pt, pbm);
  const Dim cols = SpatialDim(c, c.w, c.kw, c.sc, c.dc, pl, pr);
  const int64_t out_c = c.depthwise ? c.c * c.kout : c.kout;
  auto shape = [&](int64_t n, int64_t h, int64_t w, int64_t ch) {
    return c.nchw ? TensorShape({n, ch, h, w}) : TensorShape({n, h, w, ch});
  };
  r.x_shape = shape(c.n, c.h, c.w, c.c);
  r.y_shape = shape(c.n, rows.out, cols.out, out_c);
  r.f_shape = TensorShape({c.kh, c.kw, c.kin, c.kout});
  auto index = [&](int64_t n, int64_t h, int64_t w, int64_t ch, int64_t H, int64_t W,
                   int64_t C) {
    return c.nchw ? ((n * C + ch) * H + h) * W + w : ((n * H + h) * W + w) * C + ch;
  };
  for (int64_t n = 0; n < c.n; ++n) {
    for (int64_t oh = 0; oh < rows.out; ++oh) {
      for (int64_t ow = 0; ow < cols.out; ++ow) {
        for (int64_t oc = 0; oc < out_c; ++oc) {
          const int64_t yi = index(n, oh, ow, oc, rows.out, cols.out, out_c);
          for (int64_t i = 0; i < c.kh; ++i) {
            for (int64_t j = 0; j < c.kw; ++j) {
              const int64_t ih = oh * c.sr + i * c.dr - rows.before;
              const int64_t iw = ow * c.sc + j * c.dc - cols.before;
              if (ih < 0 || ih >= c.h || iw < 0 || iw >= c.w) continue;
              if (c.depthwise) {  // output channel oc = ic * M + m reads input channel ic
                const int64_t ic = oc / c.kout, m = oc % c.kout;
                r.conns.push_back({yi, index(n, ih, iw, ic, c.h, c.w, c.c),
                                   ((i * c.kw + j) * c.kin + ic) * c.kout + m});
              } else {  // groups of kin input channels; output channel oc is in group oc / per
                const int64_t per = c.kout / (c.c / c.kin);
                for (int64_t k = 0; k < c.kin; ++k) {
                  const int64_t ic = (oc / per) * c.kin + k;
                  r.conns.push_back({yi, index(n, ih, iw, ic, c.h, c.w, c.c),
                                     ((i * c.kw + j) * c.kin + k) * c.kout + oc});
                }
              }
            }
          }
        }
      }
    }
  }
  return r;
}

std::vector<double> Values(int64_t n, uint32_t seed, double scale) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 7u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = ((s >> 8) / double(1 << 24) * 2 - 1) * scale;
  }
  return v;
}

void SetConvAttrs(KernelRunner* r, const Case& c) {
  const bool nchw = c.nchw;
  auto four = [&](int64_t a, int64_t b) {
    return nchw ? std::vector<int64_t>{1, 1, a, b} : std::vector<int64_t>{1, a, b, 1};
  };
  r->Attr("strides", four(c.sr, c.sc)).Attr("dilations", four(c.dr, c.dc));
  r->Attr("padding", c.padding).Attr("data_format", nchw ? "NCHW" : "NHWC");
  if (!c.pads.empty()) {
    std::vector<int64_t> p = nchw ? std::vector<int64_t>{0, 0, 0, 0, c.pads[0], c.pads[1],
                                                         c.pads[2], c.pads[3]}
                                  : std::vector<int64_t>{0, 0, c.pads[0], c.pads[1], c.pads[2],
                                                         c.pads[3], 0, 0};
    r->Attr("explicit_paddings", p);
  }
}

Tensor SizesTensor(const TensorShape& s) {
  std::vector<int32_t> v;
  for (int64_t d : s.dim_sizes()) v.push_back(static_cast<int32_t>(d));
  return AsTensor<int32_t>(v, {static_cast<int64_t>(v.size())});
}

enum class Which { kForward, kInput, kFilter };

// Runs one op of the family for `c` in `dt` and compares with the triple-list sums.
void Check(const Case& c, DataType dt, Which which) {
  const Reference ref = Connect(c);
  const char* ops[2][3] = {
      {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"},
      {"DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
       "DepthwiseConv2dNativeBackpropFilter"}};
  const std::string op = ops[c.depthwise][static_cast<int>(which)];
  const std::string what = absl::StrCat(op, " ", c.label, " ", DataTypeString(dt));
  Tensor x = FromDoubles(dt, ref.x_shape, Values(ref.x_shape.num_elements(), 1, c.scale));
  Tensor f = FromDoubles(dt, ref.f_shape, Values(ref.f_shape.num_elements(), 2, c.scale));
  Tensor dy = FromDoubles(dt, ref.y_shape, Values(ref.y_shape.num_elements(), 3, c.scale));
  const std::vector<double> xv = ToDoubles(x), fv = ToDoubles(f), dyv = ToDoubles(dy);
  KernelRunner r(op, "conv");
  SetConvAttrs(&r, c);
  std::vector<double> want, mag;
  TensorShape want_shape;
  if (which == Which::kForward) {
    r.Input(x).Input(f);
    want_shape = ref.y_shape;
    want.assign(ref.y_shape.num_elements(), 0);
    mag = want;
    for (const Conn& k : ref.conns) {
      want[k.y] += xv[k.x] * fv[k.f];
      mag[k.y] += std::fabs(xv[k.x] * fv[k.f]);
    }
  } else if (which == Which::kInput) {
    r.Input(SizesTensor(ref.x_shape)).Input(f).Input(dy);
    want_shape = ref.x_shape;
    want.assign(ref.x_shape.num_elements(), 0);
    mag = want;
    for (const Conn& k : ref.conns) {
      want[k.x] += dyv[k.y] * fv[k.f];
      mag[k.x] += std::fabs(dyv[k.y] * fv[k.f]);
    }
  } else {
    r.Input(x).Input(SizesTensor(ref.f_shape)).Input(dy);
    want_shape = ref.f_shape;
    want.assign(ref.f_shape.num_elements(), 0);
    mag = want;
    for (const Conn& k : ref.conns) {
      want[k.f] += dyv[k.y] * xv[k.x];
      mag[k.f] += std::fabs(dyv[k.y] * xv[k.x]);
    }
  }
  auto out = r.RunOne();
  ASSERT_TRUE(out.ok()) << what << ": " << out.status();
  ASSERT_EQ(out->shape(), want_shape) << what;
  const std::vector<double> got = ToDoubles(*out);
  // Per element: the accumulation error of the working precision (float32 for every type but
  // double) plus one rounding of the result to the dtype, both relative to sum |terms|.
  const double rel = dt == DT_DOUBLE     ? 1e-13
                     : dt == DT_HALF     ? 1e-3
                     : dt == DT_BFLOAT16 ? 8e-3
                                         : 1e-5;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    const double tol = rel * mag[i] + 1e-300;
    if (!(std::fabs(got[i] - want[i]) <= tol)) {
      ++bad;
      ADD_FAILURE() << what << " at " << i << ": got " << got[i] << ", want " << want[i]
                    << " (tolerance " << tol << ")";
    }
  }
}

std::vector<Case> ConvCases() {
  std::vector<Case> cases;
  auto add = [&](Case c) { cases.push_back(c); };
  add({.label = "valid_3x3", .n = 1, .h = 5, .w = 5, .c = 2, .kh = 3, .kw = 3, .kin = 2, .kout = 3});
  add({.label = "same_3x3_batch3", .n = 3, .h = 6, .w = 7, .c = 3, .kh = 3, .kw = 3, .kin = 3,
       .kout = 4, .padding = "SAME"});
  add({.label = "same_stride2_odd", .n = 2, .h = 7, .w = 9, .c = 3, .kh = 3, .kw = 2, .kin = 3,
       .kout = 5, .sr = 2, .sc = 3, .padding = "SAME"});
  add({.label = "valid_stride2", .n = 1, .h = 8, .w = 7, .c = 2, .kh = 2, .kw = 3, .kin = 2,
       .kout = 2, .sr = 2, .sc = 2});
  add({.label = "dilation2_same", .n = 2, .h = 7, .w = 8, .c = 2, .kh = 3, .kw = 3, .kin = 2,
       .kout = 3, .dr = 2, .dc = 3, .padding = "SAME"});
  add({.label = "dilation_stride_valid", .n = 1, .h = 9, .w = 9, .c = 1, .kh = 2, .kw = 3,
       .kin = 1, .kout = 2, .sr = 2, .sc = 1, .dr = 3, .dc = 2});
  add({.label = "explicit", .n = 2, .h = 5, .w = 4, .c = 2, .kh = 3, .kw = 2, .kin = 2,
       .kout = 3, .padding = "EXPLICIT", .pads = {1, 2, 0, 3}});
  add({.label = "explicit_stride_dilation", .n = 1, .h = 6, .w = 6, .c = 3, .kh = 2, .kw = 2,
       .kin = 3, .kout = 2, .sr = 2, .sc = 3, .dr = 2, .dc = 1, .padding = "EXPLICIT",
       .pads = {3, 0, 2, 2}});
  add({.label = "1x1", .n = 3, .h = 4, .w = 5, .c = 6, .kh = 1, .kw = 1, .kin = 6, .kout = 7});
  add({.label = "filter_as_big_as_input", .n = 2, .h = 3, .w = 4, .c = 2, .kh = 3, .kw = 4,
       .kin = 2, .kout = 3});
  add({.label = "wide_channels", .n = 2, .h = 9, .w = 9, .c = 32, .kh = 3, .kw = 3, .kin = 32,
       .kout = 48, .padding = "SAME"});
  add({.label = "nchw_same_stride2", .n = 2, .h = 7, .w = 6, .c = 3, .kh = 3, .kw = 3, .kin = 3,
       .kout = 4, .sr = 2, .sc = 2, .padding = "SAME", .nchw = true});
  add({.label = "nchw_explicit_dilated", .n = 1, .h = 6, .w = 7, .c = 2, .kh = 2, .kw = 3,
       .kin = 2, .kout = 2, .dr = 2, .dc = 2, .padding = "EXPLICIT", .pads = {1, 1, 2, 0},
       .nchw = true});
  add({.label = "grouped_2", .n = 2, .h = 5, .w = 5, .c = 4, .kh = 3, .kw = 3, .kin = 2,
       .kout = 6, .padding = "SAME"});
  add({.label = "grouped_3_nchw", .n = 1, .h = 4, .w = 6, .c = 6, .kh = 2, .kw = 2, .kin = 2,
       .kout = 3, .sr = 2, .sc = 1, .nchw = true});
  add({.label = "big_values", .n = 1, .h = 5, .w = 5, .c = 3, .kh = 3, .kw = 3, .kin = 3,
       .kout = 2, .padding = "SAME", .scale = 1e15});
  add({.label = "small_values", .n = 1, .h = 5, .w = 5, .c = 3, .kh = 3, .kw = 3, .kin = 3,
       .kout = 2, .padding = "SAME", .scale = 1e-15});
  return cases;
}

std::vector<Case> DepthwiseCases() {
  std::vector<Case> cases;
  auto add = [&](Case c) {
    c.depthwise = true;
    cases.push_back(c);
  };
  add({.label = "valid_mult1", .n = 1, .h = 5, .w = 5, .c = 3, .kh = 3, .kw = 3, .kin = 3,
       .kout = 1});
  add({.label = "same_mult2_batch3", .n = 3, .h = 6, .w = 5, .c = 2, .kh = 3, .kw = 3, .kin = 2,
       .kout = 2, .padding = "SAME"});
  add({.label = "stride2_odd", .n = 2, .h = 7, .w = 9, .c = 4, .kh = 2, .kw = 3, .kin = 4,
       .kout = 3, .sr = 2, .sc = 2, .padding = "SAME"});
  add({.label = "dilated", .n = 1, .h = 8, .w = 8, .c = 2, .kh = 3, .kw = 3, .kin = 2,
       .kout = 2, .dr = 2, .dc = 2});
  add({.label = "explicit", .n = 2, .h = 4, .w = 5, .c = 3, .kh = 3, .kw = 2, .kin = 3,
       .kout = 2, .padding = "EXPLICIT", .pads = {2, 1, 1, 0}});
  add({.label = "nchw", .n = 2, .h = 5, .w = 6, .c = 3, .kh = 3, .kw = 3, .kin = 3, .kout = 2,
       .padding = "SAME", .nchw = true});
  add({.label = "1x1_many_channels", .n = 2, .h = 3, .w = 3, .c = 32, .kh = 1, .kw = 1,
       .kin = 32, .kout = 1});
  return cases;
}

TEST(ConvOpsTest, Conv2DAgainstReference) {
  for (const Case& c : ConvCases()) {
    for (DataType dt : {DT_FLOAT, DT_DOUBLE}) {
      if (dt == DT_FLOAT && c.scale != 1) continue;  // 1e15^2 products: float64 only
      for (Which w : {Which::kForward, Which::kInput, Which::kFilter}) Check(c, dt, w);
    }
  }
}

TEST(ConvOpsTest, Float32BigAndSmallMagnitudes) {
  // Products of 1e15 overflow float32; 1e18 and 1e-18 products stay inside its range.
  for (double scale : {1e9, 1e-9}) {
    Case c{.label = "float_scale", .n = 2, .h = 5, .w = 4, .c = 3, .kh = 3, .kw = 3, .kin = 3,
           .kout = 4, .padding = "SAME", .scale = scale};
    for (Which w : {Which::kForward, Which::kInput, Which::kFilter}) Check(c, DT_FLOAT, w);
  }
}

TEST(ConvOpsTest, HalfAndBfloat16WidenToFloat) {
  std::vector<Case> cases = ConvCases();
  for (const Case& d : DepthwiseCases()) cases.push_back(d);
  for (const Case& c : cases) {
    if (c.scale != 1 || c.label == "wide_channels") continue;  // the reference's slowest case
    for (DataType dt : {DT_HALF, DT_BFLOAT16}) {
      for (Which w : {Which::kForward, Which::kInput, Which::kFilter}) Check(c, dt, w);
    }
  }
}

TEST(ConvOpsTest, DepthwiseAgainstReference) {
  for (const Case& c : DepthwiseCases()) {
    for (DataType dt : {DT_FLOAT, DT_DOUBLE}) {
      for (Which w : {Which::kForward, Which::kInput, Which::kFilter}) Check(c, dt, w);
    }
  }
}

TEST(ConvOpsTest, EmptyBatchAndZeroSizes) {
  std::vector<Case> cases = {
      {.label = "empty_batch", .n = 0, .h = 5, .w = 5, .c = 2, .kh = 3, .kw = 3, .kin = 2,
       .kout = 3, .padding = "SAME"},
      {.label = "zero_rows_same", .n = 2, .h = 0, .w = 5, .c = 2, .kh = 3, .kw = 3, .kin = 2,
       .kout = 3, .padding = "SAME"},
      // The input has no rows, but padding makes a 2-row output: all zeros.
      {.label = "zero_rows_explicit", .n = 1, .h = 0, .w = 3, .c = 2, .kh = 1, .kw = 1, .kin = 2,
       .kout = 3, .padding = "EXPLICIT", .pads = {1, 1, 0, 0}},
  };
  for (Case c : cases) {
    for (bool dw : {false, true}) {
      c.depthwise = dw;
      if (dw) c.kout = 2;
      for (DataType dt : {DT_FLOAT, DT_DOUBLE}) {
        for (Which w : {Which::kForward, Which::kInput, Which::kFilter}) Check(c, dt, w);
      }
    }
  }
}

// A filter larger than the input under VALID is refused, as TF's shape function refuses it, even
// with a stride for which the size formula gives an empty output (2 rows, 3-row filter, stride 2).
TEST(ConvOpsTest, FilterLargerThanInputIsRefused) {
  for (const char* op : {"Conv2D", "DepthwiseConv2dNative"}) {
    KernelRunner r(op, "big_filter");
    r.Attr("strides", std::vector<int64_t>{1, 2, 1, 1})
        .Attr("dilations", std::vector<int64_t>{1, 1, 1, 1})
        .Attr("padding", "VALID")
        .Attr("data_format", "NHWC");
    r.Input(Tensor(DT_FLOAT, TensorShape({2, 2, 5, 2})))
        .Input(Tensor(DT_FLOAT, TensorShape({3, 3, 2, 2})));
    test::ExpectInvalid(r.Run(), "negative");
  }
}

TEST(ConvOpsTest, InputSizesWithTwoElements) {
  // TF accepts the spatial dims only: batch from out_backprop, depth from the filter.
  const Case c{.label = "sizes2", .n = 2, .h = 5, .w = 6, .c = 3, .kh = 3, .kw = 3, .kin = 3,
               .kout = 2, .padding = "SAME"};
  const Reference ref = Connect(c);
  Tensor f = FromDoubles(DT_FLOAT, ref.f_shape, Values(ref.f_shape.num_elements(), 2, 1));
  Tensor dy = FromDoubles(DT_FLOAT, ref.y_shape, Values(ref.y_shape.num_elements(), 3, 1));
  KernelRunner full("Conv2DBackpropInput");
  SetConvAttrs(&full, c);
  auto a = full.Input(SizesTensor(ref.x_shape)).Input(f).Input(dy).RunOne();
  KernelRunner two("Conv2DBackpropInput");
  SetConvAttrs(&two, c);
  auto b = two.Input(AsTensor<int32_t>({5, 6}, {2})).Input(f).Input(dy).RunOne();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->shape(), ref.x_shape);
  EXPECT_EQ(ToDoubles(*a), ToDoubles(*b));
}

// Random small geometries, valid and not (zero dims, filters larger than the input, pads larger
// than the filter, channel counts that do not divide): every run either matches the reference or
// is INVALID_ARGUMENT; nothing else (no oneDNN error, no crash).
TEST(ConvOpsTest, RandomGeometriesMatchOrAreInvalid) {
  uint32_t s = 12345;
  auto next = [&](int n) {
    s = s * 1664525u + 1013904223u;
    return static_cast<int64_t>((s >> 8) % static_cast<uint32_t>(n));
  };
  int valid = 0;
  for (int iter = 0; iter < 300; ++iter) {
    Case c;
    c.label = absl::StrCat("random", iter);
    c.depthwise = next(3) == 0;
    c.n = next(3);
    c.h = next(7);
    c.w = next(7);
    c.c = 1 + next(4);
    c.kh = next(5);
    c.kw = 1 + next(4);
    c.kin = c.depthwise ? c.c : 1 + next(4);
    c.kout = 1 + next(4);
    c.sr = 1 + next(3);
    c.sc = 1 + next(3);
    c.dr = 1 + next(3);
    c.dc = 1 + next(2);
    const int p = static_cast<int>(next(3));
    c.padding = p == 0 ? "VALID" : p == 1 ? "SAME" : "EXPLICIT";
    if (p == 2) c.pads = {next(4), next(4), next(4), next(4)};
    c.nchw = next(2) == 1;
    const DataType dt = next(2) == 0 ? DT_FLOAT : DT_DOUBLE;
    KernelRunner r(c.depthwise ? "DepthwiseConv2dNative" : "Conv2D", "random");
    SetConvAttrs(&r, c);
    const TensorShape x = c.nchw ? TensorShape({c.n, c.c, c.h, c.w})
                                 : TensorShape({c.n, c.h, c.w, c.c});
    r.Input(Tensor(dt, x)).Input(Tensor(dt, TensorShape({c.kh, c.kw, c.kin, c.kout})));
    auto out = r.Run();
    if (!out.ok()) {
      EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument)
          << c.label << ": " << out.status();
      continue;
    }
    ++valid;
    for (Which w : {Which::kForward, Which::kInput, Which::kFilter}) Check(c, dt, w);
  }
  EXPECT_GT(valid, 60);  // the generator reaches the compute paths, not only the errors
}

// ---------------------------------------------------------------- errors

struct ErrorCase {
  std::string label;
  std::string op = "Conv2D";
  TensorShape x = {1, 5, 5, 2};
  TensorShape f = {3, 3, 2, 4};
  std::vector<int64_t> strides = {1, 1, 1, 1};
  std::vector<int64_t> dilations = {1, 1, 1, 1};
  std::string padding = "SAME";
  std::vector<int64_t> pads = {};
  std::string format = "NHWC";
  std::string message;
};

TEST(ConvOpsTest, InvalidArgumentsNameTheNode) {
  const std::vector<ErrorCase> cases = {
      {.label = "input rank 3", .x = {5, 5, 2}, .message = "input must be 4-dimensional"},
      {.label = "filter rank 5", .f = {3, 3, 2, 4, 1}, .message = "filter must be 4-dimensional"},
      {.label = "channel mismatch", .f = {3, 3, 3, 4}, .message = "evenly divisible"},
      {.label = "groups do not divide out", .x = {1, 5, 5, 4}, .f = {3, 3, 2, 3},
       .message = "number of groups"},
      {.label = "depthwise channel mismatch", .op = "DepthwiseConv2dNative", .f = {3, 3, 3, 1},
       .message = "must equal the filter's in depth"},
      {.label = "filter zero dim", .f = {0, 3, 2, 4}, .message = "zero elements"},
      {.label = "strides length 3", .strides = {1, 1, 1}, .message = "strides must have 4"},
      {.label = "batch stride", .strides = {2, 1, 1, 1}, .message = "batch and depth"},
      {.label = "depth stride", .strides = {1, 1, 1, 2}, .message = "batch and depth"},
      {.label = "zero stride", .strides = {1, 0, 1, 1}, .message = "must be positive"},
      {.label = "negative dilation", .dilations = {1, 1, -2, 1}, .message = "must be positive"},
      {.label = "depth dilation", .dilations = {1, 1, 1, 2}, .message = "batch and depth"},
      {.label = "bad padding", .padding = "FULL", .message = "padding"},
      {.label = "bad format", .format = "NHCW", .message = "data_format"},
      {.label = "explicit length", .padding = "EXPLICIT", .pads = {0, 0, 1, 1},
       .message = "explicit_paddings must have 8"},
      {.label = "explicit negative", .padding = "EXPLICIT", .pads = {0, 0, -1, 1, 0, 0, 0, 0},
       .message = "non-negative"},
      {.label = "explicit on depth", .padding = "EXPLICIT", .pads = {0, 0, 1, 1, 1, 1, 1, 0},
       .message = "batch and depth"},
      {.label = "pads without EXPLICIT", .pads = {0, 0, 1, 1, 1, 1, 0, 0},
       .message = "must be empty"},
      {.label = "negative output", .x = {1, 1, 5, 2}, .padding = "VALID",
       .message = "output size would be negative"},
      {.label = "huge dilation", .dilations = {1, int64_t{1} << 40, 1, 1},
       .message = "too large"},
  };
  for (const ErrorCase& e : cases) {
    for (const char* dt : {"float", "double"}) {
      KernelRunner r(e.op, "bad_conv");
      r.Attr("strides", e.strides).Attr("dilations", e.dilations).Attr("padding", e.padding);
      r.Attr("data_format", e.format);
      if (!e.pads.empty()) r.Attr("explicit_paddings", e.pads);
      const DataType t = std::string(dt) == "float" ? DT_FLOAT : DT_DOUBLE;
      r.Input(Tensor(t, e.x)).Input(Tensor(t, e.f));
      auto out = r.Run();
      ASSERT_FALSE(out.ok()) << e.label;
      // Strides and dilations over the batch or depth dims are UNIMPLEMENTED, as in TF.
      const bool unimplemented = e.message == "batch and depth" && e.pads.empty();
      EXPECT_EQ(out.status().code(), unimplemented ? absl::StatusCode::kUnimplemented
                                                   : absl::StatusCode::kInvalidArgument)
          << e.label;
      EXPECT_THAT(out.status().message(), HasSubstr(e.message)) << e.label;
      EXPECT_THAT(out.status().message(), HasSubstr("'bad_conv'")) << e.label;
      // The shape function rejects the same graph.
      auto s = r.InferShapes({PartialTensorShape(e.x), PartialTensorShape(e.f)});
      EXPECT_FALSE(s.ok()) << e.label << " (shape fn)";
    }
  }
}

TEST(ConvOpsTest, BackpropInvalidSizes) {
  const Tensor f(DT_FLOAT, TensorShape({3, 3, 2, 4}));
  const Tensor x(DT_FLOAT, TensorShape({1, 5, 5, 2}));
  const Tensor dy(DT_FLOAT, TensorShape({1, 5, 5, 4}));
  auto run = [](const char* op, Tensor a, Tensor b, Tensor c) {
    KernelRunner r(op, "bp");
    r.Attr("strides", std::vector<int64_t>{1, 1, 1, 1}).Attr("padding", "SAME");
    return r.Input(a).Input(b).Input(c).Run();
  };
  struct Bad {
    Tensor sizes;
    std::string message;
  };
  const std::vector<Bad> bad_input_sizes = {
      {AsTensor<int32_t>({1, 5, 5}, {3}), "input_sizes must have 4 elements"},
      {AsTensor<int32_t>({1, 5, -5, 2}, {4}), "non-negative"},
      {AsTensor<int32_t>({1, 6, 5, 2}, {4}), "does not match the computed output shape"},
      {AsTensor<int32_t>({1, 5, 5, 3}, {4}), "evenly divisible"},
      {AsTensor<int32_t>({1, 5, 5, 2}, {2, 2}), "must be 1-dimensional"},
  };
  for (const Bad& b : bad_input_sizes) {
    auto out = run("Conv2DBackpropInput", b.sizes, f, dy);
    ASSERT_FALSE(out.ok()) << b.message;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(out.status().message(), HasSubstr(b.message));
  }
  const std::vector<Bad> bad_filter_sizes = {
      {AsTensor<int32_t>({3, 3, 2}, {3}), "filter_sizes must have 4 elements"},
      {AsTensor<int32_t>({3, -3, 2, 4}, {4}), "non-negative"},
      {AsTensor<int32_t>({3, 3, 2, 5}, {4}), "does not match the computed output shape"},
      {AsTensor<int32_t>({3, 0, 2, 4}, {4}), "zero elements"},
  };
  for (const Bad& b : bad_filter_sizes) {
    auto out = run("Conv2DBackpropFilter", x, b.sizes, dy);
    ASSERT_FALSE(out.ok()) << b.message;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(out.status().message(), HasSubstr(b.message));
  }
  // A 1-D out_backprop.
  auto out = run("Conv2DBackpropFilter", x, AsTensor<int32_t>({3, 3, 2, 4}, {4}),
                 Tensor(DT_FLOAT, TensorShape({4})));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------- shape functions

TEST(ConvOpsTest, ShapeFunctions) {
  KernelRunner r("Conv2D", "c");
  r.Attr("strides", std::vector<int64_t>{1, 2, 2, 1}).Attr("padding", "SAME");
  r.Input(Tensor(DT_FLOAT, TensorShape({1, 1, 1, 1}))).Input(Tensor(DT_FLOAT, {1, 1, 1, 1}));
  auto s = r.InferShapes({PartialTensorShape({8, 7, 9, 3}), PartialTensorShape({3, 3, 3, 16})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({8, 4, 5, 16}));
  s = r.InferShapes({PartialTensorShape({-1, 7, -1, 3}), PartialTensorShape({3, 3, -1, 16})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, 4, -1, 16}));
  s = r.InferShapes({PartialTensorShape(), PartialTensorShape()});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, -1, -1, -1}));
  s = r.InferShapes({PartialTensorShape({-1, 7, 7, 3}), PartialTensorShape({3, 3, 2, 16})});
  EXPECT_FALSE(s.ok());

  KernelRunner d("DepthwiseConv2dNative", "d");
  d.Attr("strides", std::vector<int64_t>{1, 1, 1, 1}).Attr("padding", "VALID");
  d.Input(Tensor(DT_FLOAT, TensorShape({1, 1, 1, 1}))).Input(Tensor(DT_FLOAT, {1, 1, 1, 1}));
  s = d.InferShapes({PartialTensorShape({2, 5, 6, 3}), PartialTensorShape({3, 2, 3, 4})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 3, 5, 12}));

  KernelRunner bi("Conv2DBackpropInput", "bi");
  bi.Attr("strides", std::vector<int64_t>{1, 1, 1, 1}).Attr("padding", "SAME");
  const Tensor sizes = AsTensor<int32_t>({2, 5, 6, 3}, {4});
  bi.Input(sizes).Input(Tensor(DT_FLOAT, {1, 1, 1, 1})).Input(Tensor(DT_FLOAT, {1, 1, 1, 1}));
  s = bi.InferShapes({PartialTensorShape({4}), PartialTensorShape({3, 3, 3, 4}),
                      PartialTensorShape({2, 5, 6, 4})},
                     {&sizes, nullptr, nullptr});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 5, 6, 3}));
  s = bi.InferShapes({PartialTensorShape({4}), PartialTensorShape({3, 3, 3, 4}),
                      PartialTensorShape({2, 5, 6, 4})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, -1, -1, -1}));  // batch from out_backprop, as TF

  KernelRunner bf("Conv2DBackpropFilter", "bf");
  bf.Attr("strides", std::vector<int64_t>{1, 1, 1, 1}).Attr("padding", "SAME");
  const Tensor fsizes = AsTensor<int32_t>({3, 3, 3, 4}, {4});
  bf.Input(Tensor(DT_FLOAT, {1, 1, 1, 1})).Input(fsizes).Input(Tensor(DT_FLOAT, {1, 1, 1, 1}));
  s = bf.InferShapes({PartialTensorShape({2, 5, 6, 3}), PartialTensorShape({4}),
                      PartialTensorShape({2, 5, 6, 4})},
                     {nullptr, &fsizes, nullptr});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({3, 3, 3, 4}));
}

}  // namespace
}  // namespace tensorflux
