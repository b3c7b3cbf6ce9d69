// `tensorflux inspect GRAPH --optimize / --dot` (tools/tensorflux/optimize.cc): the per-pass
// node counts for a graph built so that every pass has work, the DOT output with device
// clusters, and bad options.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "cli_runner.h"
#include "../passes/pass_test_util.h"

namespace tensorflux {
namespace {

namespace fs = std::filesystem;
using cli_test::ReadAll;
using cli_test::RunCli;

// x [2, 3] feeds a dense layer; c = 2 + 3 folds; two equal Muls merge; x * 1 and an Identity
// are forwarded; MatMul + BiasAdd + Relu fuse. x1 and the dense layer request /device:CPU:0.
std::string WriteGraph() {
  pass_test::GraphBuilder b;
  b.Placeholder("x", PartialTensorShape({2, 3}));
  b.Scalar("c1", 2);
  b.Scalar("c2", 3);
  b.Op("c", "AddV2", {"c1", "c2"});  // folds to 5
  b.Scalar("one", 1);
  b.Op("x1", "Mul", {"x", "one"})->set_device("/device:CPU:0");  // -> x
  b.Op("m1", "Mul", {"x1", "c"});
  b.Op("m2", "Mul", {"x1", "c"});  // merges into m1
  b.Op("s", "AddV2", {"m1", "m2"});
  b.Const("w", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2})));
  b.Const("bias", Tensor::FromVector<float>({0.5f, -0.5f}, TensorShape({2})));
  for (NodeDef* n : {b.Op("mm", "MatMul", {"s", "w"}), b.Op("ba", "BiasAdd", {"mm", "bias"}),
                     b.Op("relu", "Relu", {"ba"})}) {
    n->set_device("/device:CPU:0");
  }
  b.Op("out", "Identity", {"relu"});
  const std::string path =
      (fs::path(::testing::TempDir()) / ("cli_optimize_" + std::to_string(getpid()) + ".pb"))
          .string();
  std::ofstream f(path, std::ios::binary);
  b.def().SerializeToOstream(&f);
  return path;
}

TEST(CliOptimizeTest, PrintsNodeCountsPerPass) {
  const std::string graph = WriteGraph();
  auto r = RunCli("inspect " + graph + " --optimize --feed x --fetch out");
  ASSERT_EQ(r.code, 0) << r.err;
  // 16 nodes after the rewrite (x -> _Arg, + _Retval): c folds (16); c2/c1 dead later; m2 merges
  // (15); x1 is forwarded (14); pruning drops c1, c2, one (11); MatMul + BiasAdd + Relu -> 1 (9).
  EXPECT_NE(r.out.find("(16 nodes after pruning to the signature)"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("constant_folding +16 +16 +1\n"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("common_subgraph_elimination +16 +15 +1\n")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("arithmetic_optimization +15 +14 +1\n")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("model_pruning +14 +11 +3\n"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("remapping +11 +9 +1\n"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\n  _FusedMatMul +1\n"))) << r.out;
  EXPECT_EQ(r.out.find("  MatMul "), std::string::npos) << r.out;
  // "out" is fetched: the Identity stays.
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\n  Identity +1\n"))) << r.out;
  fs::remove(graph);
}

TEST(CliOptimizeTest, WritesDotWithDeviceClusters) {
  const std::string graph = WriteGraph();
  const std::string dot = graph + ".dot";
  auto r = RunCli("inspect " + graph + " --dot " + dot + " --feed x --fetch out");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string text = ReadAll(dot);
  EXPECT_EQ(text.rfind("digraph ", 0), 0u) << text;
  EXPECT_NE(text.find("subgraph \"cluster_0\" {\n    label=\"/device:CPU:0\";"), std::string::npos)
      << text;
  EXPECT_NE(text.find("    \"relu\" [label=\"relu\\nRelu\"];"), std::string::npos) << text;
  EXPECT_NE(text.find("  \"mm\" -> \"ba\";"), std::string::npos) << text;  // not optimized
  // With --optimize the DOT shows the fused graph.
  r = RunCli("inspect " + graph + " --optimize --dot - --feed x --fetch out");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"relu\" [label=\"relu\\n_FusedMatMul\"];"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"relu\" -> \"out\";"), std::string::npos) << r.out;
  fs::remove(graph);
  fs::remove(dot);
}

TEST(CliOptimizeTest, BadOptions) {
  const std::string graph = WriteGraph();
  auto r = RunCli("inspect " + graph + " --dot");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("INVALID_ARGUMENT: option --dot needs a value"), std::string::npos) << r.err;
  r = RunCli("inspect " + graph + " --optimize --fetch nope:0");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("NOT_FOUND"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nope"), std::string::npos) << r.err;
  r = RunCli("inspect " + graph + " --dot /nonexistent-dir/x.dot");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot write DOT file"), std::string::npos) << r.err;
  fs::remove(graph);
}

}  // namespace
}  // namespace tensorflux
