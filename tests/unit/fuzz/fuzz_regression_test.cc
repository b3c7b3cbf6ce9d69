// Kernel robustness: graphs the fuzzer (tests/fuzz/op_fuzz.cc) found crashing, kept as text
// GraphDefs in tests/fuzz/regressions/*.pbtxt, plus a short seeded run of the same generator.
//
// A regression file's first line is "# expect: CODE" (a canonical code name such as
// INVALID_ARGUMENT or OK); the graph's op node is named "op" and every output is fetched.
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "op_graph_gen.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/framework/op.h"

namespace tensorflux {
namespace {

const std::filesystem::path kRegressionDir =
    std::filesystem::path(TX_TEST_DATA_DIR) / ".." / "fuzz" / "regressions";

std::string CodeName(absl::StatusCode c) { return absl::StatusCodeToString(c); }

TEST(FuzzRegressionTest, EveryRecordedGraphGivesItsExpectedStatus) {
  ASSERT_TRUE(std::filesystem::is_directory(kRegressionDir)) << kRegressionDir;
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kRegressionDir)) {
    if (entry.path().extension() != ".pbtxt") continue;
    ++count;
    std::ifstream in(entry.path());
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    const std::string prefix = "# expect: ";
    ASSERT_EQ(text.rfind(prefix, 0), 0u) << entry.path() << " must start with '# expect: CODE'";
    const std::string want = text.substr(prefix.size(), text.find('\n') - prefix.size());

    fuzz::FuzzGraph g;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &g.graph)) << entry.path();
    for (const NodeDef& n : g.graph.node()) {
      if (n.name() != "op") continue;
      g.node = n.name();
      auto def = OpRegistry::Global()->LookUpOpDef(n.op());
      ASSERT_TRUE(def.ok()) << entry.path() << ": " << def.status();
      NodeDef full = n;
      AddDefaultsToNodeDef(**def, &full);
      DataTypeVector ins, outs;
      // A node whose arg lengths are invalid is run as a target (the run reports the error).
      if (InOutTypesForNode(full, **def, &ins, &outs).ok()) {
        g.num_outputs = static_cast<int>(outs.size());
      }
    }
    ASSERT_FALSE(g.node.empty()) << entry.path() << " has no node named 'op'";
    Status s = fuzz::RunOneOpGraph(g);
    EXPECT_EQ(CodeName(s.code()), want) << entry.path() << ": " << s;
  }
  EXPECT_GT(count, 0) << "no regression graphs in " << kRegressionDir;
}

// A few hundred generated graphs from fixed seeds: none may crash or report INTERNAL (a kernel
// that forgot an output or produced the wrong dtype), and the generator must produce a fair share
// of graphs that run, or the fuzzer would only be testing attr validation.
TEST(FuzzRegressionTest, SeededGeneratorRunsWithoutInternalErrors) {
  const std::vector<std::string> ops = fuzz::FuzzableOps();
  ASSERT_GT(ops.size(), 50u);
  std::mt19937 rng(20261130);
  int generated = 0, ran_ok = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    std::vector<uint8_t> bytes(64 + rng() % 64);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    fuzz::ByteSource src(bytes.data(), bytes.size());
    fuzz::FuzzGraph g = fuzz::GenerateOneOpGraph(&src, ops);
    if (g.node.empty()) continue;
    ++generated;
    Status s = fuzz::RunOneOpGraph(g);
    if (s.ok()) ++ran_ok;
    EXPECT_NE(s.code(), absl::StatusCode::kInternal)
        << s << "\n" << g.graph.DebugString();
  }
  EXPECT_GT(generated, 500);
  EXPECT_GT(ran_ok, generated / 10) << "only " << ran_ok << " of " << generated << " graphs ran";
}

}  // namespace
}  // namespace tensorflux
