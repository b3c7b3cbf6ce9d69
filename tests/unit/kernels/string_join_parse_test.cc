// StringJoin (kernel and shape function) and ParseExample's shape function (its kernel's tests:
// example_parsing_test.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_test_util.h"

namespace tensorflux {
namespace {

Tensor Strings(std::vector<std::string> v, TensorShape shape) {
  return test::AsTensor<std::string>(v, shape);
}

TEST(StringJoinTest, ScalarsRepeatAndShapesMustAgree) {
  auto out = test::KernelRunner("StringJoin")
                 .Input(Strings({"a", "b", "c", "d"}, {2, 2}))
                 .Input(Tensor::Scalar<std::string>("_x"))
                 .Input(Strings({"1", "2", "3", "4"}, {2, 2}))
                 .Attr("separator", std::string("/"))
                 .RunOne();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({2, 2}));
  const auto v = out->flat<std::string>();
  EXPECT_EQ(std::vector<std::string>(v.begin(), v.end()),
            (std::vector<std::string>{"a/_x/1", "b/_x/2", "c/_x/3", "d/_x/4"}));

  auto scalar = test::KernelRunner("StringJoin")
                    .Input(Tensor::Scalar<std::string>("pre"))
                    .Input(Tensor::Scalar<std::string>("_temp/part"))
                    .RunOne();
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->scalar<std::string>(), "pre_temp/part");

  auto bad = test::KernelRunner("StringJoin")
                 .Input(Strings({"a", "b"}, {2}))
                 .Input(Strings({"a", "b", "c"}, {3}))
                 .Run();
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  auto shapes = test::KernelRunner("StringJoin")
                    .Input(Strings({"a", "b"}, {2}))
                    .Input(Strings({"a", "b", "c"}, {3}))
                    .InferShapes({PartialTensorShape({2}), PartialTensorShape({3})});
  EXPECT_EQ(shapes.status().code(), absl::StatusCode::kInvalidArgument);
  shapes = test::KernelRunner("StringJoin")
               .Input(Tensor::Scalar<std::string>("a"))
               .Input(Strings({"a", "b"}, {2}))
               .InferShapes({PartialTensorShape::Scalar(), PartialTensorShape({-1})});
  ASSERT_TRUE(shapes.ok());
  EXPECT_EQ((*shapes)[0].DebugString(), PartialTensorShape({-1}).DebugString());
}

TEST(ParseExampleTest, ShapeFunction) {
  std::vector<PartialTensorShape> dense_shapes = {PartialTensorShape({1}),
                                                  PartialTensorShape({2, 3})};
  test::KernelRunner run("ParseExample");
  run.Input(Strings({"", ""}, {2}))
      .Input(Strings({}, {0}))
      .Input(Tensor::Scalar<std::string>("sparse"))
      .Input(Tensor::Scalar<std::string>("x"))
      .Input(Tensor::Scalar<std::string>("y"))
      .Input(Tensor(DT_FLOAT, TensorShape({0})))
      .Input(Tensor(DT_INT64, TensorShape({0})))
      .Attr("Nsparse", int64_t{1})
      .Attr("Ndense", int64_t{2})
      .Attr("sparse_types", absl::Span<const DataType>(std::vector<DataType>{DT_STRING}))
      .Attr("Tdense", absl::Span<const DataType>(std::vector<DataType>{DT_FLOAT, DT_INT64}))
      .Attr("dense_shapes", absl::Span<const PartialTensorShape>(dense_shapes));
  auto shapes = run.InferShapes({PartialTensorShape({2}), PartialTensorShape({0}),
                                 PartialTensorShape::Scalar(), PartialTensorShape::Scalar(),
                                 PartialTensorShape::Scalar(), PartialTensorShape({0}),
                                 PartialTensorShape({0})});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  ASSERT_EQ(shapes->size(), 5u);
  EXPECT_EQ((*shapes)[0].DebugString(), PartialTensorShape({-1, 2}).DebugString());
  EXPECT_EQ((*shapes)[2].DebugString(), PartialTensorShape({2}).DebugString());
  EXPECT_EQ((*shapes)[3].DebugString(), PartialTensorShape({2, 1}).DebugString());
  EXPECT_EQ((*shapes)[4].DebugString(), PartialTensorShape({2, 2, 3}).DebugString());
  // Two empty (valid, featureless) Examples lack the required dense feature "x".
  EXPECT_EQ(run.Run().status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorflux
