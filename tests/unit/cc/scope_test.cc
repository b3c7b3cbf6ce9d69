// Scope: node naming, name scopes, devices, control dependencies and error accumulation.
#include "tensorflux/cc/scope.h"

#include <gtest/gtest.h>

#include "tensorflux/cc/ops/ops.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux {
namespace {

std::vector<std::string> ControlInputs(const Node* n) {
  std::vector<std::string> out;
  for (const Edge* e : n->in_edges())
    if (e->IsControlEdge()) out.push_back(e->src()->name());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ScopeTest, NamesAreUniqueAndFollowNameScopes) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root, 1.f);
  auto b = ops::Const(root, 2.f);
  auto add = ops::AddV2(root, a, b);
  auto add2 = ops::AddV2(root, add, b);
  EXPECT_EQ(a.node()->name(), "Const");
  EXPECT_EQ(b.node()->name(), "Const_1");
  EXPECT_EQ(add.node()->name(), "AddV2");
  EXPECT_EQ(add2.node()->name(), "AddV2_1");

  Scope layer = root.NewSubScope("layer");
  auto w = ops::Const(layer.WithOpName("w"), {{1.f, 2.f}});
  EXPECT_EQ(w.node()->name(), "layer/w");
  Scope inner = layer.NewSubScope("inner");
  auto n = ops::Neg(inner, w);
  EXPECT_EQ(n.node()->name(), "layer/inner/Neg");
  // A second "layer" scope is uniquified, as is a second op with the same explicit name.
  Scope layer2 = root.NewSubScope("layer");
  EXPECT_EQ(layer2.name_prefix(), "layer_1");
  auto w2 = ops::Const(layer.WithOpName("w"), 3.f);
  EXPECT_EQ(w2.node()->name(), "layer/w_1");
  // Names built from pieces.
  auto p = ops::Const(root.WithOpName("part", 7), 1);
  EXPECT_EQ(p.node()->name(), "part7");
  // An empty sub-scope name keeps the prefix.
  EXPECT_EQ(layer.NewSubScope("").name_prefix(), "layer");
  EXPECT_TRUE(root.ok()) << root.status();
}

TEST(ScopeTest, LiteralInputsBecomeConstsUnderTheOpName) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto y = ops::Mul(root.WithOpName("y"), x, 0.5);
  ASSERT_TRUE(root.ok()) << root.status();
  Node* c = root.graph()->FindNode("y/y");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->type_string(), "Const");
  // 0.5 is a double literal; it takes x's dtype.
  EXPECT_EQ(c->output_type(0), DT_FLOAT);
  EXPECT_EQ(y.node()->input_type(1), DT_FLOAT);
}

TEST(ScopeTest, DeviceAndControlDependencies) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root.WithOpName("a"), 1.f);
  auto init = ops::NoOp(root.WithOpName("init"));
  Scope dev = root.WithDevice("/cpu:0");
  auto n = ops::Neg(dev.WithControlDependencies(std::vector<Operation>{init.operation})
                        .WithControlDependencies(a),
                    a);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(n.node()->requested_device(), "/cpu:0");
  EXPECT_EQ(ControlInputs(n.node()), (std::vector<std::string>{"a", "init"}));
  auto m = ops::Neg(dev.WithControlDependencies(a).WithNoControlDependencies(), a);
  EXPECT_TRUE(ControlInputs(m.node()).empty());
  // GraphDef lists control inputs after data inputs.
  GraphDef gdef;
  ASSERT_TRUE(root.ToGraphDef(&gdef).ok());
  for (const NodeDef& nd : gdef.node()) {
    if (nd.name() != n.node()->name()) continue;
    ASSERT_EQ(nd.input_size(), 3);
    EXPECT_EQ(nd.input(0), "a");
    EXPECT_EQ(nd.input(1)[0], '^');
    EXPECT_EQ(nd.device(), "/cpu:0");
  }
}

TEST(ScopeTest, FirstErrorSticksAndLaterOpsAreNoOps) {
  Scope root = Scope::NewRootScope();
  auto f = ops::Const(root, {1.f, 2.f});
  auto i = ops::Const(root, {1, 2});
  auto bad = ops::AddV2(root.WithOpName("bad"), f, i);  // float vs int32
  EXPECT_FALSE(root.ok());
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(root.status().message().find("bad"), std::string::npos) << root.status();
  EXPECT_NE(root.status().message().find("'T'"), std::string::npos) << root.status();
  EXPECT_EQ(bad.node(), nullptr);
  const int nodes = root.graph()->num_nodes();
  // Every later op, from any scope of the tree, does nothing.
  auto later = ops::Neg(root.NewSubScope("s"), f);
  EXPECT_EQ(later.node(), nullptr);
  EXPECT_EQ(root.graph()->num_nodes(), nodes);
  const Status first = root.status();
  root.UpdateStatus(errors::Internal("second"));
  EXPECT_EQ(root.status(), first);
  GraphDef gdef;
  EXPECT_EQ(root.ToGraphDef(&gdef), first);
}

TEST(ScopeTest, EmptyOutputsFromFailedOpsAreReported) {
  Scope root = Scope::NewRootScope();
  Scope other = Scope::NewRootScope();
  // An Output from a different graph.
  auto foreign = ops::Const(other, 1.f);
  auto n = ops::Neg(root, foreign);
  EXPECT_EQ(n.node(), nullptr);
  EXPECT_NE(root.status().message().find("another graph"), std::string::npos) << root.status();

  Scope root2 = Scope::NewRootScope();
  auto m = ops::Neg(root2, Output());
  EXPECT_EQ(m.node(), nullptr);
  EXPECT_NE(root2.status().message().find("empty Output"), std::string::npos) << root2.status();
}

TEST(ScopeTest, BadLiteralsAndAttrsAreRecorded) {
  {
    Scope root = Scope::NewRootScope();
    auto r = ops::Const(root, {{1.f, 2.f}, {3.f}});  // ragged
    EXPECT_EQ(r.node(), nullptr);
    EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(root.status().message().find("ragged"), std::string::npos) << root.status();
  }
  {
    Scope root = Scope::NewRootScope();
    auto x = ops::Placeholder(root, DT_INT32);
    auto y = ops::Mul(root, x, 0.5);  // 0.5 is not an int32
    EXPECT_EQ(y.node(), nullptr);
    EXPECT_NE(root.status().message().find("does not convert"), std::string::npos) << root.status();
  }
  {
    Scope root = Scope::NewRootScope();
    auto x = ops::Placeholder(root, DT_BOOL);
    auto y = ops::Sqrt(root, x);  // bool is not an allowed T for Sqrt
    EXPECT_EQ(y.node(), nullptr);
    EXPECT_FALSE(root.ok());
    EXPECT_NE(root.status().message().find("Sqrt"), std::string::npos) << root.status();
  }
  {
    Scope root = Scope::NewRootScope();
    auto c = ops::Const(root, {1, 2, 3}, {2, 2});  // 3 values, shape needs 4
    EXPECT_EQ(c.node(), nullptr);
    EXPECT_NE(root.status().message().find("needs 4"), std::string::npos) << root.status();
  }
}

TEST(ScopeTest, ShapeInferenceRunsWhileBuilding) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});  // [2,3]
  auto b = ops::Const(root, {{1.f}, {2.f}, {3.f}});              // [3,1]
  auto p = ops::MatMul(root, a, b);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root.GetInferredShape(p), PartialTensorShape({2, 1}));
  auto r = ops::Reshape(root, a, {3, -1});
  EXPECT_EQ(root.GetInferredShape(r), PartialTensorShape({3, 2}));
  // Mismatched inner dimensions fail at construction, naming the node.
  auto bad = ops::MatMul(root.WithOpName("mm"), a, a);
  EXPECT_EQ(bad.node(), nullptr);
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(root.status().message().find("mm"), std::string::npos) << root.status();
}

}  // namespace
}  // namespace tensorflux
