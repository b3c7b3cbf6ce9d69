// Layout kernels (kernels/cpu/{transpose_op,concat_split_ops,dims_ops}.cc): Transpose against a
// float64 reference for every permutation of rank 3-4 and several dtypes (incl. string and the
// tiled path), ConcatV2/Concat/ConcatOffset, Split/SplitV, Pack/Unpack, ExpandDims/Squeeze,
// ShapeN, StopGradient, BroadcastGradientArgs; buffer sharing; every bad input; shape functions.

#include <algorithm>
#include <numeric>
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
using test::S32;
using test::ToDoubles;
using test::Unravel;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using test::ExpectInvalid;

// ---------------------------------------------------------------- Transpose

// out[i] = in[j] where out index i maps to in index j[perm[k]] = i[k].
std::vector<double> TransposeRef(const std::vector<double>& in, const std::vector<int64_t>& dims,
                                 const std::vector<int64_t>& perm) {
  std::vector<int64_t> out_dims(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) out_dims[k] = dims[perm[k]];
  std::vector<double> out(in.size());
  for (size_t f = 0; f < out.size(); ++f) {
    auto oi = Unravel(static_cast<int64_t>(f), out_dims);
    std::vector<int64_t> ii(dims.size());
    for (size_t k = 0; k < perm.size(); ++k) ii[perm[k]] = oi[k];
    out[f] = in[test::Ravel(ii, dims)];
  }
  return out;
}

TEST(Array2TransposeTest, AllPermutationsRank4SeveralDtypes) {
  const std::vector<int64_t> dims = {2, 3, 4, 5};
  for (DataType dt : {DT_FLOAT, DT_INT8, DT_HALF, DT_INT64, DT_DOUBLE}) {
    std::vector<int64_t> perm = {0, 1, 2, 3};
    do {
      Tensor x = Iota(dt, TensorShape(dims));
      auto out = KernelRunner("Transpose").Input(x).Input(I64(perm)).RunOne();
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(DimsOf(*out), (std::vector<int64_t>{dims[perm[0]], dims[perm[1]], dims[perm[2]],
                                                    dims[perm[3]]}));
      EXPECT_EQ(ToDoubles(*out), TransposeRef(ToDoubles(x), dims, perm))
          << DataTypeString(dt) << " perm " << perm[0] << perm[1] << perm[2] << perm[3];
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST(Array2TransposeTest, LargeMatrixUsesTiledPathInParallel) {
  test::TestCpuDevice device(4);
  const std::vector<int64_t> dims = {129, 257};
  Tensor x = Iota(DT_FLOAT, TensorShape(dims));
  auto out = KernelRunner("Transpose").OnDevice(&device).Input(x).Input(I32({1, 0})).RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles(*out), TransposeRef(ToDoubles(x), dims, {1, 0}));
  // NHWC -> NCHW on a conv-sized tensor.
  const std::vector<int64_t> d4 = {4, 14, 14, 32};
  Tensor y = Iota(DT_FLOAT, TensorShape(d4));
  auto o4 = KernelRunner("Transpose").OnDevice(&device).Input(y).Input(I32({0, 3, 1, 2})).RunOne();
  ASSERT_TRUE(o4.ok());
  EXPECT_EQ(ToDoubles(*o4), TransposeRef(ToDoubles(y), d4, {0, 3, 1, 2}));
}

TEST(Array2TransposeTest, Strings) {
  Tensor x = test::Strings(TensorShape({2, 3}));
  auto out = KernelRunner("Transpose").Input(x).Input(I32({1, 0})).RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(test::StringValues(*out), ElementsAre("s0", "s3", "s1", "s4", "s2", "s5"));
}

TEST(Array2TransposeTest, SameMemoryOrderSharesBuffer) {
  Tensor x = Iota(DT_FLOAT, TensorShape({1, 3, 1, 4}));
  auto out = KernelRunner("Transpose").Input(x).Input(I32({2, 1, 0, 3})).RunOne();
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->SharesBufferWith(x));
  EXPECT_EQ(DimsOf(*out), (std::vector<int64_t>{1, 3, 1, 4}));
}

TEST(Array2TransposeTest, EmptyAndScalar) {
  auto e = KernelRunner("Transpose").Input(Tensor(DT_FLOAT, TensorShape({0, 3}))).Input(I32({1, 0})).RunOne();
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(DimsOf(*e), (std::vector<int64_t>{3, 0}));
  auto s = KernelRunner("Transpose").Input(Tensor::Scalar<float>(2.5f)).Input(I32({})).RunOne();
  ASSERT_TRUE(s.ok());
  EXPECT_THAT(ToDoubles(*s), ElementsAre(2.5));
}

TEST(Array2TransposeTest, BadPermutations) {
  Tensor x = Iota(DT_FLOAT, TensorShape({2, 3}));
  ExpectInvalid(KernelRunner("Transpose").Input(x).Input(I32({0})).Run().status(),
                "transpose expects a vector of size 2");
  ExpectInvalid(KernelRunner("Transpose").Input(x).Input(I32({0, 2})).Run().status(),
                "perm[1] = 2 is out of range");
  ExpectInvalid(KernelRunner("Transpose").Input(x).Input(I32({-1, 0})).Run().status(),
                "out of range");
  ExpectInvalid(KernelRunner("Transpose").Input(x).Input(I32({1, 1})).Run().status(),
                "duplicated");
  ExpectInvalid(KernelRunner("Transpose")
                    .Input(x)
                    .Input(test::AsTensor<int32_t>({1, 0}, TensorShape({1, 2})))
                    .Run()
                    .status(),
                "perm must be a vector");
}

TEST(Array2TransposeTest, ShapeFunction) {
  Tensor perm = I32({2, 0, 1});
  KernelRunner r("Transpose");
  r.Input(Tensor(DT_FLOAT, TensorShape({1, 1, 1}))).Input(perm);
  auto s = r.InferShapes({PartialTensorShape({4, -1, 6}), PartialTensorShape({3})}, {nullptr, &perm});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({6, 4, -1}));
  auto bad = r.InferShapes({PartialTensorShape({4, 5}), PartialTensorShape({3})}, {nullptr, &perm});
  EXPECT_FALSE(bad.ok());
  auto unknown = r.InferShapes({PartialTensorShape(), PartialTensorShape({3})});
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ((*unknown)[0], PartialTensorShape({-1, -1, -1}));
}

TEST(Array2TransposeTest, InvertPermutation) {
  auto out = KernelRunner("InvertPermutation").Input(I32({3, 4, 0, 2, 1})).RunOne();
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(ToDoubles(*out), ElementsAre(2, 4, 3, 0, 1));
  ExpectInvalid(KernelRunner("InvertPermutation").Input(I32({0, 0})).Run().status(), "duplicated");
  ExpectInvalid(KernelRunner("InvertPermutation").Input(I64({0, 5})).Run().status(),
                "out of range");
}

// ---------------------------------------------------------------- Concat

TEST(Array2ConcatTest, ConcatV2AlongEachAxisAgainstReference) {
  const std::vector<int64_t> a = {2, 3, 4};
  for (int axis = -3; axis < 3; ++axis) {
    const int ax = axis < 0 ? axis + 3 : axis;
    std::vector<int64_t> b = a, c = a;
    b[ax] = 1;
    c[ax] = 2;
    Tensor x = Iota(DT_FLOAT, TensorShape(a)), y = Iota(DT_FLOAT, TensorShape(b), 100),
           z = Iota(DT_FLOAT, TensorShape(c), 200);
    auto out = KernelRunner("ConcatV2").Input(x).Input(y).Input(z).Input(S32(axis)).RunOne();
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<int64_t> od = a;
    od[ax] = a[ax] + 3;
    ASSERT_EQ(DimsOf(*out), od);
    const auto vx = ToDoubles(x), vy = ToDoubles(y), vz = ToDoubles(z), vo = ToDoubles(*out);
    for (size_t f = 0; f < vo.size(); ++f) {
      auto i = Unravel(f, od);
      double want;
      if (i[ax] < a[ax]) {
        want = vx[test::Ravel(i, a)];
      } else if (i[ax] < a[ax] + 1) {
        i[ax] -= a[ax];
        want = vy[test::Ravel(i, b)];
      } else {
        i[ax] -= a[ax] + 1;
        want = vz[test::Ravel(i, c)];
      }
      ASSERT_EQ(vo[f], want) << "axis " << axis << " at " << f;
    }
  }
}

TEST(Array2ConcatTest, StringsInt64AxisAndV1) {
  auto out = KernelRunner("ConcatV2")
                 .Input(test::Strings(TensorShape({2, 1})))
                 .Input(test::Strings(TensorShape({2, 2})))
                 .Input(Tensor::Scalar<int64_t>(1))
                 .RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(test::StringValues(*out), ElementsAre("s0", "s0", "s1", "s1", "s2", "s3"));
  auto v1 = KernelRunner("Concat")
                .Input(S32(0))
                .Input(Iota(DT_INT32, TensorShape({1, 2})))
                .Input(Iota(DT_INT32, TensorShape({2, 2}), 10))
                .RunOne();
  ASSERT_TRUE(v1.ok()) << v1.status();
  EXPECT_THAT(ToDoubles(*v1), ElementsAre(0, 1, 10, 11, 12, 13));
}

TEST(Array2ConcatTest, EmptyInputs) {
  auto out = KernelRunner("ConcatV2")
                 .Input(Tensor(DT_FLOAT, TensorShape({0, 3})))
                 .Input(Iota(DT_FLOAT, TensorShape({2, 3})))
                 .Input(S32(0))
                 .RunOne();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(DimsOf(*out), (std::vector<int64_t>{2, 3}));
  EXPECT_THAT(ToDoubles(*out), ElementsAre(0, 1, 2, 3, 4, 5));
}

TEST(Array2ConcatTest, Errors) {
  Tensor x = Iota(DT_FLOAT, TensorShape({2, 3}));
  ExpectInvalid(KernelRunner("ConcatV2").Input(x).Input(Iota(DT_FLOAT, TensorShape({2, 4}))).Input(S32(0)).Run().status(),
                "Dimension 1 in both shapes must be equal");
  ExpectInvalid(KernelRunner("ConcatV2").Input(x).Input(Iota(DT_FLOAT, TensorShape({6}))).Input(S32(0)).Run().status(),
                "Ranks of all input tensors should match");
  ExpectInvalid(KernelRunner("ConcatV2").Input(x).Input(x).Input(S32(2)).Run().status(),
                "is not in [-2, 2)");
  ExpectInvalid(KernelRunner("ConcatV2").Input(Tensor::Scalar<float>(1)).Input(Tensor::Scalar<float>(2)).Input(S32(0)).Run().status(),
                "Can't concatenate scalars");
  ExpectInvalid(KernelRunner("ConcatV2").Input(x).Input(x).Input(I32({0})).Run().status(),
                "should be a scalar");
}

TEST(Array2ConcatTest, ShapeFunction) {
  Tensor axis = S32(-1);
  KernelRunner r("ConcatV2");
  r.Input(Tensor(DT_FLOAT, TensorShape({1}))).Input(Tensor(DT_FLOAT, TensorShape({1}))).Input(axis);
  auto s = r.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({-1, 5}), PartialTensorShape({})},
                         {nullptr, nullptr, &axis});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 8}));
  auto bad = r.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({4, 5}), PartialTensorShape({})},
                           {nullptr, nullptr, &axis});
  EXPECT_FALSE(bad.ok());
}

TEST(Array2ConcatTest, ConcatOffset) {
  auto out = KernelRunner("ConcatOffset")
                 .Input(S32(1))
                 .Input(I32({2, 3, 5}))
                 .Input(I32({2, 7, 5}))
                 .Input(I32({2, 1, 5}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(0, 0, 0));
  EXPECT_THAT(ToDoubles((*out)[1]), ElementsAre(0, 3, 0));
  EXPECT_THAT(ToDoubles((*out)[2]), ElementsAre(0, 10, 0));
  ExpectInvalid(KernelRunner("ConcatOffset").Input(S32(1)).Input(I32({2, 3})).Input(I32({3, 3})).Run().status(),
                "mismatch");
}

// ---------------------------------------------------------------- Split

TEST(Array2SplitTest, SplitEvenAlongMiddleAxis) {
  Tensor x = Iota(DT_FLOAT, TensorShape({2, 4, 3}));
  auto out = KernelRunner("Split").Attr("num_split", int64_t{2}).Input(S32(1)).Input(x).Run();
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  const auto vx = ToDoubles(x);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(DimsOf((*out)[k]), (std::vector<int64_t>{2, 2, 3}));
    const auto v = ToDoubles((*out)[k]);
    for (size_t f = 0; f < v.size(); ++f) {
      auto i = Unravel(f, {2, 2, 3});
      i[1] += 2 * k;
      EXPECT_EQ(v[f], vx[test::Ravel(i, {2, 4, 3})]);
    }
  }
}

TEST(Array2SplitTest, LeadingAxisSharesBuffer) {
  Tensor x = Iota(DT_INT32, TensorShape({6, 2}));
  auto out = KernelRunner("Split").Attr("num_split", int64_t{3}).Input(S32(-2)).Input(x).Run();
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE((*out)[1].SharesBufferWith(x));
  EXPECT_THAT(ToDoubles((*out)[2]), ElementsAre(8, 9, 10, 11));
}

TEST(Array2SplitTest, SplitVWithInferredSize) {
  Tensor x = Iota(DT_DOUBLE, TensorShape({2, 6}));
  auto out = KernelRunner("SplitV")
                 .Attr("num_split", int64_t{3})
                 .Input(x)
                 .Input(I64({1, -1, 2}))
                 .Input(S32(1))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(0, 6));
  EXPECT_THAT(ToDoubles((*out)[1]), ElementsAre(1, 2, 3, 7, 8, 9));
  EXPECT_THAT(ToDoubles((*out)[2]), ElementsAre(4, 5, 10, 11));
  auto zero = KernelRunner("SplitV").Attr("num_split", int64_t{2}).Input(x).Input(I32({0, 6})).Input(S32(1)).Run();
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(DimsOf((*zero)[0]), (std::vector<int64_t>{2, 0}));
}

TEST(Array2SplitTest, Errors) {
  Tensor x = Iota(DT_FLOAT, TensorShape({2, 5}));
  ExpectInvalid(KernelRunner("Split").Attr("num_split", int64_t{2}).Input(S32(1)).Input(x).Run().status(),
                "evenly divide");
  ExpectInvalid(KernelRunner("Split").Attr("num_split", int64_t{2}).Input(S32(2)).Input(x).Run().status(),
                "split_dim = 2 is not in [-2, 2)");
  auto splitv = [&](Tensor sizes) {
    return KernelRunner("SplitV").Attr("num_split", int64_t{2}).Input(x).Input(sizes).Input(S32(1)).Run().status();
  };
  ExpectInvalid(splitv(I32({-1, -1})), "Only one dimensions can have a value of -1");
  ExpectInvalid(splitv(I32({2, 2})), "Determined shape must either match");
  ExpectInvalid(splitv(I32({7, -1})), "is not in [0, 5]");
  ExpectInvalid(splitv(I32({-3, 8})), "is not in [0, 5]");
  ExpectInvalid(KernelRunner("SplitV").Attr("num_split", int64_t{3}).Input(x).Input(I32({1, 4})).Input(S32(1)).Run().status(),
                "Length of size_splits");
}

TEST(Array2SplitTest, ShapeFunctions) {
  Tensor axis = S32(1);
  KernelRunner r("Split");
  r.Attr("num_split", int64_t{2}).Input(axis).Input(Tensor(DT_FLOAT, TensorShape({1})));
  auto s = r.InferShapes({PartialTensorShape({}), PartialTensorShape({3, 8})}, {&axis, nullptr});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[1], PartialTensorShape({3, 4}));
  EXPECT_FALSE(r.InferShapes({PartialTensorShape({}), PartialTensorShape({3, 7})}, {&axis, nullptr}).ok());
  Tensor sizes = I32({2, -1});
  KernelRunner v("SplitV");
  v.Attr("num_split", int64_t{2}).Input(Tensor(DT_FLOAT, TensorShape({1}))).Input(sizes).Input(axis);
  auto sv = v.InferShapes({PartialTensorShape({3, 8}), PartialTensorShape({2}), PartialTensorShape({})},
                          {nullptr, &sizes, &axis});
  ASSERT_TRUE(sv.ok()) << sv.status();
  EXPECT_EQ((*sv)[0], PartialTensorShape({3, 2}));
  EXPECT_EQ((*sv)[1], PartialTensorShape({3, 6}));
}

// ---------------------------------------------------------------- Pack / Unpack

TEST(Array2PackTest, PackEveryAxis) {
  Tensor a = Iota(DT_FLOAT, TensorShape({2, 3})), b = Iota(DT_FLOAT, TensorShape({2, 3}), 10);
  auto p0 = KernelRunner("Pack").Input(a).Input(b).RunOne();
  ASSERT_TRUE(p0.ok());
  EXPECT_EQ(DimsOf(*p0), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_THAT(ToDoubles(*p0), ElementsAre(0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15));
  auto p1 = KernelRunner("Pack").Attr("axis", int64_t{1}).Input(a).Input(b).RunOne();
  ASSERT_TRUE(p1.ok());
  EXPECT_THAT(ToDoubles(*p1), ElementsAre(0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15));
  auto p2 = KernelRunner("Pack").Attr("axis", int64_t{-1}).Input(a).Input(b).RunOne();
  ASSERT_TRUE(p2.ok());
  EXPECT_EQ(DimsOf(*p2), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_THAT(ToDoubles(*p2), ElementsAre(0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15));
  auto scalars = KernelRunner("Pack").Input(Tensor::Scalar<int64_t>(4)).Input(Tensor::Scalar<int64_t>(7)).RunOne();
  ASSERT_TRUE(scalars.ok());
  EXPECT_THAT(ToDoubles(*scalars), ElementsAre(4, 7));
}

TEST(Array2PackTest, PackErrors) {
  Tensor a = Iota(DT_FLOAT, TensorShape({2, 3}));
  ExpectInvalid(KernelRunner("Pack").Input(a).Input(Iota(DT_FLOAT, TensorShape({3, 2}))).Run().status(),
                "Shapes of all inputs must match");
  ExpectInvalid(KernelRunner("Pack").Attr("axis", int64_t{3}).Input(a).Input(a).Run().status(),
                "is not in [-3, 3)");
}

TEST(Array2PackTest, UnpackAndSharing) {
  Tensor x = Iota(DT_INT64, TensorShape({3, 2}));
  auto rows = KernelRunner("Unpack").Attr("num", int64_t{3}).Input(x).Run();
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(ToDoubles((*rows)[1]), ElementsAre(2, 3));
  EXPECT_TRUE((*rows)[1].SharesBufferWith(x));
  auto cols = KernelRunner("Unpack").Attr("num", int64_t{2}).Attr("axis", int64_t{-1}).Input(x).Run();
  ASSERT_TRUE(cols.ok());
  EXPECT_THAT(ToDoubles((*cols)[0]), ElementsAre(0, 2, 4));
  EXPECT_THAT(ToDoubles((*cols)[1]), ElementsAre(1, 3, 5));
  ExpectInvalid(KernelRunner("Unpack").Attr("num", int64_t{2}).Input(x).Run().status(),
                "must equal 2");
  ExpectInvalid(KernelRunner("Unpack").Attr("num", int64_t{1}).Input(Tensor::Scalar<float>(1)).Run().status(),
                "Can't unpack a scalar");
}

// ---------------------------------------------------------------- dims ops

TEST(Array2DimsTest, ExpandDimsAndSqueezeShareBuffers) {
  Tensor x = Iota(DT_FLOAT, TensorShape({2, 3}));
  auto e = KernelRunner("ExpandDims").Input(x).Input(S32(-1)).RunOne();
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(DimsOf(*e), (std::vector<int64_t>{2, 3, 1}));
  EXPECT_TRUE(e->SharesBufferWith(x));
  auto e0 = KernelRunner("ExpandDims").Input(x).Input(I64({0})).RunOne();
  ASSERT_TRUE(e0.ok());
  EXPECT_EQ(DimsOf(*e0), (std::vector<int64_t>{1, 2, 3}));
  ExpectInvalid(KernelRunner("ExpandDims").Input(x).Input(S32(4)).Run().status(), "is not in [-3, 3)");
  ExpectInvalid(KernelRunner("ExpandDims").Input(x).Input(I32({0, 1})).Run().status(), "single value");

  Tensor y = Iota(DT_FLOAT, TensorShape({1, 3, 1}));
  auto all = KernelRunner("Squeeze").Input(y).RunOne();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(DimsOf(*all), (std::vector<int64_t>{3}));
  EXPECT_TRUE(all->SharesBufferWith(y));
  auto one = KernelRunner("Squeeze").Attr("squeeze_dims", std::vector<int64_t>{-1}).Input(y).RunOne();
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(DimsOf(*one), (std::vector<int64_t>{1, 3}));
  ExpectInvalid(KernelRunner("Squeeze").Attr("squeeze_dims", std::vector<int64_t>{1}).Input(y).Run().status(),
                "Can not squeeze dim[1], expected a dimension of 1, got 3");
  ExpectInvalid(KernelRunner("Squeeze").Attr("squeeze_dims", std::vector<int64_t>{3}).Input(y).Run().status(),
                "Tried to squeeze dim index 3");
}

TEST(Array2DimsTest, ShapeFunctions) {
  Tensor dim = S32(1);
  KernelRunner e("ExpandDims");
  e.Input(Tensor(DT_FLOAT, TensorShape({1}))).Input(dim);
  auto es = e.InferShapes({PartialTensorShape({4, -1}), PartialTensorShape({})}, {nullptr, &dim});
  ASSERT_TRUE(es.ok());
  EXPECT_EQ((*es)[0], PartialTensorShape({4, 1, -1}));
  KernelRunner s("Squeeze");
  s.Input(Tensor(DT_FLOAT, TensorShape({1})));
  auto ss = s.InferShapes({PartialTensorShape({1, 4, 1})});
  ASSERT_TRUE(ss.ok());
  EXPECT_EQ((*ss)[0], PartialTensorShape({4}));
  auto unknown = s.InferShapes({PartialTensorShape({1, -1})});
  ASSERT_TRUE(unknown.ok());
  EXPECT_TRUE((*unknown)[0].unknown_rank());
}

TEST(Array2DimsTest, ShapeNAndStopGradient) {
  auto out = KernelRunner("ShapeN")
                 .Attr("out_type", DT_INT64)
                 .Input(Iota(DT_FLOAT, TensorShape({2, 3})))
                 .Input(Tensor::Scalar<int32_t>(1))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DT_INT64);
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(2, 3));
  EXPECT_EQ((*out)[1].NumElements(), 0);
  Tensor x = Iota(DT_FLOAT, TensorShape({3}));
  auto sg = KernelRunner("StopGradient").Input(x).RunOne();
  ASSERT_TRUE(sg.ok());
  EXPECT_TRUE(sg->SharesBufferWith(x));
}

// r0/r1 of BroadcastGradientArgs, as int vectors.
std::pair<std::vector<double>, std::vector<double>> Bga(std::vector<int32_t> a,
                                                        std::vector<int32_t> b) {
  auto out = KernelRunner("BroadcastGradientArgs").Input(I32(a)).Input(I32(b)).Run();
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return {ToDoubles((*out)[0]), ToDoubles((*out)[1])};
}

TEST(Array2DimsTest, BroadcastGradientArgs) {
  using V = std::vector<double>;
  EXPECT_EQ(Bga({2, 3, 5}, {5}), (std::pair<V, V>{{}, {0, 1}}));
  EXPECT_EQ(Bga({2, 1, 5}, {3, 1}), (std::pair<V, V>{{1}, {0, 2}}));
  EXPECT_EQ(Bga({4, 1}, {4, 1}), (std::pair<V, V>{{}, {}}));      // identical: nothing
  EXPECT_EQ(Bga({1, 1}, {1}), (std::pair<V, V>{{0, 1}, {0, 1}}));  // all ones: both
  EXPECT_EQ(Bga({}, {2, 3}), (std::pair<V, V>{{0, 1}, {}}));
  EXPECT_EQ(Bga({0, 3}, {1, 3}), (std::pair<V, V>{{}, {0}}));
  auto bad = KernelRunner("BroadcastGradientArgs").Input(I32({2, 3})).Input(I32({4})).Run();
  ExpectInvalid(bad.status(), "Incompatible shapes: [2,3] vs. [4]");
  auto int64 = KernelRunner("BroadcastGradientArgs").Input(I64({3, 1})).Input(I64({1, 4})).Run();
  ASSERT_TRUE(int64.ok());
  EXPECT_EQ((*int64)[0].dtype(), DT_INT64);
  EXPECT_THAT(ToDoubles((*int64)[0]), ElementsAre(1));
  EXPECT_THAT(ToDoubles((*int64)[1]), ElementsAre(0));
}

}  // namespace
}  // namespace tensorflux
