// Building graphs with the generated op wrappers and running them with ClientSession.
#include "tensorflux/cc/client_session.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "tensorflux/cc/ops/ops.h"

namespace tensorflux {
namespace {

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

TEST(ClientSessionTest, MatMulWithTransposeAttr) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root, {{1.f, 2.f}, {3.f, 4.f}});
  auto b = ops::Const(root, {{5.f, 6.f}, {7.f, 8.f}});
  auto ab = ops::MatMul(root, a, b);
  auto atb = ops::MatMul(root, a, b, ops::MatMul::TransposeA(true));
  auto abt = ops::MatMul(root, a, b, ops::MatMul::Attrs().TransposeA(false).TransposeB(true));
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({ab, atb, abt}, &out).ok());
  ASSERT_EQ(out.size(), 3u);
  // Worked by hand: [[1,2],[3,4]] x [[5,6],[7,8]].
  EXPECT_EQ(out[0].shape(), TensorShape({2, 2}));
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{19, 22, 43, 50}));
  // a^T b = [[1,3],[2,4]] x [[5,6],[7,8]].
  EXPECT_EQ(Values<float>(out[1]), (std::vector<float>{26, 30, 38, 44}));
  // a b^T = [[1,2],[3,4]] x [[5,7],[6,8]].
  EXPECT_EQ(Values<float>(out[2]), (std::vector<float>{17, 23, 39, 53}));
}

TEST(ClientSessionTest, FeedsPlaceholdersAndBroadcasts) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT,
                            ops::Placeholder::Shape(PartialTensorShape({-1, 3})));
  auto y = ops::AddV2(root, ops::Mul(root, x, 0.5f), {1.f, 2.f, 3.f});
  ClientSession session(root);
  std::vector<Tensor> out;
  Status s = session.Run({{x, {{0.f, 2.f, 4.f}, {6.f, 8.f, 10.f}}}}, {y}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].shape(), TensorShape({2, 3}));
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{1, 3, 5, 4, 6, 8}));
}

TEST(ClientSessionTest, ElementwiseFamilyMatchesStdMath) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root, {0.25, 1.0, 4.0});  // double
  auto y = ops::Const(root, {2.0, 0.5, -1.0});
  std::vector<Output> fetches = {
      ops::Sqrt(root, x),     ops::Exp(root, x),        ops::Log(root, x),
      ops::Square(root, x),   ops::Neg(root, x),        ops::Sub(root, x, y),
      ops::RealDiv(root, x, y), ops::Maximum(root, x, y), ops::Minimum(root, x, y),
      ops::Add(root, x, y)};
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run(fetches, &out).ok());
  const double xs[] = {0.25, 1.0, 4.0}, ys[] = {2.0, 0.5, -1.0};
  for (int i = 0; i < 3; ++i) {
    const double a = xs[i], b = ys[i];
    const double want[] = {std::sqrt(a), std::exp(a), std::log(a), a * a, -a,
                           a - b, a / b, std::max(a, b), std::min(a, b), a + b};
    for (int k = 0; k < 10; ++k) {
      ASSERT_EQ(out[k].dtype(), DT_DOUBLE);
      EXPECT_NEAR(out[k].data<double>()[i], want[k], 1e-12 * std::max(1.0, std::fabs(want[k])))
          << "fetch " << k << " element " << i;
    }
  }
}

TEST(ClientSessionTest, ArrayOpsThroughWrappers) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root, {{1, 2, 3}, {4, 5, 6}});  // int32 [2,3]
  auto r = ops::Reshape(root, x, {3, -1});
  auto sh = ops::Shape(root, x);
  auto sh64 = ops::Shape(root, x, ops::Shape::OutType(DT_INT64));
  auto sz = ops::Size(root, x);
  auto rk = ops::Rank(root, x);
  auto fill = ops::Fill(root, {2, 2}, 7.5f);
  auto zeros = ops::ZerosLike(root, x);
  auto ones = ops::OnesLike(root, x);
  auto cast = ops::Cast(root, x, DT_FLOAT);
  auto id = ops::Identity(root, x);
  auto idn = ops::IdentityN(root, {x, fill});
  auto pwd = ops::PlaceholderWithDefault(root, 3.f, PartialTensorShape::Scalar());
  ClientSession session(root);
  std::vector<Tensor> out;
  Status s = session.Run({r, sh, sh64, sz, rk, fill, zeros, ones, cast, id, idn.output[0],
                          idn.output[1], pwd},
                         &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].shape(), TensorShape({3, 2}));
  EXPECT_EQ(Values<int32_t>(out[0]), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Values<int32_t>(out[1]), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(out[2].dtype(), DT_INT64);
  EXPECT_EQ(Values<int64_t>(out[2]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out[3].scalar<int32_t>(), 6);
  EXPECT_EQ(out[4].scalar<int32_t>(), 2);
  EXPECT_EQ(Values<float>(out[5]), (std::vector<float>{7.5f, 7.5f, 7.5f, 7.5f}));
  EXPECT_EQ(Values<int32_t>(out[6]), (std::vector<int32_t>(6, 0)));
  EXPECT_EQ(Values<int32_t>(out[7]), (std::vector<int32_t>(6, 1)));
  EXPECT_EQ(out[8].dtype(), DT_FLOAT);
  EXPECT_EQ(Values<float>(out[8]), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Values<int32_t>(out[9]), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Values<int32_t>(out[10]), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Values<float>(out[11]), (std::vector<float>{7.5f, 7.5f, 7.5f, 7.5f}));
  EXPECT_EQ(out[12].scalar<float>(), 3.f);
}

TEST(ClientSessionTest, TargetsRunAndGraphGrowsBetweenRuns) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root, 3);
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({a}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 3);
  // Ops added after the first run are sent to the session on the next one.
  auto b = ops::Mul(root, a, 14);
  auto noop = ops::NoOp(root.WithControlDependencies(b));
  ASSERT_TRUE(session.Run({}, {b}, {noop}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 42);
  // Only a target, no fetch.
  ASSERT_TRUE(session.Run({}, {}, {noop}, &out).ok());
  EXPECT_TRUE(out.empty());
}

TEST(ClientSessionTest, FeedsAnyTensor) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root, 1.f);
  auto b = ops::Neg(root, a);
  auto c = ops::Mul(root, b, 10.f);
  ClientSession session(root);
  std::vector<Tensor> out;
  // Feeding b replaces its value for c.
  ASSERT_TRUE(session.Run({{b, 4.f}}, {c}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 40.f);
}

TEST(ClientSessionTest, ConcurrentRuns) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_INT64);
  auto y = ops::Square(root, x);
  ClientSession session(root);
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 20; ++k) {
        std::vector<Tensor> out;
        int64_t v = t * 100 + k;
        if (session.Run({{x, v}}, {y}, &out).ok() && out[0].scalar<int64_t>() == v * v) ++ok[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(ok[t], 20) << "thread " << t;
}

TEST(ClientSessionTest, Errors) {
  {
    // Construction error: returned by Run.
    Scope root = Scope::NewRootScope();
    auto bad = ops::AddV2(root, ops::Const(root, 1.f), ops::Const(root, 1));
    ClientSession session(root);
    std::vector<Tensor> out;
    Status s = session.Run({bad}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(s, root.status());
  }
  {
    Scope root = Scope::NewRootScope();
    auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
    auto y = ops::Neg(root, x);
    ClientSession session(root);
    std::vector<Tensor> out;
    // Unfed placeholder.
    Status s = session.Run({y}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("x"), std::string::npos) << s;
    // Wrong feed dtype.
    s = session.Run({{x, 1}}, {y}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    // Ragged feed.
    s = session.Run({{x, {{1.f, 2.f}, {3.f}}}}, {y}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("ragged"), std::string::npos) << s;
    // Empty fetch.
    s = session.Run({Output()}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  }
  {
    // A kernel error names the node: MatMul shapes unknown at build time.
    Scope root = Scope::NewRootScope();
    auto a = ops::Placeholder(root, DT_FLOAT);
    auto b = ops::Placeholder(root, DT_FLOAT);
    auto p = ops::MatMul(root.WithOpName("prod"), a, b);
    ClientSession session(root);
    std::vector<Tensor> out;
    Status s = session.Run({{a, {{1.f, 2.f}}}, {b, {{1.f, 2.f}}}}, {p}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("prod"), std::string::npos) << s;
  }
}

}  // namespace
}  // namespace tensorflux
