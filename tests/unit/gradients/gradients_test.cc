// AddSymbolicGradients: fan-out summed with AddN, broadcasting reduced, null for an unconnected
// x, several ys, given grad_ys, StopGradient and integer tensors stopping the flow, node naming,
// and the errors (missing gradient, bad arguments). Values are checked by running the graph
// against hand-derived derivatives.
#include "tensorflux/gradients/gradients.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace {

// A float op with no gradient function (graph building only; it has no kernel).
REGISTER_OP("TxGradTestNoGrad").Input("x: float").Output("y: float");

class GradientsTest : public ::testing::Test {
 protected:
  GradOutput Const(std::vector<float> v, TensorShape shape) {
    NodeDef def;
    def.set_name(g_.NewName("c"));
    def.set_op("Const");
    AddNodeAttr("dtype", DT_FLOAT, &def);
    AddNodeAttr("value", Tensor::FromVector<float>(v, shape), &def);
    auto n = g_.AddNode(std::move(def));
    EXPECT_TRUE(n.ok()) << n.status();
    return {*n, 0};
  }
  GradOutput Op(const std::string& op, std::vector<GradOutput> in, GradAttrs attrs = {}) {
    auto n = AddNodeFromInputs(&g_, "", op, in, std::move(attrs));
    EXPECT_TRUE(n.ok()) << n.status();
    return n.ok() ? GradOutput{*n, 0} : GradOutput{};
  }
  bool Has(const std::string& op) { return OpRegistry::Global()->LookUpOpDef(op).ok(); }
  // Binary ops' gradients reduce over broadcast axes with these (added by other helpers).
  bool HasReduction() { return Has("BroadcastGradientArgs") && Has("Sum"); }
  // Runs the graph and returns the values of `t` as floats.
  std::vector<float> Eval(GradOutput t,
                          std::vector<std::pair<std::string, Tensor>> feeds = {}) {
    GraphDef gdef;
    g_.ToGraphDef(&gdef);
    auto s = NewSession(SessionOptions());
    EXPECT_TRUE(s.ok());
    Status st = (*s)->Create(gdef);
    EXPECT_TRUE(st.ok()) << st;
    std::vector<Tensor> out;
    st = (*s)->Run(feeds, {t.name()}, {}, &out);
    EXPECT_TRUE(st.ok()) << st;
    if (!st.ok()) return {};
    shape_ = out[0].shape();
    auto f = out[0].flat<float>();
    return std::vector<float>(f.begin(), f.end());
  }
  std::vector<GradOutput> Grads(std::vector<GradOutput> ys, std::vector<GradOutput> xs,
                                std::vector<GradOutput> grad_ys = {}) {
    std::vector<GradOutput> gx;
    Status s = AddSymbolicGradients(&g_, ys, xs, grad_ys, &gx);
    EXPECT_TRUE(s.ok()) << s;
    return gx;
  }
  int CountOps(const std::string& op) {
    int n = 0;
    for (Node* node : g_.nodes()) n += node->type_string() == op;
    return n;
  }

  Graph g_;
  TensorShape shape_;
};

TEST_F(GradientsTest, FanOutIsSummedWithAddN) {
  if (!Has("AddN")) GTEST_SKIP() << "AddN not registered yet";
  GradOutput x = Const({1, -2, 3}, TensorShape({3}));
  GradOutput y = Op("AddV2", {Op("Mul", {x, x}), x});  // x^2 + x
  auto gx = Grads({y}, {x});
  ASSERT_TRUE(gx[0].valid());
  EXPECT_EQ(gx[0].node->type_string(), "AddN");
  EXPECT_EQ(Eval(gx[0]), (std::vector<float>{3, -3, 7}));  // 2x + 1
  EXPECT_GE(CountOps("AddN"), 1);
}

TEST_F(GradientsTest, BroadcastGradientIsReduced) {
  if (!HasReduction() || !Has("AddN")) GTEST_SKIP() << "BroadcastGradientArgs/Sum/AddN missing";
  GradOutput x = Const({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  GradOutput b = Const({10, 20, 30}, TensorShape({3}));
  GradOutput y = Op("Mul", {Op("AddV2", {x, b}), x});  // (x + b) * x
  auto g = Grads({y}, {x, b});
  ASSERT_TRUE(g[0].valid() && g[1].valid());
  // dy/dx = 2x + b, dy/db = sum over rows of x.
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{12, 24, 36, 18, 30, 42}));
  EXPECT_EQ(shape_, TensorShape({2, 3}));
  EXPECT_EQ(Eval(g[1]), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(shape_, TensorShape({3}));
  EXPECT_GE(CountOps("BroadcastGradientArgs"), 1);
}

// Shapes unknown when the graph is built: the reduction axes are computed at run time.
TEST_F(GradientsTest, BroadcastWithUnknownShapes) {
  if (!HasReduction()) GTEST_SKIP() << "BroadcastGradientArgs/Sum not registered yet";
  auto placeholder = [&](const char* name) {
    NodeDef def;
    def.set_name(name);
    def.set_op("Placeholder");
    AddNodeAttr("dtype", DT_FLOAT, &def);
    auto n = g_.AddNode(std::move(def));
    EXPECT_TRUE(n.ok()) << n.status();
    return GradOutput{*n, 0};
  };
  GradOutput x = placeholder("x"), b = placeholder("b");
  GradOutput y = Op("Sub", {x, b});
  auto g = Grads({y}, {x, b});
  EXPECT_GE(CountOps("BroadcastGradientArgs"), 1);
  std::vector<std::pair<std::string, Tensor>> feeds = {
      {"x", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}))},
      {"b", Tensor::FromVector<float>({1}, TensorShape({1, 1}))}};
  EXPECT_EQ(Eval(g[0], feeds), (std::vector<float>(6, 1.0f)));
  EXPECT_EQ(shape_, TensorShape({2, 3}));
  EXPECT_EQ(Eval(g[1], feeds), (std::vector<float>{-6}));
  EXPECT_EQ(shape_, TensorShape({1, 1}));
}

// Same static shapes: no reduction nodes are added.
TEST_F(GradientsTest, SameShapesNeedNoReduction) {
  GradOutput x = Const({1, 2, 3}, TensorShape({3}));
  GradOutput w = Const({4, 5, 6}, TensorShape({3}));
  GradOutput y = Op("Mul", {x, w});
  auto g = Grads({y}, {x, w});
  EXPECT_EQ(CountOps("BroadcastGradientArgs"), 0);
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(Eval(g[1]), (std::vector<float>{1, 2, 3}));
}

TEST_F(GradientsTest, UnconnectedXIsNull) {
  GradOutput x1 = Const({2}, TensorShape({1}));
  GradOutput x2 = Const({5}, TensorShape({1}));
  GradOutput y = Op("Square", {x1});
  auto g = Grads({y}, {x1, x2, y});
  ASSERT_TRUE(g[0].valid());
  EXPECT_FALSE(g[1].valid());
  ASSERT_TRUE(g[2].valid());  // dy/dy = 1
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{4}));
  EXPECT_EQ(Eval(g[2]), (std::vector<float>{1}));
}

TEST_F(GradientsTest, SeveralYsAreSummed) {
  if (!Has("AddN")) GTEST_SKIP() << "AddN not registered yet";
  GradOutput x = Const({1, 2}, TensorShape({2}));
  GradOutput three = Const({3, 3}, TensorShape({2}));
  GradOutput y1 = Op("Square", {x});
  GradOutput y2 = Op("Mul", {three, x});
  GradOutput y3 = Op("Exp", {y1});  // y1 also feeds y3: its gradient waits for y3's
  auto g = Grads({y1, y2, y3}, {x});
  // 2x + 3 + exp(x^2) 2x
  std::vector<float> v = Eval(g[0]);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_NEAR(v[0], 2 + 3 + std::exp(1.0) * 2, 1e-4);
  EXPECT_NEAR(v[1], 4 + 3 + std::exp(4.0) * 4, 1e-3);
}

TEST_F(GradientsTest, GradYsSeedTheGradient) {
  GradOutput x = Const({1, 2, 3}, TensorShape({3}));
  GradOutput y = Op("Square", {x});
  GradOutput gy = Const({1, 10, 100}, TensorShape({3}));
  auto g = Grads({y}, {x}, {gy});
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{2, 40, 600}));
}

TEST_F(GradientsTest, StopGradientStopsIt) {
  if (!Has("StopGradient")) GTEST_SKIP() << "StopGradient not registered yet";
  GradOutput x = Const({1, 2, 3}, TensorShape({3}));
  GradOutput y = Op("Mul", {x, Op("StopGradient", {x})});  // d/dx = stop(x) = x
  auto g = Grads({y}, {x});
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{1, 2, 3}));
  // Only through StopGradient: no gradient at all.
  GradOutput z = Op("Square", {Op("StopGradient", {x})});
  EXPECT_FALSE(Grads({z}, {x})[0].valid());
}

TEST_F(GradientsTest, StopGradientsOption) {
  GradOutput x = Const({1, 2, 3}, TensorShape({3}));
  GradOutput a = Op("Square", {x});
  GradOutput y = Op("Mul", {a, x});  // x^3, but with a held constant: d/dx = a = x^2
  SymbolicGradientOptions opts;
  opts.stop_gradients = {a};
  std::vector<GradOutput> g;
  ASSERT_TRUE(AddSymbolicGradients(&g_, {y}, {x, a}, {}, opts, &g).ok());
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{1, 4, 9}));
  EXPECT_EQ(Eval(g[1]), (std::vector<float>{1, 2, 3}));  // the stopped tensor still gets dy/da
}

TEST_F(GradientsTest, IntegerTensorsStopTheFlow) {
  GradOutput x = Const({1.5f, -2.5f}, TensorShape({2}));
  GradOutput xi = Op("Cast", {x}, {{"DstT", MakeAttr(DT_INT32)}});
  GradOutput back = Op("Cast", {xi}, {{"DstT", MakeAttr(DT_FLOAT)}});
  GradOutput y = Op("Mul", {back, x});  // d/dx = back (the integer path adds nothing)
  auto g = Grads({y}, {x, xi});
  ASSERT_TRUE(g[0].valid());
  EXPECT_FALSE(g[1].valid());  // an integer x gets no gradient
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{1, -2}));
  // Only through the integer path: none.
  EXPECT_FALSE(Grads({back}, {x})[0].valid());
}

TEST_F(GradientsTest, NoGradientOpStopsTheFlow) {
  GradOutput x = Const({1, 2}, TensorShape({2}));
  GradOutput y = Op("Mul", {Op("OnesLike", {x}), Op("Exp", {Op("ZerosLike", {x})})});
  EXPECT_FALSE(Grads({y}, {x})[0].valid());
}

TEST_F(GradientsTest, FloatCastIsDifferentiated) {
  GradOutput x = Const({1, 2}, TensorShape({2}));
  GradOutput xd = Op("Cast", {x}, {{"DstT", MakeAttr(DT_DOUBLE)}});
  GradOutput y = Op("Square", {xd});
  auto g = Grads({y}, {x});
  ASSERT_TRUE(g[0].valid());
  EXPECT_EQ(g[0].dtype(), DT_FLOAT);
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{2, 4}));
}

TEST_F(GradientsTest, MatMulChain) {
  // y = (A B) with A [1,2], B [2,2]; grad_ys = ones: dA = ones B^T, dB = A^T ones.
  GradOutput a = Const({1, 2}, TensorShape({1, 2}));
  GradOutput b = Const({1, 2, 3, 4}, TensorShape({2, 2}));
  GradOutput y = Op("MatMul", {a, b});
  auto g = Grads({y}, {a, b});
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{3, 7}));
  EXPECT_EQ(Eval(g[1]), (std::vector<float>{1, 1, 2, 2}));
}

TEST_F(GradientsTest, NodesAreNamedUnderTheGradientScope) {
  GradOutput x = Const({1}, TensorShape({1}));
  GradOutput y = Op("Square", {x});
  auto g1 = Grads({y}, {x});
  auto g2 = Grads({y}, {x});
  EXPECT_TRUE(absl::StartsWith(g1[0].node->name(), "gradients/Square_grad/"))
      << g1[0].node->name();
  EXPECT_TRUE(absl::StartsWith(g2[0].node->name(), "gradients_1/Square_grad/"))
      << g2[0].node->name();
  EXPECT_EQ(Eval(g2[0]), (std::vector<float>{2}));
}

TEST_F(GradientsTest, MissingGradientIsNotFoundNamingTheOp) {
  GradOutput x = Const({1}, TensorShape({1}));
  GradOutput y = Op("TxGradTestNoGrad", {x});
  std::vector<GradOutput> g;
  Status s = AddSymbolicGradients(&g_, {y}, {x}, {}, &g);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_NE(s.message().find("TxGradTestNoGrad"), std::string_view::npos) << s;
  EXPECT_NE(s.message().find(y.node->name()), std::string_view::npos) << s;
}

TEST_F(GradientsTest, BadArguments) {
  GradOutput x = Const({1}, TensorShape({1}));
  GradOutput y = Op("Square", {x});
  std::vector<GradOutput> g;
  EXPECT_EQ(AddSymbolicGradients(&g_, {y}, {GradOutput{}}, {}, &g).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AddSymbolicGradients(&g_, {GradOutput{}}, {x}, {}, &g).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AddSymbolicGradients(&g_, {GradOutput{y.node, 3}}, {x}, {}, &g).code(),
            absl::StatusCode::kInvalidArgument);
  // grad_ys: wrong count, wrong dtype.
  EXPECT_EQ(AddSymbolicGradients(&g_, {y}, {x}, {x, x}, &g).code(),
            absl::StatusCode::kInvalidArgument);
  GradOutput xd = Op("Cast", {x}, {{"DstT", MakeAttr(DT_DOUBLE)}});
  Status s = AddSymbolicGradients(&g_, {y}, {x}, {xd}, &g);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("double"), std::string_view::npos) << s;
}

TEST_F(GradientsTest, OpInfersTypeNumberAndListAttrs) {
  GradOutput x = Const({1, 2}, TensorShape({2}));
  GradOutput xd = Op("Cast", {x}, {{"DstT", MakeAttr(DT_DOUBLE)}});
  auto idn = AddNodeFromInputs(&g_, "scope", "IdentityN", {x, xd});
  ASSERT_TRUE(idn.ok()) << idn.status();
  EXPECT_EQ((*idn)->name(), "scope/IdentityN");
  EXPECT_EQ((*idn)->output_type(0), DT_FLOAT);
  EXPECT_EQ((*idn)->output_type(1), DT_DOUBLE);
  if (Has("AddN")) {
    auto addn = AddNodeFromInputs(&g_, "scope", "AddN", {x, x, x});
    ASSERT_TRUE(addn.ok()) << addn.status();
    int64_t n = 0;
    ASSERT_TRUE(GetNodeAttr((*addn)->def(), "N", &n).ok());
    EXPECT_EQ(n, 3);
  }
  // Mismatched types for one type attr: the edge is rejected, the node removed.
  auto bad = AddNodeFromInputs(&g_, "scope", "Mul", {x, xd});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g_.FindNode("scope/Mul"), nullptr);
  EXPECT_EQ(AddNodeFromInputs(&g_, "", "NoSuchOp", {x}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(AddNodeFromInputs(&g_, "", "Square", {x, x}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorflux
