// Array ops (ops/array_ops.cc, kernels/cpu/{constant_op,identity_op,shape_ops}.cc): Const from
// tensor_content and from broadcast *_val fields, Placeholder's error, PlaceholderWithDefault,
// Identity(N) buffer sharing, Reshape's -1 inference and every error, Shape/Size/Rank,
// Fill, ZerosLike/OnesLike, and the shape functions with and without constant inputs.

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace tensorflux {
namespace {

using test::AsTensor;
using test::KernelRunner;
using test::ToDoubles;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Sets a Const runner's value attr to `proto` and its dtype attr to `dtype`.
KernelRunner& SetConst(KernelRunner& r, const TensorProto& proto, DataType dtype) {
  AttrValue v;
  *v.mutable_tensor() = proto;
  (*r.mutable_def()->mutable_attr())["value"] = v;
  return r.Attr("dtype", dtype);
}

StatusOr<Tensor> RunConst(const TensorProto& proto, DataType dtype) {
  KernelRunner r("Const", "c");
  return SetConst(r, proto, dtype).RunOne();
}

TensorProto FloatProto(std::vector<int64_t> dims) {
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  for (int64_t d : dims) p.mutable_tensor_shape()->add_dim()->set_size(d);
  return p;
}

// ---------------------------------------------------------------- Const

TEST(ConstOpTest, FromTensorContent) {
  TensorProto p = FloatProto({2, 2});
  const float vals[4] = {1.5f, -2.0f, 3.25f, 4.0f};
  p.set_tensor_content(std::string(reinterpret_cast<const char*>(vals), sizeof(vals)));
  auto out = RunConst(p, DT_FLOAT);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({2, 2}));
  EXPECT_THAT(ToDoubles(*out), ElementsAre(1.5, -2.0, 3.25, 4.0));
}

TEST(ConstOpTest, BroadcastsTheLastFloatVal) {
  TensorProto p = FloatProto({4});
  p.add_float_val(7.0f);
  auto out = RunConst(p, DT_FLOAT);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles(*out), ElementsAre(7, 7, 7, 7));

  TensorProto q = FloatProto({2, 2});
  q.add_float_val(1.0f);
  q.add_float_val(2.0f);
  out = RunConst(q, DT_FLOAT);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles(*out), ElementsAre(1, 2, 2, 2));
}

TEST(ConstOpTest, EmptyValFieldGivesZerosAndInt64Works) {
  TensorProto p;
  p.set_dtype(DT_INT64);
  p.mutable_tensor_shape()->add_dim()->set_size(3);
  auto out = RunConst(p, DT_INT64);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles(*out), ElementsAre(0, 0, 0));
}

TEST(ConstOpTest, StringScalar) {
  TensorProto p;
  p.set_dtype(DT_STRING);
  p.add_string_val("hello");
  auto out = RunConst(p, DT_STRING);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->scalar<std::string>(), "hello");
}

TEST(ConstOpTest, EveryRunSharesTheDecodedBuffer) {
  TensorProto p = FloatProto({2});
  p.add_float_val(3.0f);
  KernelRunner r("Const", "c");
  auto a = SetConst(r, p, DT_FLOAT).RunOne();
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(a->RefCountIsOne());  // the kernel keeps its own reference
}

TEST(ConstOpTest, TypeMismatchFailsAtConstruction) {
  TensorProto p = FloatProto({1});
  p.add_float_val(1.0f);
  auto out = RunConst(p, DT_INT32);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("Type mismatch between value (float) and dtype (int32)"));
}

TEST(ConstOpTest, BadContentLengthFailsAtConstruction) {
  TensorProto p = FloatProto({3});
  p.set_tensor_content(std::string(5, '\0'));  // 3 floats need 12 bytes
  auto out = RunConst(p, DT_FLOAT);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("Const node 'c'"));
}

TEST(ConstOpTest, ShapeFunctionReadsTheProtoShape) {
  TensorProto p = FloatProto({2, 0, 5});
  KernelRunner r("Const", "c");
  auto shapes = SetConst(r, p, DT_FLOAT).InferShapes({});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialTensorShape({2, 0, 5}));
}

// ---------------------------------------------------------------- Placeholders

TEST(PlaceholderOpTest, UnfedIsAnErrorNamingNodeDtypeAndShape) {
  KernelRunner r("Placeholder", "x");
  r.Attr("dtype", DT_FLOAT).Attr("shape", PartialTensorShape({-1, 3}));
  auto out = r.Run();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("You must feed a value for placeholder tensor 'x' with dtype float and "
                        "shape [?,3]"));
}

TEST(PlaceholderOpTest, UnknownShapeIsLeftOutOfTheMessage) {
  KernelRunner r("Placeholder", "ids");
  r.Attr("dtype", DT_INT64);  // shape defaults to unknown rank
  auto out = r.Run();
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("You must feed a value for placeholder tensor 'ids' with dtype int64"));
  EXPECT_THAT(std::string(out.status().message()), ::testing::Not(HasSubstr("shape")));
}

TEST(PlaceholderOpTest, ShapeFunctionGivesTheShapeAttr) {
  KernelRunner r("Placeholder", "x");
  r.Attr("dtype", DT_FLOAT).Attr("shape", PartialTensorShape({-1, 3}));
  auto shapes = r.InferShapes({});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialTensorShape({-1, 3}));

  KernelRunner u("Placeholder", "y");
  u.Attr("dtype", DT_FLOAT);
  shapes = u.InferShapes({});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_TRUE((*shapes)[0].unknown_rank());
}

TEST(PlaceholderWithDefaultOpTest, ForwardsItsInput) {
  Tensor in = AsTensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  KernelRunner r("PlaceholderWithDefault");
  r.Attr("dtype", DT_FLOAT).Attr("shape", PartialTensorShape({-1, 3})).Input(in);
  auto out = r.RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->SharesBufferWith(in));
  EXPECT_EQ(out->shape(), TensorShape({2, 3}));
}

TEST(PlaceholderWithDefaultOpTest, IncompatibleInputIsAnError) {
  KernelRunner r("PlaceholderWithDefault", "pwd");
  r.Attr("dtype", DT_FLOAT).Attr("shape", PartialTensorShape({-1, 4}));
  r.Input(AsTensor<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  auto out = r.Run();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("input shape [2,3] is not compatible"));

  auto shapes = r.InferShapes({PartialTensorShape({2, 3})});
  EXPECT_EQ(shapes.status().code(), absl::StatusCode::kInvalidArgument);
  shapes = r.InferShapes({PartialTensorShape({2, -1})});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialTensorShape({-1, 4}));  // the attr, not the input
}

// ---------------------------------------------------------------- Identity, IdentityN, NoOp

TEST(IdentityOpTest, SharesTheBufferForAnyDtype) {
  Tensor f = AsTensor<float>({1, 2}, {2});
  auto out = KernelRunner("Identity").Input(f).RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->SharesBufferWith(f));

  Tensor s = Tensor::Scalar<std::string>("abc");
  out = KernelRunner("Identity").Input(s).RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->scalar<std::string>(), "abc");
}

TEST(IdentityOpTest, IdentityNForwardsEachInput) {
  Tensor a = AsTensor<float>({1, 2}, {2});
  Tensor b = AsTensor<int64_t>({7}, {});
  KernelRunner r("IdentityN");
  auto out = r.Input(a).Input(b).Run();
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_TRUE((*out)[0].SharesBufferWith(a));
  EXPECT_EQ((*out)[1].dtype(), DT_INT64);
  EXPECT_EQ((*out)[1].scalar<int64_t>(), 7);

  auto shapes = r.InferShapes({PartialTensorShape({2}), PartialTensorShape({})});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialTensorShape({2}));
  EXPECT_EQ((*shapes)[1], PartialTensorShape::Scalar());
}

TEST(IdentityOpTest, NoOpRunsWithNoOutputs) {
  auto out = KernelRunner("NoOp").Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->empty());
}

// ---------------------------------------------------------------- Reshape

StatusOr<Tensor> Reshape(Tensor in, Tensor shape, std::string name = "r") {
  return KernelRunner("Reshape", name).Input(std::move(in)).Input(std::move(shape)).RunOne();
}

Tensor Range(int64_t n, TensorShape shape) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return AsTensor<float>(v, shape);
}

TEST(ReshapeOpTest, InfersTheMinusOneAndSharesTheBuffer) {
  Tensor in = Range(6, {2, 3});
  auto out = Reshape(in, AsTensor<int32_t>({3, -1}, {2}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({3, 2}));
  EXPECT_TRUE(out->SharesBufferWith(in));
  EXPECT_THAT(ToDoubles(*out), ElementsAre(0, 1, 2, 3, 4, 5));

  out = Reshape(in, AsTensor<int64_t>({-1}, {1}));  // Tshape = int64
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({6}));

  out = Reshape(in, AsTensor<int32_t>({1, 2, -1, 1}, {4}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({1, 2, 3, 1}));
}

TEST(ReshapeOpTest, ScalarsAndEmptyTensors) {
  auto out = Reshape(AsTensor<float>({5}, {1, 1}), AsTensor<int32_t>({}, {0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape());

  out = Reshape(Range(0, {0, 5}), AsTensor<int32_t>({-1, 5}, {2}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 5}));

  // The zero is left out when inferring the -1: [0, -1] from [0, 5] gives [0, 5].
  out = Reshape(Range(0, {0, 5}), AsTensor<int32_t>({0, -1}, {2}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0, 5}));
}

TEST(ReshapeOpTest, Errors) {
  Tensor in = Range(6, {2, 3});
  struct Case {
    std::vector<int32_t> sizes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{-1, -1}, "Only one input size may be -1, not both 0 and 1"},
      {{3, -2}, "Size 1 must be non-negative, not -2"},
      {{4}, "Input to reshape is a tensor with 6 values, but the requested shape has 4"},
      {{-1, 4}, "Input to reshape is a tensor with 6 values, but the requested shape requires a "
                "multiple of 4"},
      {{0, -1}, "Input to reshape is a tensor with 6 values, but the requested shape has 0"},
  };
  for (const Case& c : cases) {
    auto out = Reshape(in, AsTensor<int32_t>(c.sizes, {int64_t(c.sizes.size())}));
    ASSERT_FALSE(out.ok()) << c.message;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(out.status().message(), HasSubstr(c.message));
  }
  auto out = Reshape(in, AsTensor<int32_t>({2, 3}, {1, 2}));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("sizes input must be 1-D, not [1,2]"));

  out = Reshape(in, AsTensor<int32_t>({1, 1, 1, 1, 1, 1, 1, 2, 3}, {9}));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);

  // Tshape must be int32 or int64.
  out = Reshape(in, AsTensor<float>({6}, {1}));
  EXPECT_FALSE(out.ok());
}

TEST(ReshapeOpTest, ShapeFunctionUsesAConstantShape) {
  KernelRunner r("Reshape");
  r.Input(Range(6, {2, 3})).Input(AsTensor<int32_t>({-1, 2}, {2}));
  Tensor sizes = AsTensor<int32_t>({-1, 2}, {2});

  auto s = r.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({2})}, {nullptr, &sizes});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({3, 2}));

  // Unknown input: the -1 stays unknown.
  s = r.InferShapes({PartialTensorShape({-1, 3}), PartialTensorShape({2})}, {nullptr, &sizes});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, 2}));

  // Not a constant: only the rank is known, from the shape input's length.
  s = r.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({3})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, -1, -1}));
  s = r.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({-1})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE((*s)[0].unknown_rank());

  // Mismatches are caught before running.
  Tensor four = AsTensor<int32_t>({4}, {1});
  s = r.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({1})}, {nullptr, &four});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  Tensor bad = AsTensor<int32_t>({-1, 4}, {2});
  s = r.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({2})}, {nullptr, &bad});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  Tensor two = AsTensor<int32_t>({-1, -1}, {2});
  s = r.InferShapes({PartialTensorShape({2, 3}), PartialTensorShape({2})}, {nullptr, &two});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("Only one input size may be -1"));
}

// ---------------------------------------------------------------- Shape, Size, Rank

TEST(ShapeOpsTest, ShapeSizeRankInBothOutTypes) {
  Tensor in = Range(24, {2, 3, 4});
  auto shape = KernelRunner("Shape").Input(in).RunOne();
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->dtype(), DT_INT32);
  EXPECT_THAT(ToDoubles(*shape), ElementsAre(2, 3, 4));

  shape = KernelRunner("Shape").Attr("out_type", DT_INT64).Input(in).RunOne();
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->dtype(), DT_INT64);
  EXPECT_THAT(ToDoubles(*shape), ElementsAre(2, 3, 4));

  auto size = KernelRunner("Size").Attr("out_type", DT_INT64).Input(in).RunOne();
  ASSERT_TRUE(size.ok()) << size.status();
  EXPECT_EQ(size->dims(), 0);
  EXPECT_EQ(size->scalar<int64_t>(), 24);

  auto rank = KernelRunner("Rank").Input(in).RunOne();
  ASSERT_TRUE(rank.ok()) << rank.status();
  EXPECT_EQ(rank->dtype(), DT_INT32);
  EXPECT_EQ(rank->scalar<int32_t>(), 3);

  // A scalar has shape [] and size 1.
  shape = KernelRunner("Shape").Input(Tensor::Scalar<float>(1)).RunOne();
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->shape(), TensorShape({0}));
  size = KernelRunner("Size").Input(Tensor::Scalar<float>(1)).RunOne();
  ASSERT_TRUE(size.ok()) << size.status();
  EXPECT_EQ(size->scalar<int32_t>(), 1);
}

TEST(ShapeOpsTest, ShapeFunctions) {
  KernelRunner shape("Shape");
  shape.Input(Range(1, {1}));
  auto s = shape.InferShapes({PartialTensorShape({2, -1, 4})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({3}));
  s = shape.InferShapes({PartialTensorShape()});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1}));

  KernelRunner rank("Rank");
  rank.Input(Range(1, {1}));
  s = rank.InferShapes({PartialTensorShape()});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape::Scalar());
}

// ---------------------------------------------------------------- Fill

TEST(FillOpTest, FillsEveryElement) {
  auto out = KernelRunner("Fill")
                 .Input(AsTensor<int32_t>({2, 3}, {2}))
                 .Input(Tensor::Scalar<float>(2.5f))
                 .RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({2, 3}));
  EXPECT_THAT(ToDoubles(*out), ElementsAre(2.5, 2.5, 2.5, 2.5, 2.5, 2.5));

  out = KernelRunner("Fill")
            .Input(AsTensor<int64_t>({3}, {1}))  // index_type = int64
            .Input(Tensor::Scalar<int64_t>(-9))
            .RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles(*out), ElementsAre(-9, -9, -9));

  out = KernelRunner("Fill")
            .Input(AsTensor<int32_t>({2}, {1}))
            .Input(Tensor::Scalar<Half>(Half(1.5f)))
            .RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles(*out), ElementsAre(1.5, 1.5));

  out = KernelRunner("Fill")
            .Input(AsTensor<int32_t>({2}, {1}))
            .Input(Tensor::Scalar<std::string>("ab"))
            .RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->flat<std::string>()[1], "ab");

  out = KernelRunner("Fill")
            .Input(AsTensor<int32_t>({}, {0}))
            .Input(Tensor::Scalar<bool>(true))
            .RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape());
  EXPECT_TRUE(out->scalar<bool>());
}

TEST(FillOpTest, Errors) {
  auto out = KernelRunner("Fill")
                 .Input(AsTensor<int32_t>({2, -3}, {2}))
                 .Input(Tensor::Scalar<float>(1))
                 .RunOne();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("Fill dimensions must be >= 0, got -3"));

  out = KernelRunner("Fill")
            .Input(AsTensor<int32_t>({2, 3}, {1, 2}))
            .Input(Tensor::Scalar<float>(1))
            .RunOne();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("dims must be a vector, got shape [1,2]"));

  out = KernelRunner("Fill")
            .Input(AsTensor<int32_t>({2}, {1}))
            .Input(AsTensor<float>({1, 2}, {2}))
            .RunOne();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("value must be a scalar, got shape [2]"));
}

TEST(FillOpTest, ShapeFunctionUsesConstantDims) {
  KernelRunner r("Fill");
  r.Input(AsTensor<int32_t>({2, 3}, {2})).Input(Tensor::Scalar<float>(0));
  Tensor dims = AsTensor<int32_t>({2, 3}, {2});
  auto s = r.InferShapes({PartialTensorShape({2}), PartialTensorShape::Scalar()}, {&dims, nullptr});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 3}));

  s = r.InferShapes({PartialTensorShape({2}), PartialTensorShape::Scalar()});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, -1}));

  s = r.InferShapes({PartialTensorShape({2}), PartialTensorShape({3})});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);

  Tensor neg = AsTensor<int32_t>({2, -1}, {2});
  s = r.InferShapes({PartialTensorShape({2}), PartialTensorShape::Scalar()}, {&neg, nullptr});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------- ZerosLike, OnesLike

TEST(FillLikeOpTest, ZerosAndOnesForSeveralDtypes) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_UINT8, DT_BOOL, DT_HALF,
                      DT_BFLOAT16}) {
    Tensor x = test::FromDoubles(dt, TensorShape({2, 2}), {1, 0, 1, 1});
    auto zeros = KernelRunner("ZerosLike").Input(x).RunOne();
    ASSERT_TRUE(zeros.ok()) << zeros.status();
    EXPECT_EQ(zeros->dtype(), dt);
    EXPECT_EQ(zeros->shape(), TensorShape({2, 2}));
    EXPECT_THAT(ToDoubles(*zeros), ElementsAre(0, 0, 0, 0)) << DataTypeString(dt);
    auto ones = KernelRunner("OnesLike").Input(x).RunOne();
    ASSERT_TRUE(ones.ok()) << ones.status();
    EXPECT_THAT(ToDoubles(*ones), ElementsAre(1, 1, 1, 1)) << DataTypeString(dt);
    // The input was not overwritten (the runner's copy held it besides ours).
    EXPECT_THAT(ToDoubles(x), ElementsAre(1, 0, 1, 1));
  }
}

TEST(FillLikeOpTest, ReusesAnUnsharedInputBuffer) {
  KernelRunner r("OnesLike");
  r.Input(Range(4, {4}));  // the runner holds the only reference
  auto out = r.RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles(*out), ElementsAre(1, 1, 1, 1));
}

TEST(FillLikeOpTest, OnesLikeRejectsStrings) {
  auto out = KernelRunner("OnesLike").Input(Tensor::Scalar<std::string>("a")).Run();
  EXPECT_FALSE(out.ok());
  auto zeros = KernelRunner("ZerosLike").Input(AsTensor<std::string>({"a", "b"}, {2})).RunOne();
  ASSERT_TRUE(zeros.ok()) << zeros.status();
  EXPECT_EQ(zeros->flat<std::string>()[1], "");
}

}  // namespace
}  // namespace tensorflux
