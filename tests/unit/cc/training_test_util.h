// Helpers shared by the C++ training API tests.
#pragma once

#include <vector>

#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/training/variables.h"

namespace tensorflux::test {

// The elements of a float or double tensor as float64.
inline std::vector<double> Doubles(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    v.push_back(t.dtype() == DT_DOUBLE ? t.data<double>()[i] : t.data<float>()[i]);
  }
  return v;
}

// Runs GlobalVariablesInitializer(root).
inline Status InitVariables(const Scope& root, ClientSession* session) {
  return session->Run({}, {}, {training::GlobalVariablesInitializer(root)}, nullptr);
}

}  // namespace tensorflux::test
