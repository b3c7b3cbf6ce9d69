// Helpers shared by the C++ training API tests.
#pragma once

#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/training/variables.h"
#include "../kernels/kernel_test_util.h"  // ToDoubles

namespace tensorflux::test {

// Runs GlobalVariablesInitializer(root).
inline Status InitVariables(const Scope& root, ClientSession* session) {
  return session->Run({}, {}, {training::GlobalVariablesInitializer(root)}, nullptr);
}

}  // namespace tensorflux::test
