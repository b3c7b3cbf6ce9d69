// Slicing kernels (kernels/cpu/slice_ops.cc, ops/strided_slice_spec.cc): StridedSlice against an
// independent implementation of Python/NumPy basic indexing (ints, slices with any signs and
// steps, Ellipsis, newaxis), encoded into begin/end/strides + masks the way Python's __getitem__
// does; StridedSliceGrad as its adjoint; Slice with size -1; buffer sharing; shape functions;
// every bad input.

#include <optional>
#include <string>
#include <vector>

#include "array2_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tensorflux {
namespace {

using test::DimsOf;
using test::I32;
using test::I64;
using test::Iota;
using test::KernelRunner;
using test::ToDoubles;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using test::ExpectInvalid;

// One entry of a Python index expression.
struct Ix {
  enum Kind { kInt, kSlice, kEllipsis, kNewAxis } kind;
  int64_t i = 0;
  std::optional<int64_t> start, stop, step;
};
Ix Int(int64_t i) { return {Ix::kInt, i}; }
Ix Sl(std::optional<int64_t> a = {}, std::optional<int64_t> b = {},
      std::optional<int64_t> s = {}) {
  return {Ix::kSlice, 0, a, b, s};
}
const Ix kEll = {Ix::kEllipsis};
const Ix kNew = {Ix::kNewAxis};

// Python's slice.indices(): the positions a slice selects in a dim of size n.
std::vector<int64_t> SliceIndices(const Ix& s, int64_t n) {
  const int64_t step = s.step.value_or(1);
  int64_t start, stop;
  auto adjust = [&](std::optional<int64_t> v, int64_t dflt, int64_t lo, int64_t hi) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    return x < lo ? lo : x > hi ? hi : x;
  };
  if (step > 0) {
    start = adjust(s.start, 0, 0, n);
    stop = adjust(s.stop, n, 0, n);
  } else {
    start = adjust(s.start, n - 1, -1, n - 1);
    stop = adjust(s.stop, -1, -1, n - 1);
  }
  std::vector<int64_t> out;
  for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) out.push_back(k);
  return out;
}

// NumPy's x[spec] by loops; out_dims receives the result's shape.
std::vector<double> NumpyIndex(const std::vector<double>& x, const std::vector<int64_t>& dims,
                               const std::vector<Ix>& spec, std::vector<int64_t>* out_dims) {
  // Expand the ellipsis (or append one) into full slices.
  int consumed = 0;
  bool has_ell = false;
  for (const Ix& e : spec) {
    if (e.kind == Ix::kInt || e.kind == Ix::kSlice) ++consumed;
    if (e.kind == Ix::kEllipsis) has_ell = true;
  }
  std::vector<Ix> full;
  for (const Ix& e : spec) {
    if (e.kind == Ix::kEllipsis) {
      for (size_t k = 0; k < dims.size() - consumed; ++k) full.push_back(Sl());
    } else {
      full.push_back(e);
    }
  }
  if (!has_ell) {
    for (size_t k = consumed; k < dims.size(); ++k) full.push_back(Sl());
  }
  // Per input dim: the selected positions; and the output layout.
  std::vector<std::vector<int64_t>> sel;
  std::vector<int> layout;  // input dim index, or -1 for a new axis
  out_dims->clear();
  for (const Ix& e : full) {
    const int d = static_cast<int>(sel.size());
    if (e.kind == Ix::kNewAxis) {
      layout.push_back(-1);
      out_dims->push_back(1);
    } else if (e.kind == Ix::kInt) {
      sel.push_back({e.i < 0 ? e.i + dims[d] : e.i});
    } else {
      sel.push_back(SliceIndices(e, dims[d]));
      layout.push_back(d);
      out_dims->push_back(static_cast<int64_t>(sel.back().size()));
    }
  }
  int64_t total = 1;
  for (int64_t v : *out_dims) total *= v;
  std::vector<double> out(total);
  // Iterate over the selections of every input dim (shrunk dims have one).
  std::vector<int64_t> sel_dims;
  for (auto& s : sel) sel_dims.push_back(static_cast<int64_t>(s.size()));
  int64_t n = 1;
  for (int64_t v : sel_dims) n *= v;
  for (int64_t f = 0; f < n; ++f) {
    auto k = test::Unravel(f, sel_dims);
    std::vector<int64_t> src(dims.size());
    for (size_t d = 0; d < dims.size(); ++d) src[d] = sel[d][k[d]];
    std::vector<int64_t> dst;
    for (int l : layout) dst.push_back(l < 0 ? 0 : k[l]);
    out[test::Ravel(dst, *out_dims)] = x[test::Ravel(src, dims)];
  }
  return out;
}

// Encodes `spec` as StridedSlice inputs and attrs the way Python's __getitem__ does.
struct Encoded {
  std::vector<int64_t> begin, end, strides;
  int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_mask = 0;
};
Encoded Encode(const std::vector<Ix>& spec) {
  Encoded e;
  for (size_t k = 0; k < spec.size(); ++k) {
    const Ix& x = spec[k];
    const int64_t bit = int64_t{1} << k;
    if (x.kind == Ix::kInt) {
      e.begin.push_back(x.i);
      e.end.push_back(x.i + 1);
      e.strides.push_back(1);
      e.shrink_mask |= bit;
    } else if (x.kind == Ix::kSlice) {
      e.begin.push_back(x.start.value_or(0));
      e.end.push_back(x.stop.value_or(0));
      e.strides.push_back(x.step.value_or(1));
      if (!x.start) e.begin_mask |= bit;
      if (!x.stop) e.end_mask |= bit;
    } else {
      e.begin.push_back(0);
      e.end.push_back(0);
      e.strides.push_back(1);
      (x.kind == Ix::kEllipsis ? e.ellipsis_mask : e.new_axis_mask) |= bit;
    }
  }
  return e;
}

KernelRunner& SetMasks(KernelRunner& r, const Encoded& e) {
  return r.Attr("begin_mask", e.begin_mask)
      .Attr("end_mask", e.end_mask)
      .Attr("ellipsis_mask", e.ellipsis_mask)
      .Attr("new_axis_mask", e.new_axis_mask)
      .Attr("shrink_axis_mask", e.shrink_mask);
}

StatusOr<Tensor> RunStridedSlice(const Tensor& x, const std::vector<Ix>& spec,
                                 DataType index_type = DT_INT32) {
  Encoded e = Encode(spec);
  KernelRunner r("StridedSlice");
  auto idx = [&](const std::vector<int64_t>& v) {
    if (index_type == DT_INT64) return I64(v);
    return I32(std::vector<int32_t>(v.begin(), v.end()));
  };
  r.Input(x).Input(idx(e.begin)).Input(idx(e.end)).Input(idx(e.strides));
  return SetMasks(r, e).RunOne();
}

const std::vector<std::vector<Ix>>& Cases() {
  static const auto* cases = new std::vector<std::vector<Ix>>{
      {Sl(1, 3), Sl({}, {}, 2), Int(-1)},
      {Sl({}, {}, -1)},
      {kEll, Int(1)},
      {kNew, kEll, Sl({}, {}, -2)},
      {Int(2), kNew, Sl(1), Sl(-4, -1)},
      {Sl(-100, 100), Sl(3, 1), Sl({}, {}, 3)},
      {kEll, kNew},
      {Sl(5, 0, -2), Sl(-1), Sl({}, {}, -1)},
      {Sl(-1, -5, -1), kEll, Int(0)},
      {Int(-4), Int(4), Int(5)},
      {Sl(1, 2), kEll, Sl(2, 3)},
      {kEll},
      {Sl(), Sl(), Sl()},
      {Sl(2, 3)},
      {Sl(0, 100, 7), Sl(-2, {}, -3), kNew, kNew},
      {Sl({}, {}, -5), kEll, Sl(10, -10, -1)},
  };
  return *cases;
}

TEST(Array2StridedSliceTest, MatchesNumpyIndexing) {
  const std::vector<int64_t> dims = {4, 5, 6};
  for (DataType dt : {DT_FLOAT, DT_INT8, DT_INT64, DT_BFLOAT16}) {
    Tensor x = Iota(dt, TensorShape(dims));
    for (size_t c = 0; c < Cases().size(); ++c) {
      std::vector<int64_t> want_dims;
      const auto want = NumpyIndex(ToDoubles(x), dims, Cases()[c], &want_dims);
      auto out = RunStridedSlice(x, Cases()[c], c % 2 ? DT_INT64 : DT_INT32);
      ASSERT_TRUE(out.ok()) << "case " << c << ": " << out.status();
      EXPECT_EQ(DimsOf(*out), want_dims) << "case " << c;
      EXPECT_EQ(ToDoubles(*out), want) << "case " << c << " " << DataTypeString(dt);
    }
  }
}

TEST(Array2StridedSliceTest, StringsAndParallelDevice) {
  test::TestCpuDevice device(4);
  Tensor s = test::Strings(TensorShape({3, 4}));
  auto out = RunStridedSlice(s, {Sl({}, {}, -1), Sl(1, 4, 2)});
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(test::StringValues(*out), ElementsAre("s9", "s11", "s5", "s7", "s1", "s3"));
  // A large strided slice runs sharded.
  const std::vector<int64_t> dims = {64, 256, 8};
  Tensor x = Iota(DT_FLOAT, TensorShape(dims));
  const std::vector<Ix> spec = {Sl({}, {}, -1), Sl(1, {}, 3), Sl(-1, 0, -2)};
  Encoded e = Encode(spec);
  KernelRunner r("StridedSlice");
  r.OnDevice(&device).Input(x).Input(I64(e.begin)).Input(I64(e.end)).Input(I64(e.strides));
  auto big = SetMasks(r, e).RunOne();
  ASSERT_TRUE(big.ok());
  std::vector<int64_t> want_dims;
  EXPECT_EQ(ToDoubles(*big), NumpyIndex(ToDoubles(x), dims, spec, &want_dims));
}

TEST(Array2StridedSliceTest, RowSlicesAndIdentityShareBuffer) {
  Tensor x = Iota(DT_FLOAT, TensorShape({5, 3}));
  auto rows = RunStridedSlice(x, {Sl(1, 3)});
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->SharesBufferWith(x));
  EXPECT_THAT(ToDoubles(*rows), ElementsAre(3, 4, 5, 6, 7, 8));
  auto row = RunStridedSlice(x, {Int(-1)});
  ASSERT_TRUE(row.ok());
  EXPECT_TRUE(row->SharesBufferWith(x));
  EXPECT_THAT(ToDoubles(*row), ElementsAre(12, 13, 14));
  auto all = RunStridedSlice(x, {kNew, kEll});
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->SharesBufferWith(x));
  EXPECT_EQ(DimsOf(*all), (std::vector<int64_t>{1, 5, 3}));
  auto scalar = RunStridedSlice(Tensor::Scalar<float>(3.5f), {kNew});
  ASSERT_TRUE(scalar.ok());
  EXPECT_THAT(ToDoubles(*scalar), ElementsAre(3.5));
}

TEST(Array2StridedSliceTest, Errors) {
  Tensor x = Iota(DT_FLOAT, TensorShape({4, 5}));
  ExpectInvalid(RunStridedSlice(x, {Int(4)}).status(), "slice index 4 of dimension 0 out of bounds");
  ExpectInvalid(RunStridedSlice(x, {Sl(), Int(-6)}).status(), "slice index -6 of dimension 1");
  ExpectInvalid(RunStridedSlice(x, {Sl({}, {}, 0)}).status(), "strides[0] must be non-zero");
  ExpectInvalid(RunStridedSlice(x, {Sl(), Sl(), Sl()}).status(), "Index out of range using input dim 2");
  ExpectInvalid(RunStridedSlice(x, {kEll, kEll}).status(), "Multiple ellipses");
  KernelRunner r("StridedSlice");
  r.Input(x).Input(I32({0, 0})).Input(I32({1})).Input(I32({1, 1}));
  ExpectInvalid(r.Run().status(), "1D equal size tensors");
  // Shrink with a negative stride.
  KernelRunner neg("StridedSlice");
  neg.Input(x).Input(I32({1})).Input(I32({2})).Input(I32({-1})).Attr("shrink_axis_mask", int64_t{1});
  ExpectInvalid(neg.Run().status(), "only stride 1 allowed");
  // Output rank above 8 through new axes.
  std::vector<Ix> many(8, kNew);
  many.push_back(kEll);
  ExpectInvalid(RunStridedSlice(x, many).status(), "at most 8");
}

// Extreme begin/end/stride values clamp without overflow (a fuzzing regression: stride * dim
// stride overflowed for a one-element dim), and all-ones masks are rejected or handled.
TEST(Array2StridedSliceTest, ExtremeValues) {
  Tensor x = Iota(DT_FLOAT, TensorShape({4, 5}));
  KernelRunner r("StridedSlice");
  r.Input(x)
      .Input(I64({INT64_MAX, INT64_MIN}))
      .Input(I64({INT64_MIN, INT64_MAX}))
      .Input(I64({INT64_MIN, INT64_MAX}));
  auto out = r.RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(DimsOf(*out), (std::vector<int64_t>{1, 1}));
  EXPECT_THAT(ToDoubles(*out), ElementsAre(15));  // x[3, 0]
  KernelRunner g("StridedSliceGrad");
  g.Input(I64({4, 5}))
      .Input(I64({INT64_MAX, INT64_MIN}))
      .Input(I64({INT64_MIN, INT64_MAX}))
      .Input(I64({INT64_MIN, INT64_MAX}))
      .Input(Iota(DT_FLOAT, TensorShape({1, 1}), 2));
  auto dx = g.RunOne();
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_EQ(ToDoubles(*dx)[15], 2);
  KernelRunner e("StridedSlice");
  e.Input(x).Input(I32({0})).Input(I32({1})).Input(I32({1})).Attr("ellipsis_mask", int64_t{-1});
  ExpectInvalid(e.Run().status(), "Multiple ellipses");
  KernelRunner n("StridedSlice");
  n.Input(x).Input(I32({0})).Input(I32({1})).Input(I32({1})).Attr("new_axis_mask", int64_t{-1});
  auto na = n.RunOne();
  ASSERT_TRUE(na.ok()) << na.status();
  EXPECT_EQ(DimsOf(*na), (std::vector<int64_t>{1, 4, 5}));
}

TEST(Array2StridedSliceTest, ShapeFunction) {
  Encoded e = Encode({Sl(1, 3), kNew, Int(-1)});
  Tensor b = I64(e.begin), en = I64(e.end), s = I64(e.strides);
  KernelRunner r("StridedSlice");
  r.Input(Tensor(DT_FLOAT, TensorShape({1}))).Input(b).Input(en).Input(s);
  SetMasks(r, e);
  const std::vector<PartialTensorShape> shapes = {PartialTensorShape({5, -1}),
                                                  PartialTensorShape({3}), PartialTensorShape({3}),
                                                  PartialTensorShape({3})};
  auto known = r.InferShapes(shapes, {nullptr, &b, &en, &s});
  ASSERT_TRUE(known.ok()) << known.status();
  EXPECT_EQ((*known)[0], PartialTensorShape({2, 1}));
  // Only the strides known: the rank still follows from the masks.
  auto rank_only = r.InferShapes(shapes, {nullptr, nullptr, nullptr, &s});
  ASSERT_TRUE(rank_only.ok());
  EXPECT_EQ((*rank_only)[0], PartialTensorShape({-1, 1}));
  // Strides unknown: nothing, not even the rank (as TF).
  auto none = r.InferShapes(shapes);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE((*none)[0].unknown_rank());
  auto bad = r.InferShapes({PartialTensorShape({5, 0}), PartialTensorShape({3}),
                            PartialTensorShape({3}), PartialTensorShape({3})},
                           {nullptr, &b, &en, &s});
  EXPECT_FALSE(bad.ok());
}

// <StridedSlice(x), dy> == <x, StridedSliceGrad(dy)> for every case (the adjoint property), and
// the gradient is zero outside the slice.
TEST(Array2StridedSliceTest, GradIsTheAdjoint) {
  const std::vector<int64_t> dims = {4, 5, 6};
  Tensor x = Iota(DT_DOUBLE, TensorShape(dims), 1);
  for (size_t c = 0; c < Cases().size(); ++c) {
    auto y = RunStridedSlice(x, Cases()[c]);
    ASSERT_TRUE(y.ok());
    Tensor dy = Iota(DT_DOUBLE, y->shape(), 0.5);
    Encoded e = Encode(Cases()[c]);
    KernelRunner r("StridedSliceGrad");
    r.Input(I64(dims)).Input(I64(e.begin)).Input(I64(e.end)).Input(I64(e.strides)).Input(dy);
    auto dx = SetMasks(r, e).RunOne();
    ASSERT_TRUE(dx.ok()) << "case " << c << ": " << dx.status();
    ASSERT_EQ(DimsOf(*dx), dims);
    const auto vx = ToDoubles(x), vdx = ToDoubles(*dx), vy = ToDoubles(*y), vdy = ToDoubles(dy);
    double lhs = 0, rhs = 0;
    for (size_t i = 0; i < vy.size(); ++i) lhs += vy[i] * vdy[i];
    for (size_t i = 0; i < vx.size(); ++i) rhs += vx[i] * vdx[i];
    EXPECT_EQ(lhs, rhs) << "case " << c;
    // Each dy element lands exactly once: the sum of dx is the sum of dy.
    double sdx = 0, sdy = 0;
    for (double v : vdx) sdx += v;
    for (double v : vdy) sdy += v;
    EXPECT_EQ(sdx, sdy) << "case " << c;
  }
}

TEST(Array2StridedSliceTest, GradErrors) {
  Encoded e = Encode({Sl(1, 3)});
  KernelRunner r("StridedSliceGrad");
  r.Input(I32({4, 2})).Input(I32({1})).Input(I32({3})).Input(I32({1})).Input(Iota(DT_FLOAT, TensorShape({3, 2})));
  ExpectInvalid(SetMasks(r, e).Run().status(), "shape of dy was [3,2] instead of [2,2]");
  KernelRunner neg("StridedSliceGrad");
  neg.Input(I32({-4, 2})).Input(I32({1})).Input(I32({3})).Input(I32({1})).Input(Iota(DT_FLOAT, TensorShape({2, 2})));
  EXPECT_FALSE(neg.Run().ok());
}

// ---------------------------------------------------------------- Slice

TEST(Array2SliceTest, AgainstReferenceWithMinusOne) {
  const std::vector<int64_t> dims = {3, 4, 5};
  Tensor x = Iota(DT_INT32, TensorShape(dims));
  auto out = KernelRunner("Slice").Input(x).Input(I32({1, 0, 2})).Input(I32({2, -1, 2})).RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<int64_t> od = {2, 4, 2};
  ASSERT_EQ(DimsOf(*out), od);
  const auto v = ToDoubles(*out);
  for (size_t f = 0; f < v.size(); ++f) {
    auto i = test::Unravel(f, od);
    EXPECT_EQ(v[f], test::Ravel({i[0] + 1, i[1], i[2] + 2}, dims));
  }
  auto rows = KernelRunner("Slice").Input(x).Input(I64({1, 0, 0})).Input(I64({1, 4, 5})).RunOne();
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->SharesBufferWith(x));
  auto empty = KernelRunner("Slice").Input(x).Input(I32({3, 0, 0})).Input(I32({0, -1, -1})).RunOne();
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(DimsOf(*empty), (std::vector<int64_t>{0, 4, 5}));
  auto strings = KernelRunner("Slice").Input(test::Strings(TensorShape({2, 3}))).Input(I32({0, 1})).Input(I32({2, 1})).RunOne();
  ASSERT_TRUE(strings.ok());
  EXPECT_THAT(test::StringValues(*strings), ElementsAre("s1", "s4"));
}

TEST(Array2SliceTest, Errors) {
  Tensor x = Iota(DT_FLOAT, TensorShape({3, 4}));
  ExpectInvalid(KernelRunner("Slice").Input(x).Input(I32({0})).Input(I32({1, 1})).Run().status(),
                "Expected begin and size arguments to be 1-D tensors of size 2");
  ExpectInvalid(KernelRunner("Slice").Input(x).Input(I32({4, 0})).Input(I32({0, 1})).Run().status(),
                "Expected begin[0] in [0, 3], but got 4");
  ExpectInvalid(KernelRunner("Slice").Input(x).Input(I32({-1, 0})).Input(I32({1, 1})).Run().status(),
                "Expected begin[0]");
  ExpectInvalid(KernelRunner("Slice").Input(x).Input(I32({1, 2})).Input(I32({1, 3})).Run().status(),
                "Expected size[1] in [0, 2], but got 3");
  ExpectInvalid(KernelRunner("Slice").Input(x).Input(I32({1, 2})).Input(I32({-2, 1})).Run().status(),
                "Expected size[0]");
}

TEST(Array2SliceTest, ShapeFunction) {
  Tensor b = I32({1, 0}), s = I32({2, -1});
  KernelRunner r("Slice");
  r.Input(Tensor(DT_FLOAT, TensorShape({1}))).Input(b).Input(s);
  auto out = r.InferShapes({PartialTensorShape({4, 7}), PartialTensorShape({2}), PartialTensorShape({2})},
                           {nullptr, &b, &s});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], PartialTensorShape({2, 7}));
  auto only_size = r.InferShapes({PartialTensorShape({4, 7}), PartialTensorShape({2}), PartialTensorShape({2})},
                                 {nullptr, nullptr, &s});
  ASSERT_TRUE(only_size.ok());
  EXPECT_EQ((*only_size)[0], PartialTensorShape({2, -1}));
  EXPECT_FALSE(r.InferShapes({PartialTensorShape({1, 7}), PartialTensorShape({2}), PartialTensorShape({2})},
                             {nullptr, &b, &s}).ok());
}

}  // namespace
}  // namespace tensorflux
