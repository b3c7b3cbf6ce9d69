// Training from C++: a 2-16-1 ReLU network fit to y = sin(3 x0) + x1^2 on 256 fixed points with
// the cc/training API (layers, Glorot initialization, Adam, a global step). Prints the loss every
// 200 steps and the final loss; built as build/bin/example_train_regression.
#include <cmath>
#include <cstdio>
#include <vector>

#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/ops/ops.h"
#include "tensorflux/cc/training/layers.h"
#include "tensorflux/cc/training/optimizers.h"

int main() {
  using namespace tensorflux;
  std::vector<float> xs, ys;
  for (int i = 0; i < 256; ++i) {
    const float x0 = std::sin(1.7f * i), x1 = std::cos(0.3f * i);
    xs.insert(xs.end(), {x0, x1});
    ys.push_back(std::sin(3 * x0) + x1 * x1);
  }
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root, Input::Initializer(Tensor::FromVector<float>(xs, {256, 2})));
  auto y = ops::Const(root, Input::Initializer(Tensor::FromVector<float>(ys, {256, 1})));
  training::DenseOptions hidden;
  hidden.activation = training::Relu();
  hidden.kernel_initializer = training::GlorotUniform(/*seed=*/1);
  auto h = training::Dense(root, x, 16, hidden);
  training::DenseOptions out;
  out.kernel_initializer = training::GlorotUniform(/*seed=*/2);
  auto pred = training::Dense(root, h, 1, out);
  auto loss = ops::Mean(root, ops::Square(root, ops::Sub(root, pred, y)), {0, 1});

  training::Variable step = training::GetOrCreateGlobalStep(root);
  training::AdamOptimizer adam(0.01);
  training::MinimizeOptions options;
  options.global_step = &step;
  Operation train;
  Status s = adam.Minimize(root, loss, options, &train);
  ClientSession session(root);
  if (s.ok()) s = session.Run({}, {}, {training::GlobalVariablesInitializer(root)}, nullptr);
  std::vector<Tensor> fetched;
  for (int i = 1; s.ok() && i <= 1000; ++i) {
    s = session.Run({}, {loss}, {train}, &fetched);
    if (s.ok() && i % 200 == 0) std::printf("step %4d  loss %.5f\n", i, fetched[0].data<float>()[0]);
  }
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", StatusToString(s).c_str());
    return 1;
  }
  double mean = 0, var = 0;
  for (float v : ys) mean += v / ys.size();
  for (float v : ys) var += (v - mean) * (v - mean) / ys.size();
  std::printf("final_loss=%.5f (predicting the mean would give %.5f)\n",
              fetched[0].data<float>()[0], var);
  return 0;
}
