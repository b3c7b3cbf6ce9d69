// Index kernels (kernels/cpu/{gather_scatter_ops,one_hot_range_ops}.cc): GatherV2 over every axis
// and batch_dims against float64 loops, Gather, GatherNd, ScatterNd (duplicates sum),
// UnsortedSegmentSum, DynamicStitch, OneHot, Range; out-of-range indices and every other bad
// input; shape functions.

#include <cmath>
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
using test::Ravel;
using test::S32;
using test::ToDoubles;
using test::Unravel;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using test::ExpectInvalid;

// ---------------------------------------------------------------- GatherV2

TEST(Array2GatherTest, EveryAxisAndBatchDimsAgainstReference) {
  const std::vector<int64_t> pd = {2, 3, 4};
  Tensor params = Iota(DT_FLOAT, TensorShape(pd));
  for (int64_t b = 0; b <= 1; ++b) {
    for (int64_t axis = b; axis < 3; ++axis) {
      // indices: [2, 2] (the batch dim, when b = 1, is params' dim 0 = 2).
      const int64_t lim = pd[axis];
      std::vector<int64_t> id = {2, 2};
      std::vector<int32_t> iv = {int32_t(lim - 1), 0, 1, int32_t(lim - 1)};
      Tensor indices = test::AsTensor<int32_t>(iv, TensorShape(id));
      auto out = KernelRunner("GatherV2")
                     .Attr("batch_dims", b)
                     .Input(params)
                     .Input(indices)
                     .Input(Tensor::Scalar<int64_t>(axis - 3))  // negative axis
                     .RunOne();
      ASSERT_TRUE(out.ok()) << out.status();
      std::vector<int64_t> od(pd.begin(), pd.begin() + axis);
      od.insert(od.end(), id.begin() + b, id.end());
      od.insert(od.end(), pd.begin() + axis + 1, pd.end());
      ASSERT_EQ(DimsOf(*out), od) << "axis " << axis << " b " << b;
      const auto vp = ToDoubles(params), vo = ToDoubles(*out);
      const int64_t ni = static_cast<int64_t>(id.size()) - b;
      for (size_t f = 0; f < vo.size(); ++f) {
        auto o = Unravel(f, od);
        // o = P[:axis] + I[b:] + P[axis+1:]; the index position is batch part + I[b:] part.
        std::vector<int64_t> ipos(o.begin(), o.begin() + b);
        ipos.insert(ipos.end(), o.begin() + axis, o.begin() + axis + ni);
        std::vector<int64_t> p(o.begin(), o.begin() + axis);
        p.push_back(iv[Ravel(ipos, id)]);
        p.insert(p.end(), o.begin() + axis + ni, o.end());
        ASSERT_EQ(vo[f], vp[Ravel(p, pd)]) << "axis " << axis << " b " << b;
      }
    }
  }
}

TEST(Array2GatherTest, DtypesScalarIndicesAndParallel) {
  test::TestCpuDevice device(4);
  Tensor params = test::Strings(TensorShape({4, 2}));
  auto s = KernelRunner("GatherV2").Input(params).Input(I64({3, 0, 3})).Input(S32(0)).RunOne();
  ASSERT_TRUE(s.ok());
  EXPECT_THAT(test::StringValues(*s), ElementsAre("s6", "s7", "s0", "s1", "s6", "s7"));
  auto scalar = KernelRunner("GatherV2").Input(Iota(DT_HALF, TensorShape({5}))).Input(S32(2)).Input(S32(0)).RunOne();
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->dims(), 0);
  EXPECT_THAT(ToDoubles(*scalar), ElementsAre(2));
  // Large embedding lookup, sharded.
  Tensor table = Iota(DT_FLOAT, TensorShape({1000, 64}));
  std::vector<int32_t> ids(5000);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7919) % 1000);
  auto big = KernelRunner("GatherV2").OnDevice(&device).Input(table).Input(I32(ids)).Input(S32(0)).RunOne();
  ASSERT_TRUE(big.ok());
  const float* p = big->data<float>();
  for (size_t i = 0; i < ids.size(); i += 97) {
    EXPECT_EQ(p[i * 64 + 5], ids[i] * 64 + 5);
  }
  auto v1 = KernelRunner("Gather").Input(Iota(DT_INT32, TensorShape({3, 2}))).Input(I32({2, 0})).RunOne();
  ASSERT_TRUE(v1.ok());
  EXPECT_THAT(ToDoubles(*v1), ElementsAre(4, 5, 0, 1));
  auto int16 = KernelRunner("GatherV2").Input(Iota(DT_FLOAT, TensorShape({3}))).Input(test::AsTensor<int16_t>({2, 1}, TensorShape({2}))).Input(S32(0)).RunOne();
  ASSERT_TRUE(int16.ok()) << int16.status();
  EXPECT_THAT(ToDoubles(*int16), ElementsAre(2, 1));
  auto empty = KernelRunner("GatherV2").Input(Iota(DT_FLOAT, TensorShape({3, 2}))).Input(I32({})).Input(S32(0)).RunOne();
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(DimsOf(*empty), (std::vector<int64_t>{0, 2}));
}

TEST(Array2GatherTest, Errors) {
  Tensor params = Iota(DT_FLOAT, TensorShape({5, 2}));
  ExpectInvalid(KernelRunner("GatherV2").Input(params).Input(I32({0, 1, 2, 7})).Input(S32(0)).Run().status(),
                "indices[3] = 7 is not in [0, 5)");
  ExpectInvalid(KernelRunner("GatherV2")
                    .Input(params)
                    .Input(test::AsTensor<int64_t>({0, 1, 2, -1}, TensorShape({2, 2})))
                    .Input(S32(0))
                    .Run()
                    .status(),
                "indices[1,1] = -1 is not in [0, 5)");
  ExpectInvalid(KernelRunner("GatherV2").Input(params).Input(I32({0})).Input(S32(2)).Run().status(),
                "axis = 2 is not in [-2, 2)");
  ExpectInvalid(KernelRunner("GatherV2").Input(Tensor::Scalar<float>(1)).Input(I32({0})).Input(S32(0)).Run().status(),
                "params must be at least 1 dimensional");
  ExpectInvalid(KernelRunner("GatherV2").Attr("batch_dims", int64_t{1}).Input(params).Input(test::AsTensor<int32_t>({0, 0}, TensorShape({2, 1}))).Input(S32(1)).Run().status(),
                "params.shape[0]: 5 should be equal to indices.shape[0]: 2");
  ExpectInvalid(KernelRunner("GatherV2").Attr("batch_dims", int64_t{1}).Input(params).Input(test::AsTensor<int32_t>({0, 0, 0, 0, 0}, TensorShape({5, 1}))).Input(S32(0)).Run().status(),
                "batch_dims (1) must be less than or equal to axis (0)");
  ExpectInvalid(KernelRunner("GatherV2").Attr("batch_dims", int64_t{3}).Input(params).Input(I32({0})).Input(S32(1)).Run().status(),
                "Expected batch_dims in the range");
  ExpectInvalid(KernelRunner("GatherV2").Input(Tensor(DT_FLOAT, TensorShape({0, 3}))).Input(I32({0})).Input(S32(0)).Run().status(),
                "indices[0] = 0 is not in [0, 0)");
}

TEST(Array2GatherTest, ShapeFunction) {
  Tensor axis = S32(1);
  KernelRunner r("GatherV2");
  r.Input(Tensor(DT_FLOAT, TensorShape({1}))).Input(I32({0})).Input(axis);
  auto s = r.InferShapes({PartialTensorShape({4, 5, 6}), PartialTensorShape({2, -1}), PartialTensorShape({})},
                         {nullptr, nullptr, &axis});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({4, 2, -1, 6}));
  // axis unknown: only the rank, params.rank + indices.rank - 1 (as TF).
  auto unknown = r.InferShapes({PartialTensorShape({4, 5, 6}), PartialTensorShape({2}), PartialTensorShape({})});
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ((*unknown)[0], PartialTensorShape({-1, -1, -1}));
}

// ---------------------------------------------------------------- GatherNd / ScatterNd

TEST(Array2GatherNdTest, ElementsAndSlices) {
  Tensor params = Iota(DT_FLOAT, TensorShape({3, 4, 2}));
  auto elems = KernelRunner("GatherNd")
                   .Input(params)
                   .Input(test::AsTensor<int32_t>({2, 3, 1, 0, 0, 0}, TensorShape({2, 3})))
                   .RunOne();
  ASSERT_TRUE(elems.ok()) << elems.status();
  EXPECT_THAT(ToDoubles(*elems), ElementsAre(2 * 8 + 3 * 2 + 1, 0));
  auto rows = KernelRunner("GatherNd")
                  .Input(params)
                  .Input(test::AsTensor<int64_t>({1, 2, 2, 0}, TensorShape({2, 1, 2})))
                  .RunOne();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(DimsOf(*rows), (std::vector<int64_t>{2, 1, 2}));
  EXPECT_THAT(ToDoubles(*rows), ElementsAre(12, 13, 16, 17));
  ExpectInvalid(KernelRunner("GatherNd").Input(params).Input(test::AsTensor<int32_t>({1, 4}, TensorShape({1, 2}))).Run().status(),
                "indices[0] = [1, 4] does not index into param shape [3,4,2]");
  ExpectInvalid(KernelRunner("GatherNd").Input(params).Input(test::AsTensor<int32_t>({0, 0, 0, 0}, TensorShape({1, 4}))).Run().status(),
                "indices.shape[-1] must be <= params.rank");
}

TEST(Array2ScatterNdTest, DuplicatesSumAgainstReference) {
  // indices [4, 1] into shape [5, 3]; updates [4, 3].
  std::vector<int32_t> idx = {4, 1, 4, 0};
  Tensor updates = Iota(DT_FLOAT, TensorShape({4, 3}), 1);
  auto out = KernelRunner("ScatterNd")
                 .Input(test::AsTensor<int32_t>(idx, TensorShape({4, 1})))
                 .Input(updates)
                 .Input(I32({5, 3}))
                 .RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<double> want(15, 0.0);
  const auto vu = ToDoubles(updates);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 3; ++c) want[idx[r] * 3 + c] += vu[r * 3 + c];
  }
  EXPECT_EQ(ToDoubles(*out), want);
  // Full-index scatter of scalars into a 2-D shape, int64 and half.
  for (DataType dt : {DT_INT64, DT_HALF}) {
    auto el = KernelRunner("ScatterNd")
                  .Input(test::AsTensor<int64_t>({0, 1, 1, 0, 0, 1}, TensorShape({3, 2})))
                  .Input(test::FromDoubles(dt, TensorShape({3}), {5, 6, 7}))
                  .Input(I64({2, 2}))
                  .RunOne();
    ASSERT_TRUE(el.ok()) << el.status();
    EXPECT_THAT(ToDoubles(*el), ElementsAre(0, 12, 6, 0));
  }
}

TEST(Array2ScatterNdTest, Errors) {
  auto run = [](Tensor idx, Tensor upd, Tensor shape) {
    return KernelRunner("ScatterNd").Input(idx).Input(upd).Input(shape).Run().status();
  };
  ExpectInvalid(run(test::AsTensor<int32_t>({1, 5}, TensorShape({2, 1})), Iota(DT_FLOAT, TensorShape({2})), I32({4})),
                "indices[1] = [5] does not index into output shape [4]");
  ExpectInvalid(run(test::AsTensor<int32_t>({-1}, TensorShape({1, 1})), Iota(DT_FLOAT, TensorShape({1})), I32({4})),
                "does not index into");
  ExpectInvalid(run(test::AsTensor<int32_t>({1, 2}, TensorShape({2, 1})), Iota(DT_FLOAT, TensorShape({3})), I32({4})),
                "updates.shape [3] must be");
  ExpectInvalid(run(test::AsTensor<int32_t>({1, 2, 0}, TensorShape({1, 3})), Iota(DT_FLOAT, TensorShape({1})), I32({4, 4})),
                "must be <= rank of shape");
  ExpectInvalid(run(test::AsTensor<int32_t>({0}, TensorShape({1, 1})), Iota(DT_FLOAT, TensorShape({1})), I32({-3})),
                "");
  ExpectInvalid(run(test::AsTensor<int32_t>({0}, TensorShape({1, 1})), Iota(DT_FLOAT, TensorShape({1, 0})), I32({0, 0})),
                "");
}

TEST(Array2ScatterNdTest, StringsConcatenate) {
  // As TF: string updates "add" by concatenation, in the order of the updates.
  auto strings = KernelRunner("ScatterNd")
                     .Input(test::AsTensor<int32_t>({1, 1, 0}, TensorShape({3, 1})))
                     .Input(test::Strings(TensorShape({3})))
                     .Input(I32({3}))
                     .Run();
  ASSERT_TRUE(strings.ok()) << strings.status();
  EXPECT_EQ(test::StringValues((*strings)[0]), (std::vector<std::string>{"s2", "s0s1", ""}));
}

// ---------------------------------------------------------------- segments, stitch

TEST(Array2SegmentTest, UnsortedSegmentSum) {
  Tensor data = Iota(DT_DOUBLE, TensorShape({2, 3, 2}), 1);
  Tensor ids = test::AsTensor<int64_t>({2, 0, -1, 2, 2, 0}, TensorShape({2, 3}));
  auto out = KernelRunner("UnsortedSegmentSum").Input(data).Input(ids).Input(S32(4)).RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(DimsOf(*out), (std::vector<int64_t>{4, 2}));
  std::vector<double> want(8, 0.0);
  const auto vd = ToDoubles(data), vi = ToDoubles(ids);
  for (int r = 0; r < 6; ++r) {
    if (vi[r] < 0) continue;
    for (int c = 0; c < 2; ++c) want[vi[r] * 2 + c] += vd[r * 2 + c];
  }
  EXPECT_EQ(ToDoubles(*out), want);
  ExpectInvalid(KernelRunner("UnsortedSegmentSum").Input(data).Input(ids).Input(S32(2)).Run().status(),
                "segment_ids[0,0] = 2 is out of range [0, 2)");
  ExpectInvalid(KernelRunner("UnsortedSegmentSum").Input(data).Input(I32({0, 1, 0})).Input(S32(2)).Run().status(),
                "does not start with segment_ids.shape");
  ExpectInvalid(KernelRunner("UnsortedSegmentSum").Input(data).Input(ids).Input(S32(-1)).Run().status(),
                "num_segments must be >= 0");
}

TEST(Array2StitchTest, DynamicStitch) {
  // N is set explicitly: the runner cannot split 4 inputs between two N-lists by itself.
  auto out = KernelRunner("DynamicStitch")
                 .Attr("N", int64_t{2})
                 .Input(I32({0, 4}))
                 .Input(test::AsTensor<int32_t>({1, 4, 3}, TensorShape({3})))
                 .Input(Iota(DT_FLOAT, TensorShape({2, 2})))
                 .Input(Iota(DT_FLOAT, TensorShape({3, 2}), 10))
                 .RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(DimsOf(*out), (std::vector<int64_t>{5, 2}));
  // Row 4 comes from the later data (12, 13); row 2 no index names: zeros.
  EXPECT_THAT(ToDoubles(*out), ElementsAre(0, 1, 10, 11, 0, 0, 14, 15, 12, 13));
  ExpectInvalid(KernelRunner("DynamicStitch").Attr("N", int64_t{1}).Input(I32({0, -1})).Input(Iota(DT_FLOAT, TensorShape({2}))).Run().status(),
                "is negative");
  ExpectInvalid(KernelRunner("DynamicStitch")
                    .Attr("N", int64_t{2})
                    .Input(I32({0}))
                    .Input(I32({1}))
                    .Input(Iota(DT_FLOAT, TensorShape({1, 2})))
                    .Input(Iota(DT_FLOAT, TensorShape({1, 3})))
                    .Run()
                    .status(),
                "does not start with indices[1].shape");
}

// ---------------------------------------------------------------- OneHot, Range

TEST(Array2OneHotTest, EveryAxis) {
  Tensor idx = test::AsTensor<int64_t>({0, 2, -1, 5, 1, 1}, TensorShape({2, 3}));
  for (int64_t axis : {-1, 0, 1, 2}) {
    auto out = KernelRunner("OneHot")
                   .Attr("axis", axis)
                   .Input(idx)
                   .Input(S32(3))
                   .Input(Tensor::Scalar<float>(5))
                   .Input(Tensor::Scalar<float>(-1))
                   .RunOne();
    ASSERT_TRUE(out.ok()) << out.status();
    const int64_t a = axis < 0 ? 2 : axis;
    std::vector<int64_t> od = {2, 3};
    od.insert(od.begin() + a, 3);
    ASSERT_EQ(DimsOf(*out), od);
    const auto vo = ToDoubles(*out), vi = ToDoubles(idx);
    for (size_t f = 0; f < vo.size(); ++f) {
      auto o = Unravel(f, od);
      const int64_t depth_pos = o[a];
      o.erase(o.begin() + a);
      ASSERT_EQ(vo[f], vi[Ravel(o, {2, 3})] == depth_pos ? 5 : -1);
    }
  }
  auto strings = KernelRunner("OneHot")
                     .Input(test::AsTensor<int32_t>({1}, TensorShape({1})))
                     .Input(S32(2))
                     .Input(Tensor::Scalar<std::string>("on"))
                     .Input(Tensor::Scalar<std::string>("off"))
                     .RunOne();
  ASSERT_TRUE(strings.ok()) << strings.status();
  EXPECT_THAT(test::StringValues(*strings), ElementsAre("off", "on"));
  ExpectInvalid(KernelRunner("OneHot").Input(idx).Input(S32(-1)).Input(Tensor::Scalar<float>(1)).Input(Tensor::Scalar<float>(0)).Run().status(),
                "depth must be non-negative, got: -1");
  ExpectInvalid(KernelRunner("OneHot").Attr("axis", int64_t{3}).Input(idx).Input(S32(2)).Input(Tensor::Scalar<float>(1)).Input(Tensor::Scalar<float>(0)).Run().status(),
                "Expected axis to be -1 or between [0, 2]");
  ExpectInvalid(KernelRunner("OneHot").Input(idx).Input(S32(2)).Input(Iota(DT_FLOAT, TensorShape({2}))).Input(Tensor::Scalar<float>(0)).Run().status(),
                "must be scalars");
}

TEST(Array2RangeTest, IntegerAndFloat) {
  auto r = KernelRunner("Range").Input(S32(3)).Input(S32(18)).Input(S32(4)).RunOne();
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(ToDoubles(*r), ElementsAre(3, 7, 11, 15));
  auto down = KernelRunner("Range").Input(Tensor::Scalar<int64_t>(5)).Input(Tensor::Scalar<int64_t>(-1)).Input(Tensor::Scalar<int64_t>(-2)).RunOne();
  ASSERT_TRUE(down.ok());
  EXPECT_THAT(ToDoubles(*down), ElementsAre(5, 3, 1));
  auto f = KernelRunner("Range").Input(Tensor::Scalar<double>(0)).Input(Tensor::Scalar<double>(1)).Input(Tensor::Scalar<double>(0.1)).RunOne();
  ASSERT_TRUE(f.ok());
  ASSERT_EQ(f->NumElements(), 10);  // ceil(1 / 0.1) = 10, like numpy.arange
  for (int i = 0; i < 10; ++i) EXPECT_DOUBLE_EQ(f->data<double>()[i], i * 0.1);
  auto empty = KernelRunner("Range").Input(S32(4)).Input(S32(4)).Input(S32(1)).RunOne();
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->NumElements(), 0);
  auto half = KernelRunner("Range").Input(Tensor::Scalar<Half>(Half(1.f))).Input(Tensor::Scalar<Half>(Half(2.f))).Input(Tensor::Scalar<Half>(Half(0.25f))).RunOne();
  ASSERT_TRUE(half.ok());
  EXPECT_THAT(ToDoubles(*half), ElementsAre(1, 1.25, 1.5, 1.75));
  auto extreme = KernelRunner("Range")
                     .Input(Tensor::Scalar<int64_t>(INT64_MAX - 2))
                     .Input(Tensor::Scalar<int64_t>(INT64_MAX))
                     .Input(Tensor::Scalar<int64_t>(1))
                     .RunOne();
  ASSERT_TRUE(extreme.ok());
  EXPECT_EQ(extreme->data<int64_t>()[1], INT64_MAX - 1);
}

TEST(Array2RangeTest, Errors) {
  ExpectInvalid(KernelRunner("Range").Input(S32(0)).Input(S32(5)).Input(S32(0)).Run().status(),
                "Requires delta != 0");
  ExpectInvalid(KernelRunner("Range").Input(S32(5)).Input(S32(0)).Input(S32(1)).Run().status(),
                "Requires start <= limit when delta > 0: 5/0");
  ExpectInvalid(KernelRunner("Range").Input(S32(0)).Input(S32(5)).Input(S32(-1)).Run().status(),
                "Requires start >= limit when delta < 0");
  ExpectInvalid(KernelRunner("Range").Input(Tensor::Scalar<float>(0)).Input(Tensor::Scalar<float>(1e30f)).Input(Tensor::Scalar<float>(1e-10f)).Run().status(),
                "2^63");
  ExpectInvalid(KernelRunner("Range").Input(Tensor::Scalar<double>(0)).Input(Tensor::Scalar<double>(NAN)).Input(Tensor::Scalar<double>(1)).Run().status(),
                "");
  ExpectInvalid(KernelRunner("Range").Input(I32({0})).Input(S32(5)).Input(S32(1)).Run().status(),
                "start must be a scalar");
  // Shape function with constants.
  Tensor a = S32(0), b = S32(10), c = S32(3);
  KernelRunner r("Range");
  r.Input(a).Input(b).Input(c);
  auto s = r.InferShapes({PartialTensorShape({}), PartialTensorShape({}), PartialTensorShape({})}, {&a, &b, &c});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0], PartialTensorShape({4}));
  Tensor zero = S32(0);
  EXPECT_FALSE(r.InferShapes({PartialTensorShape({}), PartialTensorShape({}), PartialTensorShape({})}, {&a, &b, &zero}).ok());
}

}  // namespace
}  // namespace tensorflux
