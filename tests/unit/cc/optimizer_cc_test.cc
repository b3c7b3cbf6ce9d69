// The C++ optimizers (cc/training/optimizers): every optimizer's first three updates against
// float64 references written here, global_step, the no-gradient error, and a linear regression
// that recovers known weights.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/ops/ops.h"
#include "tensorflux/cc/training/initializers.h"
#include "tensorflux/cc/training/layers.h"
#include "tensorflux/cc/training/optimizers.h"
#include "tensorflux/cc/training/variables.h"
#include "training_test_util.h"

namespace tensorflux {
namespace {

using training::Variable;

using test::ToDoubles;

Status Init(const Scope& root, ClientSession* session) {
  return test::InitVariables(root, session);
}

// ---------------------------------------------------------------- optimizers

// Minimizes sum(w * c) + 0.5 * sum(w^2) (gradient c + w) for three steps and compares w with the
// optimizer's update rule computed here in float64.
using Rule = std::function<void(int step, const std::vector<double>& g, std::vector<double>* w)>;

void CheckThreeSteps(training::Optimizer* opt, const Rule& rule) {
  const std::vector<double> w0 = {0.5, -1.0, 2.0}, c = {1.0, -2.0, 0.25};
  Scope root = Scope::NewRootScope();
  Variable w(root.WithOpName("w"), Input::Initializer(
      {static_cast<float>(w0[0]), static_cast<float>(w0[1]), static_cast<float>(w0[2])}));
  auto read = w.Read(root);
  auto cc = ops::Const(root, {static_cast<float>(c[0]), static_cast<float>(c[1]),
                              static_cast<float>(c[2])});
  auto loss = ops::AddV2(root, ops::Sum(root, ops::Mul(root, read, cc), 0),
                         ops::Mul(root, 0.5f, ops::Sum(root, ops::Square(root, read), 0)));
  Variable step = training::GetOrCreateGlobalStep(root);
  Operation train;
  training::MinimizeOptions mo;
  mo.global_step = &step;
  ASSERT_TRUE(opt->Minimize(root, loss, mo, &train).ok()) << root.status();
  ClientSession session(root);
  ASSERT_TRUE(Init(root, &session).ok());
  std::vector<double> ref = w0;
  for (int t = 1; t <= 3; ++t) {
    std::vector<double> g(3);
    for (int i = 0; i < 3; ++i) g[i] = c[i] + ref[i];
    rule(t, g, &ref);
    ASSERT_TRUE(session.Run({}, {}, {train}, nullptr).ok());
    std::vector<Tensor> out;
    ASSERT_TRUE(session.Run(std::vector<Output>{w.Read(root), step.Read(root)}, &out).ok());
    const auto got = ToDoubles(out[0]);
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(got[i], ref[i], 1e-6 * std::max(1.0, std::fabs(ref[i])))
          << opt->name() << " step " << t << " element " << i;
    }
    EXPECT_EQ(out[1].data<int64_t>()[0], t) << opt->name();
  }
}

TEST(CcOptimizerTest, GradientDescent) {
  training::GradientDescentOptimizer opt(0.1);
  CheckThreeSteps(&opt, [](int, const std::vector<double>& g, std::vector<double>* w) {
    for (size_t i = 0; i < g.size(); ++i) (*w)[i] -= 0.1 * g[i];
  });
}

TEST(CcOptimizerTest, MomentumAndNesterov) {
  for (bool nesterov : {false, true}) {
    training::MomentumOptimizer opt(0.1, 0.9, nesterov);
    std::vector<double> accum(3, 0.0);
    CheckThreeSteps(&opt, [&](int, const std::vector<double>& g, std::vector<double>* w) {
      for (size_t i = 0; i < g.size(); ++i) {
        accum[i] = 0.9 * accum[i] + g[i];
        (*w)[i] -= nesterov ? 0.1 * (g[i] + 0.9 * accum[i]) : 0.1 * accum[i];
      }
    });
  }
}

TEST(CcOptimizerTest, AdamAndAdamW) {
  for (double wd : {0.0, 0.01}) {
    std::unique_ptr<training::Optimizer> opt;
    if (wd == 0) {
      opt = std::make_unique<training::AdamOptimizer>(0.01);
    } else {
      opt = std::make_unique<training::AdamWOptimizer>(wd, 0.01);
    }
    std::vector<double> m(3, 0.0), v(3, 0.0);
    CheckThreeSteps(opt.get(), [&](int t, const std::vector<double>& g, std::vector<double>* w) {
      const double lr_t = 0.01 * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
      for (size_t i = 0; i < g.size(); ++i) {
        (*w)[i] -= 0.01 * wd * (*w)[i];  // decoupled decay first (the gradient is unchanged)
        m[i] = 0.9 * m[i] + 0.1 * g[i];
        v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
        (*w)[i] -= lr_t * m[i] / (std::sqrt(v[i]) + 1e-8);
      }
    });
  }
}

TEST(CcOptimizerTest, RMSPropAndAdagrad) {
  training::RMSPropOptimizer rms(0.01, 0.9, 0.5, 1e-10);
  std::vector<double> ms(3, 1.0), mom(3, 0.0);
  CheckThreeSteps(&rms, [&](int, const std::vector<double>& g, std::vector<double>* w) {
    for (size_t i = 0; i < g.size(); ++i) {
      ms[i] = 0.9 * ms[i] + 0.1 * g[i] * g[i];
      mom[i] = 0.5 * mom[i] + 0.01 * g[i] / std::sqrt(ms[i] + 1e-10);
      (*w)[i] -= mom[i];
    }
  });
  training::AdagradOptimizer ada(0.1, 0.1);
  std::vector<double> acc(3, 0.1);
  CheckThreeSteps(&ada, [&](int, const std::vector<double>& g, std::vector<double>* w) {
    for (size_t i = 0; i < g.size(); ++i) {
      acc[i] += g[i] * g[i];
      (*w)[i] -= 0.1 * g[i] / std::sqrt(acc[i]);
    }
  });
}

TEST(CcOptimizerTest, SlotNamesMatchTf1AndPython) {
  // Checkpoints written from C++ and from Python name optimizer state the same way.
  Scope root = Scope::NewRootScope();
  Variable a(root.WithOpName("a"), {1.0f, 2.0f});
  Variable b(root.WithOpName("b"), Input::Initializer(Tensor::FromVector<double>({3.0}, {1})));
  auto loss = ops::AddV2(root, ops::Sum(root, ops::Square(root, a.Read(root)), 0),
                         ops::Cast(root, ops::Sum(root, b.Read(root), 0), DT_FLOAT));
  training::AdamOptimizer adam(0.1);
  Operation train;
  ASSERT_TRUE(adam.Minimize(root, loss, {}, &train).ok()) << root.status();
  std::vector<std::string> names;
  for (const Variable& v : training::GlobalVariables(root)) names.push_back(v.name());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "beta1_power", "beta2_power", "a/Adam",
                                             "a/Adam_1", "b/Adam", "b/Adam_1"}));
  EXPECT_EQ(adam.GetSlot(a, "v").name(), "a/Adam_1");
  // float32 and float64 variables in one optimizer: the beta powers are cast per variable.
  ClientSession session(root);
  ASSERT_TRUE(Init(root, &session).ok());
  ASSERT_TRUE(session.Run({}, {}, {train}, nullptr).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run(std::vector<Output>{b.Read(root)}, &out).ok());
  // First Adam step moves b by lr (m / sqrt(v) = 1 for one gradient): 3 - 0.1, up to the
  // float32 rounding of the beta powers (they take the first variable's dtype, as in TF 1.x).
  EXPECT_NEAR(out[0].data<double>()[0], 2.9, 1e-5);
  EXPECT_NE(out[0].data<double>()[0], 3.0);

  // The same optimizer object used for a second graph builds fresh state there.
  Scope other = Scope::NewRootScope();
  Variable c(other.WithOpName("c"), {1.0f});
  auto loss2 = ops::Sum(other, ops::Square(other, c.Read(other)), 0);
  Operation train2;
  ASSERT_TRUE(adam.Minimize(other, loss2, {}, &train2).ok()) << other.status();
  ClientSession session2(other);
  ASSERT_TRUE(Init(other, &session2).ok());
  EXPECT_TRUE(session2.Run({}, {}, {train2}, nullptr).ok());
}

TEST(CcOptimizerTest, AdagradRejectsNonPositiveAccumulator) {
  Scope root = Scope::NewRootScope();
  Variable a(root.WithOpName("a"), {1.0f});
  training::AdagradOptimizer ada(0.1, 0.0);
  Operation train;
  Status s = ada.Minimize(root, ops::Sum(root, ops::Square(root, a.Read(root)), 0), {}, &train);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(CcOptimizerTest, NoGradientIsAnError) {
  Scope root = Scope::NewRootScope();
  Variable a(root.WithOpName("a"), 1.0f);
  Variable b(root.WithOpName("b"), 2.0f);
  auto loss = ops::Square(root, a.Read(root));
  training::GradientDescentOptimizer opt(0.1);
  Operation train;
  training::MinimizeOptions mo;
  mo.var_list = {b};
  Status s = opt.Minimize(root, loss, mo, &train);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find("No gradients"), std::string::npos) << s;
}

TEST(CcOptimizerTest, LinearRegressionRecoversWeights) {
  // y = X [2, -3]^T + 0.5 on a fixed 64-point design; gradient descent on the mean squared
  // error (a convex quadratic whose Hessian's eigenvalues are well inside 2 / lr).
  Scope root = Scope::NewRootScope();
  std::vector<float> xs, ys;
  for (int i = 0; i < 64; ++i) {
    const float x0 = std::sin(0.37f * i), x1 = std::cos(0.91f * i);
    xs.push_back(x0);
    xs.push_back(x1);
    ys.push_back(2 * x0 - 3 * x1 + 0.5f);
  }
  auto x = ops::Const(root, Input::Initializer(Tensor::FromVector<float>(xs, TensorShape({64, 2}))));
  auto y = ops::Const(root, Input::Initializer(Tensor::FromVector<float>(ys, TensorShape({64, 1}))));
  training::DenseOptions d;
  d.kernel_initializer = training::Zeros();
  auto pred = training::Dense(root, x, 1, d);
  auto loss = ops::Mean(root, ops::Square(root, ops::Sub(root, pred, y)), {0, 1});
  training::GradientDescentOptimizer sgd(0.3);
  Operation train;
  ASSERT_TRUE(sgd.Minimize(root, loss, {}, &train).ok()) << root.status();
  ClientSession session(root);
  ASSERT_TRUE(Init(root, &session).ok());
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(session.Run({}, {}, {train}, nullptr).ok());
  auto vars = training::TrainableVariables(root);
  ASSERT_EQ(vars.size(), 2u);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run(std::vector<Output>{vars[0].Read(root), vars[1].Read(root), loss}, &out).ok());
  const auto k = ToDoubles(out[0]);
  EXPECT_NEAR(k[0], 2.0, 1e-3);
  EXPECT_NEAR(k[1], -3.0, 1e-3);
  EXPECT_NEAR(ToDoubles(out[1])[0], 0.5, 1e-3);
  EXPECT_LT(ToDoubles(out[2])[0], 1e-6);
}

}  // namespace
}  // namespace tensorflux
