// libFuzzer target: one-op graphs from random bytes (see op_graph_gen.h), run under ASan+UBSan.
// Build and run with `make fuzz` (clang; FUZZ_SECONDS=600 by default). With TX_FUZZ_PRINT=1 in
// the environment each generated graph is printed as text, which is how a crashing input becomes
// a regression graph in tests/fuzz/regressions/ (checked by fuzz_regression_test.cc).
#include <cstdlib>
#include <iostream>

#include "google/protobuf/text_format.h"
#include "op_graph_gen.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> ops = tensorflux::fuzz::FuzzableOps();
  static const bool print = std::getenv("TX_FUZZ_PRINT") != nullptr;
  tensorflux::fuzz::ByteSource src(data, size);
  tensorflux::fuzz::FuzzGraph g = tensorflux::fuzz::GenerateOneOpGraph(&src, ops, {.extreme_ints = true});
  if (print) {
    std::string text;
    google::protobuf::TextFormat::PrintToString(g.graph, &text);
    std::cerr << "---- graph (" << g.num_outputs << " outputs)\n" << text << std::flush;
  }
  tensorflux::Status s = tensorflux::fuzz::RunOneOpGraph(g);
  if (print) std::cerr << "---- status: " << s << "\n";
  return 0;
}
