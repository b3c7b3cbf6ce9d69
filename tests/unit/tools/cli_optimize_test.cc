// `tensorflux inspect GRAPH --optimize / --place / --partition / --dot`
// (tools/tensorflux/optimize.cc): the per-pass node counts for a graph built so that every pass
// has work, the DOT output with device clusters (requested, placed over 4 CPUs, partitioned
// with _Send/_Recv), parsed back, and bad options.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

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

// x -> a = x * two (/cpu:1) -> b = a + two (/cpu:2) -> c = b * a (/cpu:3) -> out; v a
// variable on /cpu:2 read by r under /cpu:0 (r goes with v); s = c + r.
std::string WriteFourDeviceGraph() {
  pass_test::GraphBuilder b;
  b.Placeholder("x", PartialTensorShape({2}));
  b.Scalar("two", 2);
  b.Op("a", "Mul", {"x", "two"})->set_device("/cpu:1");
  b.Op("b", "AddV2", {"a", "two"})->set_device("/cpu:2");
  b.Op("c", "Mul", {"b", "a"})->set_device("/cpu:3");
  NodeDef* v = b.Op("v", "VarHandleOp");
  v->set_device("/cpu:2");
  AddNodeAttr("dtype", DT_FLOAT, v);
  AddNodeAttr("shape", PartialTensorShape({2}), v);
  NodeDef* r = b.Op("r", "ReadVariableOp", {"v"});
  r->set_device("/cpu:0");
  AddNodeAttr("dtype", DT_FLOAT, r);
  b.Op("s", "AddV2", {"c", "r"});
  b.Op("out", "Identity", {"s"});
  const std::string path =
      (fs::path(::testing::TempDir()) / ("cli_place_" + std::to_string(getpid()) + ".pb")).string();
  std::ofstream f(path, std::ios::binary);
  b.def().SerializeToOstream(&f);
  return path;
}

// A DOT file read back: each node's cluster label ("" outside clusters) and op, and the edges
// with their attribute text.
struct Dot {
  std::map<std::string, std::string> device, op;
  struct Edge {
    std::string src, dst, attrs;
  };
  std::vector<Edge> edges;
};

Dot ParseDot(const std::string& text) {
  Dot d;
  static const std::regex label(R"re(^    label="([^"]*)";$)re");
  static const std::regex node(R"re(^ +"([^"]+)" \[label="[^"\\]*\\n([^"]+)"\];$)re");
  static const std::regex edge(R"re(^  "([^"]+)" -> "([^"]+)"(.*);$)re");
  std::istringstream in(text);
  std::string line, cluster;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, label)) {
      cluster = m[1];
    } else if (line == "  }") {
      cluster.clear();
    } else if (std::regex_match(line, m, node)) {
      d.device[m[1]] = cluster;
      d.op[m[1]] = m[2];
    } else if (std::regex_match(line, m, edge)) {
      d.edges.push_back({m[1], m[2], m[3]});
    }
  }
  return d;
}

std::string Cpu(int i) { return "/job:localhost/replica:0/task:0/device:CPU:" + std::to_string(i); }

TEST(CliOptimizeTest, PlacesOnFourDevicesAndWritesClusters) {
  const std::string graph = WriteFourDeviceGraph();
  const std::string dot = graph + ".dot";
  auto r = RunCli("inspect " + graph + " --place --devices CPU=4 --dot " + dot +
                  " --feed x --fetch out");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("placement (4 devices):\n"), std::string::npos) << r.out;
  const Dot d = ParseDot(ReadAll(dot));
  ASSERT_FALSE(d.device.empty()) << ReadAll(dot);
  EXPECT_EQ(d.device.at("a"), Cpu(1));
  EXPECT_EQ(d.device.at("b"), Cpu(2));
  EXPECT_EQ(d.device.at("c"), Cpu(3));
  EXPECT_EQ(d.device.at("v"), Cpu(2));
  EXPECT_EQ(d.device.at("r"), Cpu(2));  // with its variable, not on the /cpu:0 it asked for
  EXPECT_EQ(d.device.at("s"), Cpu(0));
  for (const auto& [name, device] : d.device) EXPECT_NE(device, "") << name;  // all placed
  EXPECT_EQ(d.op.at("_arg_x_0_0"), "_Arg");
  EXPECT_EQ(d.device.at("_arg_x_0_0"), Cpu(1));  // a generator: with its only consumer, a
  EXPECT_EQ(d.op.count("_Send"), 0u);
  // Node counts per device, as printed, match the clusters.
  std::map<std::string, int> count;
  for (const auto& [name, device] : d.device) ++count[device];
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(std::regex_search(
        r.out, std::regex(Cpu(i) + " +" + std::to_string(count[Cpu(i)]) + " nodes\n")))
        << Cpu(i) << " " << count[Cpu(i)] << "\n" << r.out;
  }
  fs::remove(dot);

  // --partition: the clusters are the partitions, with a _Send/_Recv pair per cross-device edge
  // and a dotted arrow from each _Send to its _Recv.
  r = RunCli("inspect " + graph + " --partition --devices CPU=4 --dot - --feed x --fetch out");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(r.out.rfind("digraph ", 0), 0u) << r.out;  // DOT only on stdout
  const Dot p = ParseDot(r.out);
  int sends = 0, recvs = 0, transfers = 0;
  for (const auto& [name, op] : p.op) {
    sends += op == "_Send";
    recvs += op == "_Recv";
  }
  for (const Dot::Edge& e : p.edges) {
    ASSERT_TRUE(p.op.count(e.src) && p.op.count(e.dst)) << e.src << " -> " << e.dst;
    if (e.attrs == " [style=dotted, color=blue]") {
      ++transfers;
      EXPECT_EQ(p.op.at(e.src), "_Send");
      EXPECT_EQ(p.op.at(e.dst), "_Recv");
      EXPECT_NE(p.device.at(e.src), p.device.at(e.dst));
    } else {
      EXPECT_EQ(p.device.at(e.src), p.device.at(e.dst)) << e.src << " -> " << e.dst;
    }
  }
  // two (CPU:0, consumers on several devices) -> a, b; a -> b, c; b -> c; c -> s; r -> s: 7
  // transfers, each a pair.
  EXPECT_EQ(sends, 7);
  EXPECT_EQ(sends, recvs);
  EXPECT_EQ(transfers, sends);
  EXPECT_EQ(p.device.at("a"), Cpu(1));
  EXPECT_EQ(p.device.at("r"), Cpu(2));
  // Without --dot the partitions are summarized.
  r = RunCli("inspect " + graph + " --partition --devices CPU=4 --feed x --fetch out");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("partitions (4):\n"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(Cpu(3) + " +\\d+ nodes, \\d+ _Send, \\d+ _Recv\n")))
      << r.out;
  fs::remove(graph);
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
  r = RunCli("inspect " + graph + " --place --devices CPU");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("INVALID_ARGUMENT: bad --devices 'CPU'"), std::string::npos) << r.err;
  r = RunCli("inspect " + graph + " --devices");
  EXPECT_NE(r.err.find("option --devices needs a value"), std::string::npos) << r.err;
  r = RunCli("inspect " + graph + " --dot /nonexistent-dir/x.dot");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot write DOT file"), std::string::npos) << r.err;
  fs::remove(graph);
}

}  // namespace
}  // namespace tensorflux
