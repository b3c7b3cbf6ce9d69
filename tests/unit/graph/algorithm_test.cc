// Topological order, cycle reports, reverse reachability and pruning.
#include "tensorflux/graph/algorithm.h"

#include <chrono>

#include "gtest/gtest.h"
#include "graph_test_util.h"
#include "tensorflux/framework/node_def_util.h"

namespace tensorflux {
namespace {

using ::tensorflux::testing::MakeGraph;
using ::tensorflux::testing::NodeNames;

std::vector<std::string> Names(const std::vector<Node*>& nodes) {
  std::vector<std::string> out;
  for (const Node* n : nodes) out.push_back(n->name());
  return out;
}

// Ids follow GraphDef order: d0 (sink of the diamond) comes first.
constexpr char kDiamond[] = R"pb(
  node { name: "d0" op: "TxGraphTestSink" input: "j" }
  node { name: "c" op: "TxGraphTestNoOp" }
  node { name: "s" op: "TxGraphTestSource" }
  node { name: "sp" op: "TxGraphTestSplit" input: "s" }
  node {
    name: "j"
    op: "TxGraphTestBinary"
    input: "sp:1"
    input: "sp"
    input: "^c"
    attr { key: "T" value { type: DT_FLOAT } }
  }
  node { name: "lone" op: "TxGraphTestSource" }
)pb";

TEST(TopologicalOrderTest, DeterministicByIdAndRespectsAllEdges) {
  auto g = MakeGraph(kDiamond);
  ASSERT_NE(g, nullptr);
  auto order = TopologicalOrder(*g);
  ASSERT_TRUE(order.ok()) << order.status();
  // Ready at start: c(1), s(2), lone(5). Smallest id first; sp becomes ready after s, and is
  // smaller than lone; j needs sp and c; d0 needs j.
  EXPECT_EQ(Names(*order), std::vector<std::string>({"c", "s", "sp", "j", "d0", "lone"}));
}

TEST(TopologicalOrderTest, SparseIds) {
  auto g = MakeGraph(kDiamond);
  ASSERT_NE(g, nullptr);
  g->RemoveNode(g->FindNode("c"));
  auto order = TopologicalOrder(*g);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(Names(*order), std::vector<std::string>({"s", "sp", "j", "d0", "lone"}));
}

TEST(TopologicalOrderTest, ReportsTheCycle) {
  auto g = MakeGraph(kDiamond);
  ASSERT_NE(g, nullptr);
  // d0 -> c closes d0 <- j <- c into a cycle c -> j -> d0 -> c.
  g->AddControlEdge(g->FindNode("d0"), g->FindNode("c"));
  auto order = TopologicalOrder(*g);
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(order.status().message().find("d0 -> c -> j -> d0"), std::string::npos)
      << order.status();
  EXPECT_NE(order.status().message().find("3 nodes"), std::string::npos) << order.status();
}

TEST(TopologicalOrderTest, SelfLoopAndDownstreamNodes) {
  auto g = MakeGraph(R"pb(node { name: "a" op: "TxGraphTestNoOp" }
                          node { name: "b" op: "TxGraphTestNoOp" input: "^a" })pb");
  ASSERT_NE(g, nullptr);
  g->AddControlEdge(g->FindNode("a"), g->FindNode("a"));
  auto order = TopologicalOrder(*g);
  ASSERT_FALSE(order.ok());
  // b only sits downstream of the loop: it is counted but not part of the reported cycle.
  EXPECT_NE(order.status().message().find(": a -> a ("), std::string::npos) << order.status();
  EXPECT_NE(order.status().message().find("2 nodes"), std::string::npos) << order.status();
}

TEST(TopologicalOrderTest, LongChainIsLinear) {
  Graph g;
  NodeDef s;
  s.set_name("n0");
  s.set_op("TxGraphTestSource");
  Node* prev = *g.AddNode(s);
  const int kN = 20000;
  for (int i = 1; i < kN; ++i) {
    NodeDef d;
    d.set_name("n" + std::to_string(i));
    d.set_op("TxGraphTestSplit");
    Node* n = *g.AddNode(d);
    ASSERT_TRUE(g.AddEdge(prev, 0, n, 0).ok());
    prev = n;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto order = TopologicalOrder(g);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(order.ok());
  ASSERT_EQ(order->size(), static_cast<size_t>(kN));
  EXPECT_EQ((*order)[kN - 1]->name(), "n" + std::to_string(kN - 1));
  EXPECT_LT(ms, 500.0);  // linear work; generous bound for sanitizer builds
}

TEST(ReverseReachableTest, FollowsDataAndControlEdges) {
  auto g = MakeGraph(kDiamond);
  ASSERT_NE(g, nullptr);
  std::vector<bool> r = ReverseReachable(*g, {g->FindNode("j")});
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r, std::vector<bool>({false, true, true, true, true, false}));
  r = ReverseReachable(*g, {g->FindNode("sp"), g->FindNode("lone"), nullptr});
  EXPECT_EQ(r, std::vector<bool>({false, false, true, true, false, true}));
  r = ReverseReachable(*g, {});
  EXPECT_EQ(r, std::vector<bool>(6, false));
}

TEST(PruneForTargetsTest, RemovesWhatRootsDoNotNeed) {
  auto g = MakeGraph(kDiamond);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(PruneForTargets(g.get(), {g->FindNode("sp")}), 4);
  EXPECT_EQ(NodeNames(*g), std::vector<std::string>({"s", "sp"}));
  EXPECT_EQ(g->num_edges(), 1);
  EXPECT_TRUE(g->FindNode("sp")->out_edges().empty());

  auto g2 = MakeGraph(kDiamond);
  ASSERT_NE(g2, nullptr);
  EXPECT_EQ(PruneForTargets(g2.get(), {g2->FindNode("d0")}), 1);
  EXPECT_EQ(g2->FindNode("lone"), nullptr);
  EXPECT_EQ(PruneForTargets(g2.get(), {}), 5);
  EXPECT_EQ(g2->num_nodes(), 0);
  EXPECT_EQ(g2->num_edges(), 0);
}

}  // namespace
}  // namespace tensorflux
