// The C++ learning-rate schedules (cc/training/schedules) and gradient clipping
// (cc/training/clip_ops) against float64 formulas written here, the bad-argument errors, and
// clipping inside Minimize checked by a hand-worked update.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/const_op.h"
#include "tensorflux/cc/ops/ops.h"
#include "tensorflux/cc/training/clip_ops.h"
#include "tensorflux/cc/training/optimizers.h"
#include "tensorflux/cc/training/schedules.h"
#include "training_test_util.h"

namespace tensorflux {
namespace {

using test::ToDoubles;

// The rate `rate` gives for each step fed to the int64 placeholder `step`.
std::vector<double> RatesAt(const Scope& root, const Output& step, const Output& rate,
                            const std::vector<int64_t>& steps) {
  ClientSession session(root);
  std::vector<double> rates;
  for (int64_t s : steps) {
    std::vector<Tensor> out;
    Status st = session.Run({{step, Input::Initializer(s)}}, {rate}, &out);
    EXPECT_TRUE(st.ok()) << st;
    rates.push_back(st.ok() ? ToDoubles(out[0])[0] : NAN);
  }
  return rates;
}

double Cosine(double lr, double step, double decay_steps, double alpha) {
  const double fraction = std::min(step, decay_steps) / decay_steps;
  return lr * ((1 - alpha) * 0.5 * (1 + std::cos(std::numbers::pi * fraction)) + alpha);
}

TEST(CcScheduleTest, CosineDecayFollowsTheFormula) {
  Scope root = Scope::NewRootScope();
  auto step = ops::Placeholder(root, DT_INT64, ops::Placeholder::Shape({}));
  auto rate = training::CosineDecay(root, 0.1, step, 100, 0.2);
  ASSERT_TRUE(root.ok()) << root.status();
  const std::vector<int64_t> steps = {0, 1, 25, 50, 99, 100, 250};
  const std::vector<double> got = RatesAt(root, step, rate, steps);
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_NEAR(got[i], Cosine(0.1, steps[i], 100, 0.2), 1e-7) << "step " << steps[i];
  }
  EXPECT_NEAR(got[3], 0.1 * (0.8 * 0.5 + 0.2), 1e-7);  // half way: the mean of lr and alpha*lr
  EXPECT_NEAR(got[6], 0.02, 1e-7);                     // after decay_steps: alpha * lr
}

TEST(CcScheduleTest, LinearWarmupThenCosine) {
  Scope root = Scope::NewRootScope();
  auto step = ops::Placeholder(root, DT_INT64, ops::Placeholder::Shape({}));
  auto rate = training::LinearWarmup(root, training::CosineDecaySchedule(0.01, 40), 10, step,
                                     /*initial=*/0.001);
  ASSERT_TRUE(root.ok()) << root.status();
  const std::vector<int64_t> steps = {0, 5, 9, 10, 20, 30, 50, 80};
  const std::vector<double> got = RatesAt(root, step, rate, steps);
  for (size_t i = 0; i < steps.size(); ++i) {
    const double s = static_cast<double>(steps[i]);
    // The ramp goes from `initial` to the schedule's step-0 value; the decay counts from step 10.
    const double want = s < 10 ? 0.001 + (0.01 - 0.001) * s / 10 : Cosine(0.01, s - 10, 40, 0);
    EXPECT_NEAR(got[i], want, 1e-8) << "step " << steps[i];
  }
  EXPECT_NEAR(got[1], 0.0055, 1e-8);  // half the ramp
  EXPECT_NEAR(got[3], 0.01, 1e-8);    // the peak
  EXPECT_NEAR(got[7], 0.0, 1e-8);     // decayed to alpha = 0

  // warmup_steps == 0 is the schedule itself.
  Scope r2 = Scope::NewRootScope();
  auto fstep = ops::Placeholder(r2, DT_INT64, ops::Placeholder::Shape({}));
  auto plain = training::LinearWarmup(r2, training::CosineDecaySchedule(0.5, 8), 0, fstep);
  const std::vector<double> p = RatesAt(r2, fstep, plain, {0, 4, 8});
  EXPECT_NEAR(p[0], 0.5, 1e-7);
  EXPECT_NEAR(p[1], 0.25, 1e-7);
  EXPECT_NEAR(p[2], 0.0, 1e-7);
}

TEST(CcScheduleTest, BadArgumentsAreInvalidArgument) {
  {
    Scope root = Scope::NewRootScope();
    auto step = ops::Placeholder(root, DT_INT64);
    EXPECT_EQ(training::CosineDecay(root, 0.1, step, 0).node(), nullptr);
    EXPECT_TRUE(absl::IsInvalidArgument(root.status())) << root.status();
    EXPECT_NE(root.status().message().find("decay_steps"), std::string::npos);
  }
  {
    Scope root = Scope::NewRootScope();
    auto step = ops::Placeholder(root, DT_INT64);
    EXPECT_EQ(training::LinearWarmup(root, training::CosineDecaySchedule(0.1, 5), -1, step).node(),
              nullptr);
    EXPECT_TRUE(absl::IsInvalidArgument(root.status())) << root.status();
  }
  {
    Scope root = Scope::NewRootScope();
    auto step = ops::Placeholder(root, DT_STRING);
    EXPECT_EQ(training::CosineDecay(root, 0.1, step, 5).node(), nullptr);
    EXPECT_TRUE(absl::IsInvalidArgument(root.status())) << root.status();
    EXPECT_NE(root.status().message().find("global_step"), std::string::npos);
  }
}

// ---------------------------------------------------------------- clipping

TEST(CcClipTest, ClipByGlobalNormScalesEveryTensor) {
  // Norm sqrt(3^2 + 4^2 + 12^2) = 13 over a [2] and a [1] tensor, with an empty entry between.
  for (double clip : {6.5, 13.0, 20.0}) {
    Scope root = Scope::NewRootScope();
    auto a = ops::Const(root, {3.f, 4.f});
    auto b = ops::Const(root, {12.f});
    std::vector<Output> clipped;
    Output norm;
    ASSERT_TRUE(training::ClipByGlobalNorm(root, {a, Output(), b}, clip, &clipped, &norm).ok())
        << root.status();
    ASSERT_EQ(clipped.size(), 3u);
    EXPECT_EQ(clipped[1].node(), nullptr);
    ClientSession session(root);
    std::vector<Tensor> out;
    ASSERT_TRUE(session.Run({clipped[0], clipped[2], norm}, &out).ok());
    const double scale = clip / std::max(13.0, clip);
    EXPECT_NEAR(ToDoubles(out[2])[0], 13.0, 1e-5);
    const std::vector<double> ca = ToDoubles(out[0]), cb = ToDoubles(out[1]);
    EXPECT_NEAR(ca[0], 3 * scale, 1e-5) << "clip " << clip;
    EXPECT_NEAR(ca[1], 4 * scale, 1e-5) << "clip " << clip;
    EXPECT_NEAR(cb[0], 12 * scale, 1e-5) << "clip " << clip;
  }
}

TEST(CcClipTest, InfiniteNormGivesNaN) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root, {std::numeric_limits<double>::infinity(), 1.0});
  std::vector<Output> clipped;
  ASSERT_TRUE(training::ClipByGlobalNorm(root, {a}, 1.0, &clipped, nullptr).ok());
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({clipped[0]}, &out).ok());
  for (double v : ToDoubles(out[0])) EXPECT_TRUE(std::isnan(v));
}

TEST(CcClipTest, BadArgumentsAreInvalidArgument) {
  auto expect_error = [](auto build, const char* needle) {
    Scope root = Scope::NewRootScope();
    Status s = build(root);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_NE(s.message().find(needle), std::string::npos) << s;
    EXPECT_EQ(root.status(), s);
  };
  std::vector<Output> clipped;
  expect_error([&](const Scope& r) {
    return training::ClipByGlobalNorm(r, {ops::Const(r, {1.f})}, 0.0, &clipped, nullptr);
  }, "clip_norm");
  expect_error([&](const Scope& r) {
    return training::ClipByGlobalNorm(r, {Output(), Output()}, 1.0, &clipped, nullptr);
  }, "no tensors");
  expect_error([&](const Scope& r) {
    return training::GlobalNorm(r, {ops::Const(r, {1.f}), ops::Const(r, {1.0})}).status();
  }, "one floating dtype");
  expect_error([&](const Scope& r) {
    return training::GlobalNorm(r, {ops::Const(r, {1, 2})}).status();
  }, "one floating dtype");
}

// Gradient descent on loss = w . c with w's gradient c = [3, 4] (norm 5) clipped to norm 1:
// each step moves w by lr * c / 5.
TEST(CcClipTest, ClipGradientsInMinimize) {
  Scope root = Scope::NewRootScope();
  training::Variable w(root.WithOpName("w"), Input::Initializer({1.f, -1.f}));
  auto loss = ops::Sum(root, ops::Mul(root, w.Read(root), ops::Const(root, {3.f, 4.f})), 0);
  training::GradientDescentOptimizer sgd(0.5);
  training::MinimizeOptions options;
  Output norm;
  options.grad_transform = training::ClipGradientsByGlobalNorm(1.0, &norm);
  Operation train;
  ASSERT_TRUE(sgd.Minimize(root, loss, options, &train).ok()) << root.status();
  ASSERT_NE(norm.node(), nullptr);
  ClientSession session(root);
  ASSERT_TRUE(test::InitVariables(root, &session).ok());
  std::vector<Tensor> out;
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(session.Run({}, {norm}, {train}, &out).ok());
  EXPECT_NEAR(ToDoubles(out[0])[0], 5.0, 1e-5);
  ASSERT_TRUE(session.Run({w.Read(root)}, &out).ok());
  const std::vector<double> got = ToDoubles(out[0]);
  EXPECT_NEAR(got[0], 1.0 - 2 * 0.5 * 3 / 5, 1e-6);
  EXPECT_NEAR(got[1], -1.0 - 2 * 0.5 * 4 / 5, 1e-6);
}

}  // namespace
}  // namespace tensorflux
