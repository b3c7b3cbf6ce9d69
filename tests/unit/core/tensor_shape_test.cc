#include "tensorflux/core/tensor_shape.h"

#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace tensorflux {
namespace {

TEST(TensorShapeTest, Basics) {
  TensorShape s({2, 3, 4});
  EXPECT_EQ(s.dims(), 3);
  EXPECT_EQ(s.dim_size(1), 3);
  EXPECT_EQ(s.num_elements(), 24);
  EXPECT_EQ(s.DebugString(), "[2,3,4]");
  EXPECT_EQ(TensorShape().num_elements(), 1);
  EXPECT_EQ(TensorShape().DebugString(), "[]");
  EXPECT_EQ(TensorShape({5, 0}).num_elements(), 0);
}

TEST(TensorShapeTest, Mutators) {
  TensorShape s({2, 3});
  s.AddDim(4);
  EXPECT_EQ(s.num_elements(), 24);
  s.set_dim(0, 5);
  EXPECT_EQ(s.num_elements(), 60);
  s.RemoveDim(1);
  EXPECT_EQ(s, TensorShape({5, 4}));
  s.InsertDim(0, 7);
  EXPECT_EQ(s, TensorShape({7, 5, 4}));
  EXPECT_EQ(s.num_elements(), 140);
  EXPECT_NE(s, TensorShape({7, 5}));
}

TEST(TensorShapeTest, MakeRejectsNegativeDim) {
  std::vector<int64_t> dims = {2, -1};
  auto s = TensorShape::Make(dims);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("negative"), std::string::npos);
}

TEST(TensorShapeTest, MakeRejectsOverflow) {
  const int64_t big = int64_t{1} << 32;
  std::vector<int64_t> dims = {big, big};  // 2^64 overflows int64
  auto s = TensorShape::Make(dims);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("overflow"), std::string::npos);
  // 2^31 * 2^31 = 2^62 fits.
  std::vector<int64_t> ok_dims = {int64_t{1} << 31, int64_t{1} << 31};
  auto ok = TensorShape::Make(ok_dims);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->num_elements(), int64_t{1} << 62);
  // A zero dim makes any product fine.
  std::vector<int64_t> zero = {0, std::numeric_limits<int64_t>::max(), 5};
  EXPECT_EQ(TensorShape::Make(zero)->num_elements(), 0);
}

TEST(TensorShapeTest, RankNineIsRejected) {
  std::vector<int64_t> eight(8, 1), nine(9, 1);
  EXPECT_TRUE(TensorShape::Make(eight).ok());
  auto s = TensorShape::Make(nine);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("rank 9"), std::string::npos);

  TensorShape t(eight);
  Status st = t.AddDimWithStatus(1);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(t.dims(), 8);
}

TEST(TensorShapeTest, AddDimWithStatusChecks) {
  TensorShape t;
  EXPECT_TRUE(t.AddDimWithStatus(3).ok());
  EXPECT_EQ(t.AddDimWithStatus(-2).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(t.AddDimWithStatus(int64_t{1} << 61).ok());
  EXPECT_EQ(t.AddDimWithStatus(2).code(), absl::StatusCode::kInvalidArgument);  // 3*2^62 overflows
  EXPECT_EQ(t, TensorShape({3, int64_t{1} << 61}));
}

TEST(TensorShapeTest, ProtoRoundTrip) {
  TensorShape s({4, 1, 7});
  TensorShapeProto p;
  s.AsProto(&p);
  ASSERT_EQ(p.dim_size(), 3);
  EXPECT_EQ(p.dim(2).size(), 7);
  auto back = TensorShape::FromProto(p);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, s);
  // The scalar shape is an empty message.
  TensorShapeProto scalar;
  TensorShape().AsProto(&scalar);
  EXPECT_EQ(scalar.ByteSizeLong(), 0u);
}

TEST(TensorShapeTest, FromProtoRejectsPartialShapes) {
  TensorShapeProto p;
  p.add_dim()->set_size(-1);
  EXPECT_EQ(TensorShape::FromProto(p).status().code(), absl::StatusCode::kInvalidArgument);
  TensorShapeProto u;
  u.set_unknown_rank(true);
  EXPECT_EQ(TensorShape::FromProto(u).status().code(), absl::StatusCode::kInvalidArgument);
  TensorShapeProto nine;
  for (int i = 0; i < 9; ++i) nine.add_dim()->set_size(1);
  EXPECT_EQ(TensorShape::FromProto(nine).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PartialTensorShapeTest, DebugStrings) {
  EXPECT_EQ(PartialTensorShape().DebugString(), "<unknown>");
  EXPECT_EQ(PartialTensorShape({-1, 3}).DebugString(), "[?,3]");
  EXPECT_EQ(PartialTensorShape::Scalar().DebugString(), "[]");
  EXPECT_EQ(PartialTensorShape(TensorShape({2, 3})).DebugString(), "[2,3]");
}

TEST(PartialTensorShapeTest, Properties) {
  PartialTensorShape u;
  EXPECT_TRUE(u.unknown_rank());
  EXPECT_EQ(u.dims(), -1);
  EXPECT_FALSE(u.IsFullyDefined());
  EXPECT_EQ(u.num_elements(), -1);
  PartialTensorShape p({-1, 3});
  EXPECT_EQ(p.dims(), 2);
  EXPECT_FALSE(p.IsFullyDefined());
  EXPECT_EQ(p.num_elements(), -1);
  EXPECT_EQ(p.AsTensorShape().status().code(), absl::StatusCode::kInvalidArgument);
  PartialTensorShape f({2, 3});
  EXPECT_TRUE(f.IsFullyDefined());
  EXPECT_EQ(f.num_elements(), 6);
  EXPECT_EQ(*f.AsTensorShape(), TensorShape({2, 3}));
  EXPECT_TRUE(PartialTensorShape::Scalar().IsFullyDefined());
}

TEST(PartialTensorShapeTest, CompatibilityAndMerge) {
  PartialTensorShape a({-1, 3}), b({2, -1}), c({2, 4}), d({2});
  EXPECT_TRUE(a.IsCompatibleWith(b));
  EXPECT_FALSE(a.IsCompatibleWith(c));
  EXPECT_FALSE(a.IsCompatibleWith(d));
  EXPECT_TRUE(PartialTensorShape().IsCompatibleWith(c));
  auto m = a.MergeWith(b);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, PartialTensorShape({2, 3}));
  EXPECT_EQ(*PartialTensorShape().MergeWith(a), a);
  EXPECT_EQ(*a.MergeWith(PartialTensorShape()), a);
  EXPECT_EQ(a.MergeWith(c).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(a.MergeWith(d).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PartialTensorShapeTest, ProtoRoundTripAndValidation) {
  for (const PartialTensorShape& s :
       {PartialTensorShape(), PartialTensorShape::Scalar(), PartialTensorShape({-1, 3, 0})}) {
    TensorShapeProto p;
    s.AsProto(&p);
    auto back = PartialTensorShape::FromProto(p);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, s) << s.DebugString();
  }
  TensorShapeProto bad;
  bad.add_dim()->set_size(-2);
  EXPECT_EQ(PartialTensorShape::FromProto(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  TensorShapeProto both;
  both.set_unknown_rank(true);
  both.add_dim()->set_size(1);
  EXPECT_EQ(PartialTensorShape::FromProto(both).status().code(),
            absl::StatusCode::kInvalidArgument);
  TensorShapeProto nine;
  for (int i = 0; i < 9; ++i) nine.add_dim()->set_size(-1);
  EXPECT_EQ(PartialTensorShape::FromProto(nine).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorflux
