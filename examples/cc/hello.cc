// The smallest TensorFlux C++ program: build y = W x + 1 with the generated op wrappers and run
// it with ClientSession. Built by CMake as build/bin/example_hello.
#include <cstdio>
#include <vector>

#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/ops/ops.h"

int main() {
  using namespace tensorflux;
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto w = ops::Const(root.WithOpName("w"), {{1.f, 2.f}, {3.f, 4.f}});
  auto y = ops::AddV2(root.WithOpName("y"), ops::MatMul(root, w, x), 1.f);

  ClientSession session(root);
  std::vector<Tensor> out;
  Status s = session.Run({{x, {{1.f}, {1.f}}}}, {y}, &out);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", StatusToString(s).c_str());
    return 1;
  }
  std::printf("y = %s\n", out[0].SummarizeValue().c_str());  // [[4][8]]
  return 0;
}
