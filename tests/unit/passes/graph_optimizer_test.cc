// The optimizer's framework (passes/graph_optimizer.h): which passes the session options switch
// on (TF's OptimizerOptions and RewriterConfig rules), the per-pass statistics, and the session
// running the optimized graph (seen through RunOptions.output_partition_graphs).
#include "tensorflux/passes/graph_optimizer.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "pass_test_util.h"

namespace tensorflux {
namespace {

using pass_test::GraphBuilder;

struct Expect {
  bool cf, cse, arith, pruning, remap;
};

void ExpectSwitches(const GraphOptions& o, Expect e) {
  const PassSwitches s = PassSwitches::FromGraphOptions(o);
  EXPECT_EQ(s.constant_folding, e.cf);
  EXPECT_EQ(s.common_subgraph_elimination, e.cse);
  EXPECT_EQ(s.arithmetic_optimization, e.arith);
  EXPECT_EQ(s.model_pruning, e.pruning);
  EXPECT_EQ(s.remapping, e.remap);
}

TEST(PassSwitchesTest, FollowTfOptions) {
  GraphOptions o;
  ExpectSwitches(o, {true, true, true, true, true});  // L1, every toggle DEFAULT

  // L1 turns folding and CSE on whatever the classic flags say (TF's GraphOptimizer).
  o.mutable_optimizer_options()->set_do_constant_folding(false);
  ExpectSwitches(o, {true, true, true, true, true});

  // L0: everything off, unless a classic flag or a toggle turns a pass on.
  o.mutable_optimizer_options()->set_opt_level(GraphOptions::OptimizerOptions::L0);
  ExpectSwitches(o, {false, false, false, false, false});
  o.mutable_optimizer_options()->set_do_constant_folding(true);
  ExpectSwitches(o, {true, false, false, false, false});
  o.mutable_optimizer_options()->set_do_common_subexpression_elimination(true);
  o.mutable_rewrite_options()->set_remapping(RewriterConfig::ON);
  ExpectSwitches(o, {true, true, false, false, true});
  // OFF wins over the classic flag.
  o.mutable_rewrite_options()->set_constant_folding(RewriterConfig::OFF);
  ExpectSwitches(o, {false, true, false, false, true});

  GraphOptions p;
  p.mutable_rewrite_options()->set_arithmetic_optimization(RewriterConfig::OFF);
  p.mutable_rewrite_options()->set_disable_model_pruning(true);
  ExpectSwitches(p, {true, true, false, false, true});
  p.mutable_rewrite_options()->set_common_subgraph_elimination(RewriterConfig::AGGRESSIVE);
  p.mutable_rewrite_options()->set_disable_meta_optimizer(true);
  ExpectSwitches(p, {false, true, false, false, false});
  p.mutable_optimizer_options()->set_do_constant_folding(true);
  ExpectSwitches(p, {true, true, false, false, false});
}

TEST(PassSwitchesTest, RewriterConfigUsesTfWireNumbers) {
  // GraphOptions.rewrite_options = 10; RewriterConfig.constant_folding = 3 (OFF = 2),
  // remapping = 14, common_subgraph_elimination = 24, disable_model_pruning = 2.
  const std::string wire = {0x52, 0x09, 0x18, 0x02, 0x70, 0x02, static_cast<char>(0xc0),
                            0x01, 0x02, 0x10, 0x01};
  GraphOptions o;
  ASSERT_TRUE(o.ParseFromString(wire));
  EXPECT_EQ(o.rewrite_options().constant_folding(), RewriterConfig::OFF);
  EXPECT_EQ(o.rewrite_options().remapping(), RewriterConfig::OFF);
  EXPECT_EQ(o.rewrite_options().common_subgraph_elimination(), RewriterConfig::OFF);
  EXPECT_TRUE(o.rewrite_options().disable_model_pruning());
  ExpectSwitches(o, {false, false, true, false, false});
}

// x*c where c = 2 + 3 folds; the stats say what each pass did.
GraphDef FoldableGraph() {
  GraphBuilder b;
  b.Placeholder("x", PartialTensorShape({2}));
  b.Scalar("c1", 2);
  b.Scalar("c2", 3);
  b.Op("c", "AddV2", {"c1", "c2"});
  b.Op("y", "Mul", {"x", "c"});
  b.Op("z", "Identity", {"y"});
  return b.def();
}

TEST(GraphOptimizerTest, StatsCountNodesPerPass) {
  auto o = pass_test::Optimize(FoldableGraph(), {"x"}, {"z"}, {}, PassSwitches());
  // _Arg, c1, c2, c, y, z, _Retval before; folding replaces c, pruning drops c1 and c2, the
  // Identity z is fetched and stays.
  ASSERT_EQ(o.stats.size(), 5u);
  const std::string names[] = {"constant_folding", "common_subgraph_elimination",
                               "arithmetic_optimization", "model_pruning", "remapping"};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(o.stats[i].name, names[i]);
    EXPECT_TRUE(o.stats[i].enabled);
    EXPECT_TRUE(o.stats[i].status.ok()) << o.stats[i].status;
  }
  EXPECT_EQ(o.stats[0].nodes_before, 7);
  EXPECT_EQ(o.stats[0].changes, 1);
  EXPECT_EQ(o.stats[3].nodes_before, 7);
  EXPECT_EQ(o.stats[3].nodes_after, 5);
  EXPECT_EQ(o.stats[3].changes, 2);
  EXPECT_EQ(o.graph->num_nodes(), 5);
  ASSERT_NE(o.Find("c"), nullptr);
  EXPECT_EQ(o.Find("c")->type_string(), "Const");
  EXPECT_EQ(o.Find("c1"), nullptr);
  EXPECT_NE(o.Find("z"), nullptr);

  auto off = pass_test::Optimize(FoldableGraph(), {"x"}, {"z"}, {}, pass_test::Only({}));
  EXPECT_EQ(off.graph->num_nodes(), 7);
  for (const PassStats& s : off.stats) {
    EXPECT_FALSE(s.enabled);
    EXPECT_EQ(s.nodes_before, s.nodes_after);
  }
}

// The session optimizes the graph it runs, as the options say.
TEST(GraphOptimizerTest, SessionRunsTheOptimizedGraph) {
  for (bool on : {true, false}) {
    SCOPED_TRACE(on ? "passes on" : "passes off");
    SessionOptions opts;
    if (!on) opts.config = pass_test::PassesOff();
    LocalSession session(opts);
    ASSERT_TRUE(session.Create(FoldableGraph()).ok());
    RunOptions ro;
    ro.set_output_partition_graphs(true);
    RunMetadata md;
    std::vector<Tensor> out;
    Tensor x = Tensor::FromVector<float>({1.5f, -2}, TensorShape({2}));
    Status s = session.Run(ro, {{"x", x}}, {"z"}, {}, &out, &md);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(out[0].flat<float>()[0], 7.5f);
    EXPECT_EQ(out[0].flat<float>()[1], -10.0f);
    ASSERT_EQ(md.partition_graphs_size(), 1);
    std::map<std::string, std::string> op_of;
    for (const NodeDef& n : md.partition_graphs(0).node()) op_of[n.name()] = n.op();
    EXPECT_EQ(op_of["c"], on ? "Const" : "AddV2");
    EXPECT_EQ(op_of.count("c1"), on ? 0u : 1u);
  }
}

}  // namespace
}  // namespace tensorflux
