// Helpers shared by the C++ training API tests.
#pragma once

#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/training/initializers.h"
#include "tensorflux/cc/training/layers.h"
#include "tensorflux/cc/training/variables.h"
#include "../kernels/kernel_test_util.h"  // ToDoubles

namespace tensorflux::test {

// Runs GlobalVariablesInitializer(root).
inline Status InitVariables(const Scope& root, ClientSession* session) {
  return session->Run({}, {}, {training::GlobalVariablesInitializer(root)}, nullptr);
}

// A dense layer: Glorot-uniform kernel (seed), bias 0.05, ReLU when `relu`.
inline training::DenseOptions DenseOpts(int seed, bool relu) {
  training::DenseOptions o;
  if (relu) o.activation = training::Relu();
  o.kernel_initializer = training::GlorotUniform(seed);
  o.bias_initializer = training::Constant(0.05);
  return o;
}

// One-hot float rows [n, classes]: example i has class i % classes.
inline Tensor OneHotLabels(int64_t n, int64_t classes) {
  Tensor t(DT_FLOAT, TensorShape({n, classes}));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < classes; ++c) t.flat<float>()[i * classes + c] = (i % classes == c);
  return t;
}

}  // namespace tensorflux::test
