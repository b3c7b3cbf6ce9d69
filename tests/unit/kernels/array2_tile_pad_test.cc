// Tile, BroadcastTo, Pad, PadV2 (kernels/cpu/tile_pad_ops.cc) against float64 reference loops:
// several ranks and dtypes (incl. strings), zero multiples and empty tensors, forwarding when
// nothing changes, shape functions and every bad input.

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
using test::ToDoubles;
using test::Unravel;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using test::ExpectInvalid;

TEST(Array2TileTest, AgainstReference) {
  struct Case {
    std::vector<int64_t> dims, mult;
  };
  for (const Case& c : std::vector<Case>{{{2, 3}, {2, 3}},
                                         {{3}, {4}},
                                         {{2, 1, 3}, {1, 5, 2}},
                                         {{1, 4}, {3, 1}},
                                         {{2, 2, 2, 2}, {2, 1, 3, 2}},
                                         {{2, 3}, {0, 2}}}) {
    for (DataType dt : {DT_FLOAT, DT_UINT8, DT_HALF, DT_INT64}) {
      Tensor x = Iota(dt, TensorShape(c.dims));
      auto out = KernelRunner("Tile").Input(x).Input(I64(c.mult)).RunOne();
      ASSERT_TRUE(out.ok()) << out.status();
      std::vector<int64_t> od(c.dims.size());
      for (size_t d = 0; d < od.size(); ++d) od[d] = c.dims[d] * c.mult[d];
      ASSERT_EQ(DimsOf(*out), od);
      const auto vx = ToDoubles(x), vo = ToDoubles(*out);
      for (size_t f = 0; f < vo.size(); ++f) {
        auto i = Unravel(f, od);
        for (size_t d = 0; d < i.size(); ++d) i[d] %= c.dims[d];
        ASSERT_EQ(vo[f], vx[Ravel(i, c.dims)]);
      }
    }
  }
}

TEST(Array2TileTest, StringsScalarAndForwarding) {
  auto s = KernelRunner("Tile").Input(test::Strings(TensorShape({2}))).Input(I32({3})).RunOne();
  ASSERT_TRUE(s.ok());
  EXPECT_THAT(test::StringValues(*s), ElementsAre("s0", "s1", "s0", "s1", "s0", "s1"));
  auto scalar = KernelRunner("Tile").Input(Tensor::Scalar<float>(2)).Input(I32({})).RunOne();
  ASSERT_TRUE(scalar.ok());
  EXPECT_THAT(ToDoubles(*scalar), ElementsAre(2));
  Tensor x = Iota(DT_FLOAT, TensorShape({2, 2}));
  auto same = KernelRunner("Tile").Input(x).Input(I32({1, 1})).RunOne();
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->SharesBufferWith(x));
}

TEST(Array2TileTest, Errors) {
  Tensor x = Iota(DT_FLOAT, TensorShape({2, 3}));
  ExpectInvalid(KernelRunner("Tile").Input(x).Input(I32({2})).Run().status(),
                "Expected multiples argument to be a vector of length 2");
  ExpectInvalid(KernelRunner("Tile").Input(x).Input(I32({2, -1})).Run().status(),
                "Expected multiples[1] >= 0, but got -1");
  ExpectInvalid(KernelRunner("Tile").Input(x).Input(I64({int64_t{1} << 62, 4})).Run().status(),
                "overflow");
  KernelRunner r("Tile");
  Tensor m = I32({2, 3});
  r.Input(x).Input(m);
  auto s = r.InferShapes({PartialTensorShape({-1, 4}), PartialTensorShape({2})}, {nullptr, &m});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, 12}));
}

TEST(Array2BroadcastToTest, AgainstReference) {
  struct Case {
    std::vector<int64_t> in, out;
  };
  for (const Case& c : std::vector<Case>{{{3}, {2, 3}},
                                         {{2, 1}, {2, 4}},
                                         {{1, 3, 1}, {2, 3, 4}},
                                         {{}, {2, 2}},
                                         {{1}, {0, 5}},
                                         {{4, 1, 2}, {3, 4, 5, 2}}}) {
    Tensor x = Iota(DT_DOUBLE, TensorShape(c.in), 1);
    auto out = KernelRunner("BroadcastTo").Input(x).Input(I64(c.out)).RunOne();
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(DimsOf(*out), c.out);
    const auto vx = ToDoubles(x), vo = ToDoubles(*out);
    const size_t lead = c.out.size() - c.in.size();
    for (size_t f = 0; f < vo.size(); ++f) {
      auto i = Unravel(f, c.out);
      std::vector<int64_t> j(i.begin() + lead, i.end());
      for (size_t d = 0; d < j.size(); ++d) {
        if (c.in[d] == 1) j[d] = 0;
      }
      ASSERT_EQ(vo[f], vx[Ravel(j, c.in)]);
    }
  }
  Tensor same = Iota(DT_FLOAT, TensorShape({2, 3}));
  auto fwd = KernelRunner("BroadcastTo").Input(same).Input(I32({2, 3})).RunOne();
  ASSERT_TRUE(fwd.ok());
  EXPECT_TRUE(fwd->SharesBufferWith(same));
}

TEST(Array2BroadcastToTest, Errors) {
  Tensor x = Iota(DT_FLOAT, TensorShape({2, 3}));
  ExpectInvalid(KernelRunner("BroadcastTo").Input(x).Input(I32({4, 3})).Run().status(),
                "Incompatible shapes: [2,3] vs. [4,3]");
  ExpectInvalid(KernelRunner("BroadcastTo").Input(x).Input(I32({3})).Run().status(),
                "must be no greater than rank");
  EXPECT_FALSE(KernelRunner("BroadcastTo").Input(x).Input(I32({-2, 3})).Run().ok());
  KernelRunner r("BroadcastTo");
  Tensor shape = I32({5, 2, 3});
  r.Input(x).Input(shape);
  auto s = r.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({3})}, {nullptr, &shape});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0], PartialTensorShape({5, 2, 3}));
  EXPECT_FALSE(r.InferShapes({PartialTensorShape({4, 3}), PartialTensorShape({3})}, {nullptr, &shape}).ok());
}

TEST(Array2PadTest, PadAndPadV2AgainstReference) {
  const std::vector<int64_t> dims = {2, 3, 2};
  const std::vector<int32_t> pads = {1, 0, 2, 1, 0, 3};
  for (DataType dt : {DT_FLOAT, DT_INT16, DT_BFLOAT16}) {
    for (bool v2 : {false, true}) {
      Tensor x = Iota(dt, TensorShape(dims), 1);
      KernelRunner r(v2 ? "PadV2" : "Pad");
      r.Input(x).Input(test::AsTensor<int32_t>(pads, TensorShape({3, 2})));
      if (v2) r.Input(test::FromDoubles(dt, TensorShape(), {-7}));
      auto out = r.RunOne();
      ASSERT_TRUE(out.ok()) << out.status();
      const std::vector<int64_t> od = {3, 6, 5};
      ASSERT_EQ(DimsOf(*out), od);
      const auto vx = ToDoubles(x), vo = ToDoubles(*out);
      for (size_t f = 0; f < vo.size(); ++f) {
        auto i = Unravel(f, od);
        bool inside = true;
        for (size_t d = 0; d < 3; ++d) {
          i[d] -= pads[2 * d];
          inside = inside && i[d] >= 0 && i[d] < dims[d];
        }
        ASSERT_EQ(vo[f], inside ? vx[Ravel(i, dims)] : (v2 ? -7.0 : 0.0)) << f;
      }
    }
  }
}

TEST(Array2PadTest, StringsEmptyAndForwarding) {
  auto s = KernelRunner("PadV2")
               .Input(test::Strings(TensorShape({2})))
               .Input(test::AsTensor<int64_t>({1, 1}, TensorShape({1, 2})))
               .Input(Tensor::Scalar<std::string>("pad"))
               .RunOne();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(test::StringValues(*s), ElementsAre("pad", "s0", "s1", "pad"));
  auto e = KernelRunner("Pad")
               .Input(Tensor(DT_FLOAT, TensorShape({0, 2})))
               .Input(test::AsTensor<int32_t>({1, 1, 0, 0}, TensorShape({2, 2})))
               .RunOne();
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(DimsOf(*e), (std::vector<int64_t>{2, 2}));
  EXPECT_THAT(ToDoubles(*e), ElementsAre(0, 0, 0, 0));
  Tensor x = Iota(DT_FLOAT, TensorShape({2}));
  auto same = KernelRunner("Pad").Input(x).Input(test::AsTensor<int32_t>({0, 0}, TensorShape({1, 2}))).RunOne();
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->SharesBufferWith(x));
}

TEST(Array2PadTest, Errors) {
  Tensor x = Iota(DT_FLOAT, TensorShape({2, 3}));
  auto pad = [&](std::vector<int32_t> p, TensorShape s) {
    return KernelRunner("Pad").Input(x).Input(test::AsTensor<int32_t>(p, s)).Run().status();
  };
  ExpectInvalid(pad({1, 1, 1, 1, 1, 1}, TensorShape({2, 3})), "paddings must be a matrix with 2 columns");
  ExpectInvalid(pad({1, 1}, TensorShape({1, 2})), "The first dimension of paddings must be the rank");
  ExpectInvalid(pad({1, -1, 0, 0}, TensorShape({2, 2})), "Paddings must be non-negative: 1 -1");
  ExpectInvalid(KernelRunner("PadV2")
                    .Input(x)
                    .Input(test::AsTensor<int32_t>({0, 0, 0, 0}, TensorShape({2, 2})))
                    .Input(Iota(DT_FLOAT, TensorShape({2})))
                    .Run()
                    .status(),
                "constant_values must be a scalar");
  KernelRunner r("Pad");
  Tensor p = test::AsTensor<int32_t>({1, 2, 0, 3}, TensorShape({2, 2}));
  r.Input(x).Input(p);
  auto s = r.InferShapes({PartialTensorShape({-1, 3}), PartialTensorShape({2, 2})}, {nullptr, &p});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, 6}));
}

}  // namespace
}  // namespace tensorflux
