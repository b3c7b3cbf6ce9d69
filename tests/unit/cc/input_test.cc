// Input::Initializer literals and the literal conversion rules of internal::OpBuilder.
#include <gtest/gtest.h>

#include <limits>

#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/op_builder.h"
#include "tensorflux/cc/ops/ops.h"

namespace tensorflux {
namespace {

TEST(InitializerTest, ScalarTypes) {
  EXPECT_EQ(Input::Initializer(1).tensor.dtype(), DT_INT32);
  EXPECT_EQ(Input::Initializer(int64_t{1}).tensor.dtype(), DT_INT64);
  EXPECT_EQ(Input::Initializer(1.f).tensor.dtype(), DT_FLOAT);
  EXPECT_EQ(Input::Initializer(1.0).tensor.dtype(), DT_DOUBLE);
  EXPECT_EQ(Input::Initializer(true).tensor.dtype(), DT_BOOL);
  EXPECT_EQ(Input::Initializer(uint8_t{3}).tensor.dtype(), DT_UINT8);
  Input::Initializer s("hello");
  EXPECT_EQ(s.tensor.dtype(), DT_STRING);
  EXPECT_EQ(s.tensor.scalar<std::string>(), "hello");
  EXPECT_EQ(Input::Initializer(7).tensor.dims(), 0);
}

TEST(InitializerTest, NestedListsStackRowMajor) {
  Input::Initializer m = {{1, 2, 3}, {4, 5, 6}};
  ASSERT_TRUE(m.status.ok());
  EXPECT_EQ(m.tensor.shape(), TensorShape({2, 3}));
  EXPECT_EQ(m.tensor.data<int32_t>()[4], 5);
  Input::Initializer cube = {{{1.0}, {2.0}}, {{3.0}, {4.0}}};
  ASSERT_TRUE(cube.status.ok());
  EXPECT_EQ(cube.tensor.shape(), TensorShape({2, 2, 1}));
  EXPECT_EQ(cube.tensor.data<double>()[3], 4.0);
  Input::Initializer strs = {{"a", "b"}, {"c", "d"}};
  ASSERT_TRUE(strs.status.ok());
  EXPECT_EQ(strs.tensor.data<std::string>()[2], "c");
  Input::Initializer shaped({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, TensorShape({3, 2}));
  ASSERT_TRUE(shaped.status.ok());
  EXPECT_EQ(shaped.tensor.shape(), TensorShape({3, 2}));
  Input::Initializer filled(2.5f, TensorShape({2, 2}));
  EXPECT_EQ(filled.tensor.data<float>()[3], 2.5f);
}

TEST(InitializerTest, BadInitializersCarryAStatus) {
  Input::Initializer ragged = {{1, 2}, {3}};
  EXPECT_EQ(ragged.status.code(), absl::StatusCode::kInvalidArgument);
  Input::Initializer mixed = {{1, 2}, {3.f, 4.f}};
  EXPECT_EQ(mixed.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(mixed.status.message().find("mixes"), std::string::npos);
  Input::Initializer count({1, 2, 3}, TensorShape({2, 2}));
  EXPECT_EQ(count.status.code(), absl::StatusCode::kInvalidArgument);
}

TEST(ConvertLiteralTest, Rules) {
  using internal::ConvertLiteral;
  // Whole floats convert to integers; fractions and out-of-range values do not.
  auto i = ConvertLiteral(Tensor::Scalar<double>(3.0), DT_INT32, "x");
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i->scalar<int32_t>(), 3);
  EXPECT_FALSE(ConvertLiteral(Tensor::Scalar<double>(3.5), DT_INT32, "x").ok());
  EXPECT_FALSE(ConvertLiteral(Tensor::Scalar<double>(3e9), DT_INT32, "x").ok());
  EXPECT_FALSE(ConvertLiteral(Tensor::Scalar<float>(NAN), DT_INT64, "x").ok());
  // Integers must fit.
  EXPECT_FALSE(ConvertLiteral(Tensor::Scalar<int32_t>(256), DT_UINT8, "x").ok());
  EXPECT_FALSE(ConvertLiteral(Tensor::Scalar<int32_t>(-1), DT_UINT32, "x").ok());
  auto u = ConvertLiteral(Tensor::Scalar<int32_t>(255), DT_UINT8, "x");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->scalar<uint8_t>(), 255);
  auto big = ConvertLiteral(Tensor::Scalar<int64_t>(std::numeric_limits<int64_t>::max()),
                            DT_UINT64, "x");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->scalar<uint64_t>(), uint64_t{9223372036854775807u});
  // Floats round between float types; overflow is an error.
  auto f = ConvertLiteral(Tensor::Scalar<double>(0.1), DT_FLOAT, "x");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->scalar<float>(), 0.1f);
  EXPECT_FALSE(ConvertLiteral(Tensor::Scalar<double>(1e300), DT_FLOAT, "x").ok());
  auto h = ConvertLiteral(Tensor::Scalar<int32_t>(3), DT_HALF, "x");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(static_cast<float>(h->scalar<Half>()), 3.f);
  EXPECT_FALSE(ConvertLiteral(Tensor::Scalar<float>(70000.f), DT_HALF, "x").ok());
  // bool and string never convert.
  EXPECT_FALSE(ConvertLiteral(Tensor::Scalar<bool>(true), DT_INT32, "x").ok());
  EXPECT_FALSE(ConvertLiteral(Tensor::Scalar<int32_t>(1), DT_BOOL, "x").ok());
  auto s = ConvertLiteral(Tensor::Scalar<int32_t>(1), DT_STRING, "input 'y'");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("input 'y'"), std::string::npos);
}

TEST(InitializerTest, LiteralsRunAsConstsOfEveryKind) {
  Scope root = Scope::NewRootScope();
  auto s = ops::Identity(root, std::string("tensorflux"));
  auto b = ops::Identity(root, {true, false});
  auto i64 = ops::Identity(root, {int64_t{1} << 40, int64_t{-3}});
  auto c = ops::Const(root, 1.5, DT_FLOAT);
  auto list = ops::IdentityN(root, {1, 2.5f, std::string("x")});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  std::vector<Tensor> out;
  Status st = session.Run({s, b, i64, c, list[0], list[1], list[2]}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(out[0].scalar<std::string>(), "tensorflux");
  EXPECT_EQ(out[1].data<bool>()[0], true);
  EXPECT_EQ(out[1].data<bool>()[1], false);
  EXPECT_EQ(out[2].data<int64_t>()[0], int64_t{1} << 40);
  EXPECT_EQ(out[3].dtype(), DT_FLOAT);
  EXPECT_EQ(out[3].scalar<float>(), 1.5f);
  EXPECT_EQ(out[4].dtype(), DT_INT32);
  EXPECT_EQ(out[5].dtype(), DT_FLOAT);
  EXPECT_EQ(out[6].scalar<std::string>(), "x");
}

}  // namespace
}  // namespace tensorflux
