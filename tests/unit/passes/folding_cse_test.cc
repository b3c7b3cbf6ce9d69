// Constant folding (passes/constant_folding.cc) and common-subexpression elimination
// (passes/cse.cc): which nodes each rewrites and which it must leave (fed, fetched, stateful,
// too big, failing), with the values checked against hand-worked results and against the same
// graph run with the passes off.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pass_test_util.h"
#include "tensorflux/passes/pass_util.h"

namespace tensorflux {
namespace {

using pass_test::GraphBuilder;
using pass_test::Only;
using pass_test::Optimize;

std::vector<float> ConstFloats(const Node* n) {
  std::optional<Tensor> t = passes::ConstValue(n);
  EXPECT_TRUE(t.has_value()) << n->name() << " is not a Const";
  if (!t.has_value()) return {};
  return std::vector<float>(t->flat<float>().begin(), t->flat<float>().end());
}

const PassSwitches kFold = Only({"constant_folding", "model_pruning"});

TEST(ConstantFoldingTest, FoldsChainsKeepsNamesAndControlInputs) {
  GraphBuilder b;
  b.Placeholder("x", PartialTensorShape({2}));
  b.Const("v", Tensor::FromVector<float>({1, 2}, TensorShape({2})));
  b.Scalar("k", 3);
  b.Op("noop", "NoOp");
  NodeDef* s_def = b.Op("s", "Mul", {"v", "k"});  // [3, 6]
  s_def->add_input("^noop");
  s_def->set_device("/device:CPU:0");
  AddNodeAttr("_class", std::vector<std::string>{"loc:@v"}, s_def);
  b.Op("n", "Neg", {"s"});                            // [-3, -6]
  b.Op("y", "AddV2", {"x", "n"});
  auto o = Optimize(b.def(), {"x"}, {"y"}, {"noop"}, kFold);
  EXPECT_EQ(o.stats[0].changes, 2);  // s, then n from the folded s
  ASSERT_NE(o.Find("n"), nullptr);
  EXPECT_EQ(o.Find("n")->type_string(), "Const");
  EXPECT_EQ(ConstFloats(o.Find("n")), (std::vector<float>{-3, -6}));
  EXPECT_EQ(o.Find("s"), nullptr);  // dead once n folded
  {  // s's Const alone: it keeps s's device and colocation
    auto only_s = Optimize(b.def(), {"x"}, {"y"}, {"noop"}, Only({"constant_folding"}));
    const Node* s = only_s.Find("s");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->type_string(), "Const");
    EXPECT_EQ(s->requested_device(), "/device:CPU:0");
    std::vector<std::string> cls;
    ASSERT_TRUE(GetNodeAttr(s->def(), "_class", &cls).ok());
    EXPECT_EQ(cls, std::vector<std::string>{"loc:@v"});
  }
  EXPECT_EQ(o.Find("v"), nullptr);
  // s's control input carried over to the Const that replaced it, and on to n's.
  std::vector<std::string> controls;
  for (Node* c : passes::ControlInputs(o.Find("n"))) controls.push_back(c->name());
  EXPECT_EQ(controls, (std::vector<std::string>{"noop"}));
  EXPECT_EQ(o.Find("y")->type_string(), "AddV2");  // one input is fed

  pass_test::ExpectSameWithPassesOnAndOff(
      b.def(), {{"x", Tensor::FromVector<float>({0.5f, 10}, TensorShape({2}))}}, {"y", "n"});
}

TEST(ConstantFoldingTest, MultipleOutputsBecomeOneConstEach) {
  GraphBuilder b;
  b.Const("m", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})));
  NodeDef* u = b.Op("u", "Unpack", {"m"});
  AddNodeAttr("num", int64_t{2}, u);
  b.Placeholder("x", PartialTensorShape({3}));
  b.Op("a", "Mul", {"u:1", "x"});
  b.Op("c", "AddV2", {"u", "x"});
  auto o = Optimize(b.def(), {"x"}, {"a", "c"}, {}, kFold);
  ASSERT_EQ(o.Find("u"), nullptr);
  ASSERT_NE(o.Find("u/__cf__0"), nullptr);
  ASSERT_NE(o.Find("u/__cf__1"), nullptr);
  EXPECT_EQ(ConstFloats(o.Find("u/__cf__0")), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(ConstFloats(o.Find("u/__cf__1")), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(o.Count("Unpack"), 0);
}

TEST(ConstantFoldingTest, LeavesFedFetchedStatefulAndFailingNodes) {
  GraphBuilder b;
  b.Scalar("c1", 2);
  b.Scalar("c2", 5);
  b.Op("a", "AddV2", {"c1", "c2"});
  b.Op("fetched", "Mul", {"c1", "c2"});
  b.Op("b", "Mul", {"a", "c1"});  // a is fed below: b must see the fed value
  b.Const("shape", Tensor::FromVector<int32_t>({3}, TensorShape({1})));
  NodeDef* r = b.Op("r", "RandomUniform", {"shape"});
  AddNodeAttr("dtype", DT_FLOAT, r);
  r->mutable_attr()->erase("T");
  AddNodeAttr("T", DT_INT32, r);
  b.Op("r2", "Mul", {"r", "c1"});
  auto o = Optimize(b.def(), {"a"}, {"b", "fetched", "r2"}, {}, kFold);
  EXPECT_EQ(o.Find("b")->type_string(), "Mul");
  EXPECT_EQ(o.Find("fetched")->type_string(), "Mul");
  EXPECT_EQ(o.Find("r")->type_string(), "RandomUniform");
  EXPECT_EQ(o.Find("r2")->type_string(), "Mul");
  EXPECT_EQ(o.stats[0].changes, 0);
  auto fed = pass_test::RunGraph(b.def(), ConfigProto(), {{"a", Tensor::Scalar<float>(10)}},
                                 {"b", "fetched"});
  ASSERT_TRUE(fed.ok()) << fed.status();
  EXPECT_EQ(fed->at(0).scalar<float>(), 20.0f);  // the fed 10, not the folded 2 + 5
  EXPECT_EQ(fed->at(1).scalar<float>(), 10.0f);

  // A node whose kernel fails stays, so the step fails as it would unoptimized.
  GraphBuilder f;
  f.Const("v", Tensor::FromVector<float>({1, 2, 3}, TensorShape({3})));
  f.Const("four", Tensor::FromVector<int32_t>({4}, TensorShape({1})));
  NodeDef* rs = f.Op("rs", "Reshape", {"v", "four"});
  rs->mutable_attr()->erase("T");
  AddNodeAttr("T", DT_FLOAT, rs);
  f.Op("y", "Neg", {"rs"});
  auto of = Optimize(f.def(), {}, {"y"}, {}, kFold);
  EXPECT_EQ(of.Find("rs")->type_string(), "Reshape");
  auto run = pass_test::RunGraph(f.def(), ConfigProto(), {}, {"y"});
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(run.status().message()).find("rs"), std::string::npos) << run.status();
}

TEST(ConstantFoldingTest, SizeCap) {
  GraphBuilder b;
  b.Const("dims", Tensor::FromVector<int32_t>({1000}, TensorShape({1})));
  b.Scalar("v", 1.5f);
  NodeDef* fill = b.Op("fill", "Fill", {"dims", "v"});
  AddNodeAttr("index_type", DT_INT32, fill);
  b.Placeholder("x", PartialTensorShape({1000}));
  b.Op("y", "Mul", {"fill", "x"});
  OptimizerContext ctx = OptimizerContext::ForSignature({"x"}, {"y"}, {});
  ctx.max_constant_bytes = 3999;  // 1000 floats need 4000
  auto small = Optimize(b.def(), {"x"}, {"y"}, {}, kFold, &ctx);
  EXPECT_EQ(small.Find("fill")->type_string(), "Fill");
  ctx.max_constant_bytes = 4000;
  auto big = Optimize(b.def(), {"x"}, {"y"}, {}, kFold, &ctx);
  EXPECT_EQ(big.Find("fill")->type_string(), "Const");

  // The cap comes from OptimizerOptions.max_folded_constant_in_bytes.
  GraphOptions go;
  go.mutable_optimizer_options()->set_max_folded_constant_in_bytes(100);
  PassSwitches s = PassSwitches::FromGraphOptions(go);
  auto capped = Optimize(b.def(), {"x"}, {"y"}, {}, s);
  EXPECT_EQ(capped.Find("fill")->type_string(), "Fill");
}

TEST(CseTest, MergesEqualSubgraphsOnly) {
  GraphBuilder b;
  b.Placeholder("x", PartialTensorShape({2}));
  b.Scalar("two_a", 2);
  b.Scalar("two_b", 2);  // equal value: merged
  b.Op("m1", "Mul", {"x", "two_a"});
  b.Op("m2", "Mul", {"x", "two_b"});
  b.Op("n1", "Neg", {"m1"});
  b.Op("n2", "Neg", {"m2"});  // equal once m2 is m1
  b.Op("sum2", "AddV2", {"n1", "n2"});
  b.Const("shape", Tensor::FromVector<int32_t>({2}, TensorShape({1})));
  for (const char* name : {"r1", "r2"}) {
    NodeDef* r = b.Op(name, "RandomUniform", {"shape"});
    r->mutable_attr()->erase("T");
    AddNodeAttr("T", DT_INT32, r);
    AddNodeAttr("dtype", DT_FLOAT, r);
  }
  b.Op("rs", "AddV2", {"r1", "r2"});
  auto o = Optimize(b.def(), {}, {"sum2", "rs"}, {},
                    Only({"common_subgraph_elimination", "model_pruning"}));
  // two_b -> two_a, m2 -> m1, n2 -> n1; sum2 is now n1 + n1.
  EXPECT_EQ(o.stats[1].changes, 3);
  EXPECT_EQ(o.Find("two_b"), nullptr);
  EXPECT_EQ(o.Find("m2"), nullptr);
  EXPECT_EQ(o.Find("n2"), nullptr);
  auto in0 = o.Find("sum2")->input_edge(0);
  auto in1 = o.Find("sum2")->input_edge(1);
  ASSERT_TRUE(in0.ok() && in1.ok());
  EXPECT_EQ((*in0)->src()->name(), "n1");
  EXPECT_EQ((*in1)->src()->name(), "n1");
  // Two draws of the same random op are two values.
  EXPECT_NE(o.Find("r1"), nullptr);
  EXPECT_NE(o.Find("r2"), nullptr);

  // Fetched duplicates both stay; a fetched node absorbs an unfetched earlier twin.
  auto kept = Optimize(b.def(), {}, {"n1", "n2"}, {}, Only({"common_subgraph_elimination"}));
  EXPECT_NE(kept.Find("n1"), nullptr);
  EXPECT_NE(kept.Find("n2"), nullptr);
  auto later = Optimize(b.def(), {}, {"m2", "n1"}, {}, Only({"common_subgraph_elimination"}));
  EXPECT_EQ(later.Find("m1"), nullptr);
  ASSERT_NE(later.Find("n1"), nullptr);
  auto n1_in = later.Find("n1")->input_edge(0);
  ASSERT_TRUE(n1_in.ok());
  EXPECT_EQ((*n1_in)->src()->name(), "m2");

  Tensor x = Tensor::FromVector<float>({1.25f, -3}, TensorShape({2}));
  auto on = pass_test::RunGraph(b.def(), ConfigProto(), {{"x", x}}, {"sum2"});
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_EQ(on->at(0).flat<float>()[0], -5.0f);  // -(2x) twice
  EXPECT_EQ(on->at(0).flat<float>()[1], 12.0f);
}

TEST(CseTest, VariableReadsAreNotMerged) {
  // Two Identity reads of a TF 1.x variable have reference inputs: they are not merged.
  GraphBuilder b;
  NodeDef* v = b.Op("v", "VariableV2");
  AddNodeAttr("dtype", DT_FLOAT, v);
  AddNodeAttr("shape", PartialTensorShape({}), v);
  b.Op("r1", "Identity", {"v"});
  b.Op("r2", "Identity", {"v"});
  b.Op("s", "AddV2", {"r1", "r2"});
  auto o = Optimize(b.def(), {}, {"s"}, {}, Only({"common_subgraph_elimination"}));
  EXPECT_NE(o.Find("r1"), nullptr);
  EXPECT_NE(o.Find("r2"), nullptr);
}

}  // namespace
}  // namespace tensorflux
