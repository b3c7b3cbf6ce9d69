// The feed/fetch rewrite into _Arg/_Retval nodes and the pruning that follows it.
#include "tensorflux/runtime/subgraph.h"

#include "gtest/gtest.h"
#include "../graph/graph_test_util.h"
#include "tensorflux/framework/node_def_util.h"

namespace tensorflux {
namespace {

using ::tensorflux::testing::InputOf;
using ::tensorflux::testing::MakeGraph;
using ::tensorflux::testing::NodeNames;

// x, y sources; sp = Split(x); b = Binary(sp:0, y); k = Sink(sp:1) with ^c; unused source u
// with a consumer w; init (NoOp) runs before b.
constexpr char kGraph[] = R"pb(
  node { name: "x" op: "TxGraphTestSource" }
  node { name: "y" op: "TxGraphTestSource" }
  node { name: "sp" op: "TxGraphTestSplit" input: "x" }
  node { name: "init" op: "TxGraphTestNoOp" }
  node {
    name: "b"
    op: "TxGraphTestBinary"
    input: "sp"
    input: "y"
    input: "^init"
    attr { key: "T" value { type: DT_FLOAT } }
  }
  node { name: "c" op: "TxGraphTestNoOp" }
  node { name: "k" op: "TxGraphTestSink" input: "sp:1" input: "^c" }
  node { name: "u" op: "TxGraphTestSource" }
  node { name: "w" op: "TxGraphTestSink" input: "u" }
)pb";

int64_t IntAttr(const Node* n, const char* name) {
  const AttrValue* v = n->attr(name);
  return v == nullptr ? -1 : v->i();
}
DataType TypeAttr(const Node* n, const char* name) {
  const AttrValue* v = n->attr(name);
  return v == nullptr ? DT_INVALID : v->type();
}

TEST(SubgraphTest, FetchOnlyPrunes) {
  auto g = MakeGraph(kGraph);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(RewriteGraphForExecution(g.get(), {}, {"b"}, {}).ok());
  EXPECT_EQ(NodeNames(*g),
            std::vector<std::string>({"x", "y", "sp", "init", "b", "_retval_b_0_0"}));
  Node* r = g->FindNode("_retval_b_0_0");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->IsRetval());
  EXPECT_EQ(IntAttr(r, "index"), 0);
  EXPECT_EQ(TypeAttr(r, "T"), DT_FLOAT);
  EXPECT_EQ(InputOf(r, 0), "b:0");
}

TEST(SubgraphTest, FeedMovesOnlyDataEdgesOfThatOutput) {
  auto g = MakeGraph(kGraph);
  ASSERT_NE(g, nullptr);
  // Feed sp:0 (a non-placeholder); fetch b and k's input tensor sp:1.
  ASSERT_TRUE(RewriteGraphForExecution(g.get(), {"sp:0"}, {"b:0", "sp:1"}, {"k"}).ok());
  Node* arg = g->FindNode("_arg_sp_0_0");
  ASSERT_NE(arg, nullptr);
  EXPECT_TRUE(arg->IsArg());
  EXPECT_EQ(IntAttr(arg, "index"), 0);
  EXPECT_EQ(TypeAttr(arg, "T"), DT_FLOAT);
  EXPECT_EQ(InputOf(g->FindNode("b"), 0), "_arg_sp_0_0:0");
  // sp:1 still comes from sp, so sp and x stay.
  EXPECT_EQ(InputOf(g->FindNode("k"), 0), "sp:1");
  EXPECT_EQ(InputOf(g->FindNode("_retval_sp_1_1"), 0), "sp:1");
  EXPECT_EQ(IntAttr(g->FindNode("_retval_sp_1_1"), "index"), 1);
  EXPECT_EQ(NodeNames(*g),
            std::vector<std::string>({"x", "y", "sp", "init", "b", "c", "k", "_arg_sp_0_0",
                                      "_retval_b_0_0", "_retval_sp_1_1"}));
}

TEST(SubgraphTest, FedNodeIsPrunedWhenNothingElseNeedsIt) {
  auto g = MakeGraph(kGraph);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(RewriteGraphForExecution(g.get(), {"sp"}, {"b"}, {}).ok());
  EXPECT_EQ(NodeNames(*g), std::vector<std::string>(
                               {"y", "init", "b", "_arg_sp_0_0", "_retval_b_0_0"}));
}

TEST(SubgraphTest, FeedKeepsControlEdgesOfTheFedNode) {
  auto g = MakeGraph(R"pb(
    node { name: "x" op: "TxGraphTestSource" }
    node { name: "p" op: "TxGraphTestSplit" input: "x" }
    node { name: "q" op: "TxGraphTestSplit" input: "p:1" input: "^p" }
  )pb");
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(RewriteGraphForExecution(g.get(), {"p:1"}, {"q"}, {}).ok());
  // q's data input is now the _Arg, but its control input still pulls p (and x) in.
  Node* q = g->FindNode("q");
  EXPECT_EQ(InputOf(q, 0), "_arg_p_1_0:0");
  int control = 0;
  for (const Edge* e : q->in_edges()) {
    if (e->IsControlEdge()) {
      EXPECT_EQ(e->src()->name(), "p");
      ++control;
    }
  }
  EXPECT_EQ(control, 1);
  EXPECT_NE(g->FindNode("p"), nullptr);
  EXPECT_NE(g->FindNode("x"), nullptr);
  EXPECT_TRUE(g->FindNode("p")->out_edges().size() == 1);
}

TEST(SubgraphTest, FetchOfAFedTensorReadsTheFeed) {
  auto g = MakeGraph(kGraph);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(RewriteGraphForExecution(g.get(), {"x:0"}, {"x"}, {}).ok());
  EXPECT_EQ(NodeNames(*g), std::vector<std::string>({"_arg_x_0_0", "_retval_x_0_0"}));
  EXPECT_EQ(InputOf(g->FindNode("_retval_x_0_0"), 0), "_arg_x_0_0:0");
}

TEST(SubgraphTest, TargetsKeepTheirControlInputs) {
  auto g = MakeGraph(kGraph);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(RewriteGraphForExecution(g.get(), {}, {}, {"k", "init"}).ok());
  EXPECT_EQ(NodeNames(*g), std::vector<std::string>({"x", "sp", "init", "c", "k"}));
}

TEST(SubgraphTest, SameTensorFetchedTwiceAndRefFetch) {
  auto g = MakeGraph(R"pb(node { name: "v" op: "TxGraphTestRef" })pb");
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(RewriteGraphForExecution(g.get(), {}, {"v", "v:0"}, {}).ok());
  Node* r0 = g->FindNode("_retval_v_0_0");
  Node* r1 = g->FindNode("_retval_v_0_1");
  ASSERT_NE(r0, nullptr);
  ASSERT_NE(r1, nullptr);
  EXPECT_EQ(TypeAttr(r0, "T"), DT_FLOAT);  // the base type of float_ref
  EXPECT_EQ(IntAttr(r1, "index"), 1);
}

TEST(SubgraphTest, NameCollisionsGetFreshNames) {
  auto g = MakeGraph(R"pb(node { name: "x" op: "TxGraphTestSource" }
                          node { name: "_retval_x_0_0" op: "TxGraphTestNoOp" })pb");
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(RewriteGraphForExecution(g.get(), {}, {"x"}, {"_retval_x_0_0"}).ok());
  Node* r = g->FindNode("_retval_x_0_0_1");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->IsRetval());
}

// Runs the rewrite on a fresh kGraph; expects `code`, `part` in the message and the graph as it
// was.
void ExpectRewriteError(const std::vector<std::string>& feeds,
                        const std::vector<std::string>& fetches,
                        const std::vector<std::string>& targets, absl::StatusCode code,
                        const std::string& part) {
  auto g = MakeGraph(kGraph);
  ASSERT_NE(g, nullptr);
  GraphDef before, after;
  g->ToGraphDef(&before);
  Status s = RewriteGraphForExecution(g.get(), feeds, fetches, targets);
  EXPECT_EQ(s.code(), code) << s;
  EXPECT_NE(s.message().find(part), std::string::npos) << "'" << part << "' not in: " << s;
  g->ToGraphDef(&after);
  EXPECT_EQ(before.DebugString(), after.DebugString());
}

TEST(SubgraphTest, Errors) {
  using absl::StatusCode;
  ExpectRewriteError({}, {"nope:0"}, {}, StatusCode::kNotFound, "nope:0");
  ExpectRewriteError({}, {"nope"}, {}, StatusCode::kNotFound, "nope:0");
  ExpectRewriteError({}, {"x:3"}, {}, StatusCode::kNotFound, "x:3");
  ExpectRewriteError({"nope:1"}, {"b"}, {}, StatusCode::kNotFound, "nope:1");
  ExpectRewriteError({"sp:2"}, {"b"}, {}, StatusCode::kNotFound, "sp:2");
  ExpectRewriteError({}, {}, {"nope"}, StatusCode::kNotFound, "nope");
  ExpectRewriteError({}, {"b"}, {"b:0"}, StatusCode::kInvalidArgument, "b:0");
  ExpectRewriteError({}, {"b:x"}, {}, StatusCode::kInvalidArgument, "b:x");
  ExpectRewriteError({}, {"^b"}, {}, StatusCode::kInvalidArgument, "^b");
  ExpectRewriteError({"^x"}, {"b"}, {}, StatusCode::kInvalidArgument, "^x");
  ExpectRewriteError({"x", "x:0"}, {"b"}, {}, StatusCode::kInvalidArgument, "x:0");
}

TEST(SubgraphTest, FeedingATensorTakenByReferenceFails) {
  auto g = MakeGraph(R"pb(
    node { name: "v" op: "TxGraphTestRef" }
    node { name: "s" op: "TxGraphTestSource" }
    node { name: "a" op: "TxGraphTestRefIn" input: "v" input: "s" }
  )pb");
  ASSERT_NE(g, nullptr);
  Status s = RewriteGraphForExecution(g.get(), {"v"}, {"a"}, {});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'a'"), std::string::npos) << s;
  EXPECT_EQ(g->num_nodes(), 3);
}

// Feeding a variable's value is fine when its reference consumers are pruned away.
TEST(SubgraphTest, FeedingAVariableWhoseRefConsumersArePruned) {
  auto g = MakeGraph(R"pb(
    node { name: "v" op: "TxGraphTestRef" }
    node { name: "s" op: "TxGraphTestSource" }
    node { name: "a" op: "TxGraphTestRefIn" input: "v" input: "s" }
    node { name: "r" op: "TxGraphTestSplit" input: "v" }
  )pb");
  ASSERT_NE(g, nullptr);
  Status s = RewriteGraphForExecution(g.get(), {"v"}, {"r:0"}, {});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(g->FindNode("a"), nullptr);
  EXPECT_EQ(g->FindNode("v"), nullptr);
  ASSERT_NE(g->FindNode("r"), nullptr);
  for (const Edge* e : g->FindNode("r")->in_edges()) EXPECT_EQ(e->src()->type_string(), "_Arg");
}

}  // namespace
}  // namespace tensorflux
