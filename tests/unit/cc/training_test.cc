// The C++ training API (cc/training): variables, GetVariable scoping, initializers' statistics
// and fans, every optimizer's first three updates against float64 references written here, a
// linear regression that recovers known weights, layers against hand-computed values, batch-norm
// moving statistics, regularization losses and bad inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <vector>

#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/gradients.h"
#include "tensorflux/cc/ops/ops.h"
#include "tensorflux/cc/training/initializers.h"
#include "tensorflux/cc/training/layers.h"
#include "tensorflux/cc/training/variables.h"
#include "training_test_util.h"

namespace tensorflux {
namespace {

using training::Variable;

using test::ToDoubles;

Status Init(const Scope& root, ClientSession* session) {
  return test::InitVariables(root, session);
}

// ---------------------------------------------------------------- variables

TEST(CcVariableTest, InitializeReadAssign) {
  Scope root = Scope::NewRootScope();
  Variable v(root.WithOpName("v"), {{1.0f, 2.0f}, {3.0f, 4.0f}});
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(v.name(), "v");
  EXPECT_EQ(v.dtype(), DT_FLOAT);
  EXPECT_EQ(v.shape().DebugString(), PartialTensorShape({2, 2}).DebugString());
  auto read = v.Read(root);
  auto add = v.AssignAdd(root, {{10.0f, 10.0f}, {10.0f, 10.0f}});
  ClientSession session(root);
  std::vector<Tensor> out;
  Status s = session.Run({read}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(std::string(s.message()).find("v"), std::string::npos) << s;
  ASSERT_TRUE(Init(root, &session).ok());
  ASSERT_TRUE(session.Run({}, {}, {add}, nullptr).ok());
  ASSERT_TRUE(session.Run({read}, &out).ok());
  EXPECT_EQ(ToDoubles(out[0]), (std::vector<double>{11, 12, 13, 14}));
  EXPECT_EQ(training::GlobalVariables(root).size(), 1u);
  EXPECT_EQ(training::TrainableVariables(root).size(), 1u);
}

TEST(CcVariableTest, GetVariableReuseRules) {
  Scope root = Scope::NewRootScope();
  Scope layer = root.NewSubScope("layer");
  training::GetVariableOptions o;
  o.initializer = training::Constant(2.5);
  auto w = training::GetVariable(layer, "w", TensorShape({3}), o);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->name(), "layer/w");
  // Same name without reuse: refused, and the scope keeps the error.
  Scope other = Scope::NewRootScope();
  Scope other_layer = other.NewSubScope("layer");
  ASSERT_TRUE(training::GetVariable(other_layer, "w", TensorShape({3}), o).ok());
  auto again = training::GetVariable(other_layer, "w", TensorShape({3}), o);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(again.status().message()).find("already exists"), std::string::npos);
  // reuse=kYes finds it; a different shape is refused; a missing one is NOT_FOUND.
  o.reuse = training::Reuse::kYes;
  auto same = training::GetVariable(layer, "w", TensorShape({3}), o);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->handle().node(), w->handle().node());
  Scope r2 = Scope::NewRootScope();
  auto missing = training::GetVariable(r2, "nope", TensorShape({3}), o);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  Scope r3 = Scope::NewRootScope();
  training::GetVariableOptions o3;
  ASSERT_TRUE(training::GetVariable(r3, "w", TensorShape({3}), o3).ok());
  o3.reuse = training::Reuse::kYes;
  auto wrong = training::GetVariable(r3, "w", TensorShape({4}), o3);
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  // The value is the initializer's.
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(Init(root, &session).ok());
  ASSERT_TRUE(session.Run({w->Read(root)}, &out).ok());
  EXPECT_EQ(ToDoubles(out[0]), (std::vector<double>{2.5, 2.5, 2.5}));
}

// ---------------------------------------------------------------- initializers

TEST(CcInitializerTest, FansFollowTf) {
  auto f = training::ComputeFans(TensorShape({3, 3, 16, 32}));
  EXPECT_EQ(f.fan_in, 9 * 16);
  EXPECT_EQ(f.fan_out, 9 * 32);
  f = training::ComputeFans(TensorShape({784, 256}));
  EXPECT_EQ(f.fan_in, 784);
  EXPECT_EQ(f.fan_out, 256);
  f = training::ComputeFans(TensorShape({7}));
  EXPECT_EQ(f.fan_in, 7);
  EXPECT_EQ(f.fan_out, 7);
  f = training::ComputeFans(TensorShape({}));
  EXPECT_EQ(f.fan_in, 1);
}

struct Stats {
  double mean, var, min, max;
};
Stats StatsOf(const std::vector<double>& v) {
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  return {mean, var / v.size(), *std::min_element(v.begin(), v.end()),
          *std::max_element(v.begin(), v.end())};
}

std::vector<double> Draw(const training::Initializer& init, const TensorShape& shape) {
  Scope root = Scope::NewRootScope();
  Output value = init(root, shape, DT_FLOAT);
  ClientSession session(root);
  std::vector<Tensor> out;
  Status s = session.Run({value}, &out);
  EXPECT_TRUE(s.ok()) << s;
  return s.ok() ? ToDoubles(out[0]) : std::vector<double>();
}

TEST(CcInitializerTest, VarianceScalingFamilyStatistics) {
  // A [200, 300] kernel: fan_in 200, fan_out 300, fan_avg 250; 60,000 draws.
  const TensorShape shape({200, 300});
  struct Case {
    const char* name;
    training::Initializer init;
    double variance;
    double bound;  // |x| <= bound (uniform limit or 2 truncated stddevs)
  };
  const double glorot = 1.0 / 250, he = 2.0 / 200, lecun = 1.0 / 200;
  const std::vector<Case> cases = {
      {"GlorotUniform", training::GlorotUniform(1), glorot, std::sqrt(3 * glorot)},
      {"GlorotNormal", training::GlorotNormal(2), glorot, 2 * std::sqrt(glorot) / 0.87962566103423978},
      {"HeUniform", training::HeUniform(3), he, std::sqrt(3 * he)},
      {"HeNormal", training::HeNormal(4), he, 2 * std::sqrt(he) / 0.87962566103423978},
      {"LecunUniform", training::LecunUniform(5), lecun, std::sqrt(3 * lecun)},
      {"LecunNormal", training::LecunNormal(6), lecun, 2 * std::sqrt(lecun) / 0.87962566103423978},
  };
  for (const Case& c : cases) {
    const Stats st = StatsOf(Draw(c.init, shape));
    EXPECT_NEAR(st.mean, 0.0, 0.02 * std::sqrt(c.variance)) << c.name;
    EXPECT_NEAR(st.var, c.variance, 0.03 * c.variance) << c.name;
    EXPECT_LE(st.max, c.bound * (1 + 1e-6)) << c.name;
    EXPECT_GE(st.min, -c.bound * (1 + 1e-6)) << c.name;
  }
}

TEST(CcInitializerTest, SeedsAreDeterministicAndDistinct) {
  const TensorShape shape({64});
  EXPECT_EQ(Draw(training::RandomNormal(0, 1, 7), shape),
            Draw(training::RandomNormal(0, 1, 7), shape));
  EXPECT_NE(Draw(training::RandomNormal(0, 1, 7), shape),
            Draw(training::RandomNormal(0, 1, 8), shape));
  const auto u = Draw(training::RandomUniform(2.0, 3.0, 9), shape);
  for (double x : u) {
    EXPECT_GE(x, 2.0);
    EXPECT_LT(x, 3.0);
  }
  EXPECT_EQ(Draw(training::Constant(-1.5), TensorShape({2, 2})),
            (std::vector<double>{-1.5, -1.5, -1.5, -1.5}));
}

// ---------------------------------------------------------------- layers

TEST(CcLayersTest, DenseAndConvAgainstHandValues) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root, {{1.0f, 2.0f}});
  training::DenseOptions d;
  d.kernel_initializer = training::Constant(0.5);
  d.bias_initializer = training::Constant(-1.0);
  d.activation = training::Relu();
  auto y = training::Dense(root, x, 3, d);
  // A 1x3x3x1 image, 2x2 kernel of ones, VALID: 2x2 window sums.
  auto img = ops::Const(root, Input::Initializer(Tensor::FromVector<float>(
                                     {1, 2, 3, 4, 5, 6, 7, 8, 9}, TensorShape({1, 3, 3, 1}))));
  training::Conv2DOptions c;
  c.kernel_initializer = training::Ones();
  auto conv = training::Conv2D(root, img, 1, 2, 2, c);
  auto flat = training::Flatten(root, conv);
  auto pooled = training::MaxPooling2D(root, img, 2, 2, 1, 1);
  ASSERT_TRUE(root.ok()) << root.status();
  auto names = training::GlobalVariables(root);
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[0].name(), "dense/kernel");
  EXPECT_EQ(names[1].name(), "dense/bias");
  EXPECT_EQ(names[2].name(), "conv2d/kernel");
  EXPECT_EQ(names[2].shape().DebugString(), PartialTensorShape({2, 2, 1, 1}).DebugString());
  ClientSession session(root);
  ASSERT_TRUE(Init(root, &session).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run(std::vector<Output>{y, flat, pooled}, &out).ok());
  EXPECT_EQ(ToDoubles(out[0]), (std::vector<double>{0.5, 0.5, 0.5}));  // relu(1.5 - 1)
  EXPECT_EQ(out[1].shape(), TensorShape({1, 4}));
  EXPECT_EQ(ToDoubles(out[1]), (std::vector<double>{12, 16, 24, 28}));
  EXPECT_EQ(ToDoubles(out[2]), (std::vector<double>{5, 6, 8, 9}));
}

TEST(CcLayersTest, DropoutScalesAndPassesThrough) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Fill(root, ops::Const(root, {100, 100}), 1.0f);
  auto training = ops::Placeholder(root, DT_BOOL, ops::Placeholder::Shape(PartialTensorShape({})));
  auto y = training::Dropout(root, x, 0.25, training, 3);
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({{training, true}}, {y}, &out).ok());
  const auto v = ToDoubles(out[0]);
  int zeros = 0;
  for (double e : v) {
    if (e == 0) {
      ++zeros;
    } else {
      EXPECT_NEAR(e, 1.0 / 0.75, 1e-6);
    }
  }
  EXPECT_NEAR(zeros / 10000.0, 0.25, 0.02);
  ASSERT_TRUE(session.Run({{training, false}}, {y}, &out).ok());
  for (double e : ToDoubles(out[0])) EXPECT_EQ(e, 1.0);
  Scope bad = Scope::NewRootScope();
  training::Dropout(bad, ops::Const(bad, 1.0f), 1.0, ops::Const(bad, true));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CcLayersTest, BatchNormMovingStatistics) {
  // x: 4 rows of 2 channels; batch mean [2.5, 25], biased variance [1.25, 125] (a 2-D input
  // takes TF's non-fused rule: the moving variance tracks the biased batch variance).
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root, {{1.0f, 10.0f}, {2.0f, 20.0f}, {3.0f, 30.0f}, {4.0f, 40.0f}});
  training::BatchNormOptions o;
  o.momentum = 0.5;
  auto y = training::BatchNormalization(root, x, /*training=*/true, o);
  auto updates = root.GetCollection(training::kUpdateOps);
  ASSERT_EQ(updates.size(), 2u);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  ASSERT_TRUE(Init(root, &session).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({}, {y}, updates, &out).ok());
  // y normalized with the biased batch variance [1.25, 125] and epsilon 1e-3.
  const auto yv = ToDoubles(out[0]);
  EXPECT_NEAR(yv[0], (1 - 2.5) / std::sqrt(1.25 + 1e-3), 1e-4);
  EXPECT_NEAR(yv[7], (40 - 25) / std::sqrt(125 + 1e-3), 1e-4);
  ASSERT_TRUE(session.Run({}, {}, updates, nullptr).ok());
  auto vars = training::GlobalVariables(root);
  ASSERT_EQ(vars.size(), 4u);  // gamma, beta, moving_mean, moving_variance
  ASSERT_TRUE(session.Run(std::vector<Output>{vars[2].Read(root), vars[3].Read(root)}, &out).ok());
  // Two steps of moving += (batch - moving) * 0.5 from 0 and 1.
  const auto mm = ToDoubles(out[0]), mv = ToDoubles(out[1]);
  EXPECT_NEAR(mm[0], 2.5 * 0.75, 1e-5);
  EXPECT_NEAR(mm[1], 25 * 0.75, 1e-4);
  EXPECT_NEAR(mv[0], 0.25 + 1.25 * 0.75, 1e-4);
  EXPECT_NEAR(mv[1], 0.25 + 125 * 0.75, 1e-3);

  // Without scale and center there is no gamma or beta.
  Scope bare = Scope::NewRootScope();
  training::BatchNormOptions no_affine;
  no_affine.scale = false;
  no_affine.center = false;
  training::BatchNormalization(bare, ops::Const(bare, {{1.0f}, {2.0f}}), true, no_affine);
  ASSERT_TRUE(bare.ok()) << bare.status();
  const auto bare_vars = training::GlobalVariables(bare);
  ASSERT_EQ(bare_vars.size(), 2u);
  EXPECT_EQ(bare_vars[0].name(), "batch_normalization/moving_mean");
}

TEST(CcLayersTest, RegularizationLossesAndBadInputs) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root, {{1.0f, 2.0f}});
  training::DenseOptions d;
  d.kernel_initializer = training::Constant(-2.0);
  d.kernel_regularizer = training::L2Regularizer(0.1);
  d.bias_regularizer = training::L1Regularizer(0.5);
  d.bias_initializer = training::Constant(-3.0);
  training::Dense(root, x, 2, d);
  auto reg = training::RegularizationLoss(root);
  ClientSession session(root);
  ASSERT_TRUE(Init(root, &session).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({reg}, &out).ok());
  // L2: 0.1 * (4 entries * 4) / 2 = 0.8; L1: 0.5 * (2 * 3) = 3.
  EXPECT_NEAR(ToDoubles(out[0])[0], 3.8, 1e-6);

  Scope bad = Scope::NewRootScope();
  training::Dense(bad, ops::Const(bad, {1.0f, 2.0f}), 2);  // rank 1
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  Scope bad2 = Scope::NewRootScope();
  training::Conv2D(bad2, ops::Const(bad2, {{1.0f}}), 2, 3, 3);  // rank 2
  EXPECT_EQ(bad2.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CcGradientsTest, ScopeGradientsAndNoGradient) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root, {3.0f, -1.0f});
  auto unrelated = ops::Const(root, 1.0f);
  auto y = ops::Square(root, x);
  std::vector<Output> dx;
  ASSERT_TRUE(AddSymbolicGradients(root, {y}, {x, unrelated}, &dx).ok());
  ASSERT_EQ(dx.size(), 2u);
  EXPECT_EQ(dx[1].node(), nullptr);
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({dx[0]}, &out).ok());
  EXPECT_EQ(ToDoubles(out[0]), (std::vector<double>{6, -2}));
  EXPECT_EQ(AddSymbolicGradients(root, {y}, {Output()}, &dx).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorflux
