// Arithmetic simplification (passes/arithmetic_simplifier.cc), dead-node removal
// (passes/dead_node_removal.cc) and fusion (passes/remapper.cc): which nodes each rewrites and
// which it must leave, and the same values with the passes on and off.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pass_test_util.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/passes/pass_util.h"

namespace tensorflux {
namespace {

using pass_test::GraphBuilder;
using pass_test::Only;
using pass_test::Optimize;

const PassSwitches kArith = Only({"arithmetic_optimization", "model_pruning"});

std::string InputName(const Node* n, int i) {
  auto e = n->input_edge(i);
  if (!e.ok()) return "";
  return (*e)->src()->name() + ":" + std::to_string((*e)->src_output());
}

Tensor Floats(std::vector<float> v, TensorShape shape) {
  return Tensor::FromVector<float>(v, shape);
}

TEST(ArithmeticTest, IdentityElementsAndDoubleNegation) {
  GraphBuilder b;
  b.Placeholder("x", PartialTensorShape({2, 3}));
  b.Scalar("one", 1);
  b.Scalar("zero", 0);
  b.Const("ones23", Floats({1, 1, 1, 1, 1, 1}, {2, 3}));
  b.Const("negzero", Floats({-0.0f, -0.0f, -0.0f}, {3}));
  b.Op("m1", "Mul", {"x", "one"});
  // ones23 has x's declared shape, but the _Arg that carries a fed value has no static shape,
  // so the product's shape is not known to equal x's: it stays.
  b.Op("m2", "Mul", {"ones23", "m1"});
  b.Op("a1", "AddV2", {"zero", "m2"});
  b.Op("a2", "Add", {"a1", "negzero"});  // non-scalar zeros, unknown shape: stays
  b.Op("s1", "Sub", {"a1", "zero"});
  b.Op("s2", "Sub", {"zero", "s1"});     // 0 - x is not x
  b.Op("n1", "Neg", {"s1"});
  b.Op("n2", "Neg", {"n1"});
  b.Op("y", "Mul", {"n2", "a2"});
  b.Op("z", "Mul", {"s2", "y"});
  auto o = Optimize(b.def(), {"x"}, {"z"}, {}, kArith);
  for (const char* gone : {"m1", "a1", "s1", "n2"}) EXPECT_EQ(o.Find(gone), nullptr) << gone;
  for (const char* kept : {"m2", "a2", "s2", "y"}) EXPECT_NE(o.Find(kept), nullptr) << kept;
  EXPECT_EQ(InputName(o.Find("m2"), 1), "_arg_x_0_0:0");  // x * 1 -> x
  EXPECT_EQ(InputName(o.Find("a2"), 0), "m2:0");          // 0 + m2 -> m2
  EXPECT_EQ(InputName(o.Find("s2"), 1), "m2:0");          // (0 + m2) - 0 -> m2
  EXPECT_EQ(InputName(o.Find("y"), 0), "m2:0");           // Neg(Neg(s1)) -> s1 -> m2
  EXPECT_EQ(o.Find("n1"), nullptr);                       // dead after that
  EXPECT_EQ(o.stats[2].changes, 4);                       // m1, a1, s1, n2
  Tensor x = Floats({1.5f, -2, 0, 3, 2, 7}, {2, 3});
  pass_test::ExpectSameWithPassesOnAndOff(b.def(), {{"x", x}}, {"z"});
}

TEST(ArithmeticTest, ShapeAndDtypeCare) {
  GraphBuilder c;
  c.Const("x", Floats({1, 2, 3}, {3}));
  c.Const("one1", Floats({1}, {1}));
  c.Op("same", "Mul", {"x", "one1"});  // [3] * [1] is [3]: -> x
  c.Op("out", "Neg", {"same"});
  c.Const("ones", Floats({1, 1, 1, 1, 1, 1}, {2, 3}));
  c.Op("grow", "Mul", {"x", "ones"});  // [3] * [2, 3] is [2, 3]: removing it changes the shape
  c.Op("gout", "Neg", {"grow"});
  c.Const("iv", Tensor::FromVector<int32_t>({4, 5}, TensorShape({2})));
  c.Const("int_one", Tensor::Scalar<int32_t>(1));
  c.Op("imul", "Mul", {"iv", "int_one"}, DT_INT32);  // int32 x * 1 -> x
  c.Op("iout", "Neg", {"imul"}, DT_INT32);
  c.Const("izero", Tensor::Scalar<int32_t>(0));
  c.Op("isub", "Sub", {"izero", "iv"}, DT_INT32);  // 0 - x: not x
  c.Op("isout", "Neg", {"isub"}, DT_INT32);
  auto o = Optimize(c.def(), {}, {"out", "gout", "iout", "isout"}, {}, kArith);
  EXPECT_EQ(o.Find("same"), nullptr);
  EXPECT_EQ(InputName(o.Find("out"), 0), "x:0");
  EXPECT_NE(o.Find("grow"), nullptr);
  EXPECT_EQ(InputName(o.Find("iout"), 0), "iv:0");
  EXPECT_NE(o.Find("isub"), nullptr);
  pass_test::ExpectSameWithPassesOnAndOff(c.def(), {}, {"out", "gout", "iout", "isout"});
}

TEST(ArithmeticTest, IdentityChainsAndTheirLimits) {
  GraphBuilder b;
  b.Placeholder("x", PartialTensorShape({2}));
  b.Op("id1", "Identity", {"x"});
  b.Op("id2", "Identity", {"id1"});
  b.Op("id3", "Identity", {"id2"});  // fetched: kept
  b.Op("after", "NoOp")->add_input("^id2");
  NodeDef* v = b.Op("v", "VariableV2");
  AddNodeAttr("dtype", DT_FLOAT, v);
  AddNodeAttr("shape", PartialTensorShape({2}), v);
  b.Op("snap", "Identity", {"v"});  // a snapshot of a variable: kept
  b.Op("read", "Neg", {"snap"});
  auto o = Optimize(b.def(), {"x"}, {"id3", "read"}, {"after"}, kArith);
  EXPECT_EQ(o.Find("id1"), nullptr);
  EXPECT_EQ(o.Find("id2"), nullptr);
  ASSERT_NE(o.Find("id3"), nullptr);
  EXPECT_EQ(InputName(o.Find("id3"), 0), "_arg_x_0_0:0");
  // The control edge from id2 now comes from what id2 forwarded.
  std::vector<std::string> controls;
  for (Node* c : passes::ControlInputs(o.Find("after"))) controls.push_back(c->name());
  EXPECT_EQ(controls, (std::vector<std::string>{"_arg_x_0_0"}));
  EXPECT_NE(o.Find("snap"), nullptr);
}

TEST(DeadNodeRemovalTest, KeepsStatefulAndPreserved) {
  GraphBuilder b;
  b.Placeholder("x", PartialTensorShape({}));
  b.Scalar("one", 1);
  b.Op("m", "Mul", {"x", "one"});
  b.Const("shape", Tensor::FromVector<int32_t>({2}, TensorShape({1})));
  NodeDef* r = b.Op("r", "RandomUniform", {"shape"});
  r->mutable_attr()->erase("T");
  AddNodeAttr("T", DT_INT32, r);
  AddNodeAttr("dtype", DT_FLOAT, r);
  b.Op("drop", "Mul", {"r", "one"});  // consumer of the random draw, simplified away below
  b.Op("use", "Identity", {"drop"})->add_input("^m");
  b.Op("out", "Neg", {"use"});
  auto o = Optimize(b.def(), {"x"}, {"out"}, {}, Only({"arithmetic_optimization", "model_pruning"}));
  // m, drop, use forwarded; "one" dead; r is stateful and consumed: stays.
  EXPECT_EQ(o.Find("m"), nullptr);
  EXPECT_EQ(o.Find("one"), nullptr);
  EXPECT_NE(o.Find("r"), nullptr);
  EXPECT_EQ(InputName(o.Find("out"), 0), "r:0");
}

// ---------------------------------------------------------------- fusion

// Kernels of the unfused chain (never run) on a device type that has no _FusedMatMul.
class NeverRun : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    ctx->SetStatus(errors::Internal("test kernel ran"));
  }
};
REGISTER_KERNEL_BUILDER(Name("MatMul").Device("TX_TEST_NO_FUSED"), NeverRun);
REGISTER_KERNEL_BUILDER(Name("BiasAdd").Device("TX_TEST_NO_FUSED"), NeverRun);
REGISTER_KERNEL_BUILDER(Name("Relu").Device("TX_TEST_NO_FUSED"), NeverRun);
REGISTER_KERNEL_BUILDER(Name("MaxPoolGrad").Device("TX_TEST_NO_FUSED"), NeverRun);
REGISTER_KERNEL_BUILDER(Name("ReluGrad").Device("TX_TEST_NO_FUSED"), NeverRun);
REGISTER_KERNEL_BUILDER(Name("BiasAddGrad").Device("TX_TEST_NO_FUSED"), NeverRun);

GraphDef DenseGraph(const std::string& act, bool second_consumer) {
  GraphBuilder b;
  b.Placeholder("x", PartialTensorShape({4, 3}));
  b.Const("w", Floats({0.5f, -1, 2, 0.25f, 1, -0.5f, -2, 1.5f, 0.75f, -0.25f, 3, 1}, {3, 4}));
  b.Const("bias", Floats({0.1f, -0.2f, 0.3f, -3}, {4}));
  b.Op("mm", "MatMul", {"x", "w"});
  b.Op("ba", "BiasAdd", {"mm", "bias"});
  std::string last = "ba";
  if (!act.empty()) {
    b.Op("act", act, {"ba"});
    last = "act";
  }
  b.Op("out", "Neg", {last});
  if (second_consumer) b.Op("peek", "Neg", {"mm"});
  return b.def();
}

TEST(RemapperTest, FusesMatMulBiasAddActivation) {
  Tensor x = Floats({1, 2, 3, -1, 0, 4, 0.5f, -2, 1, 3, 3, -3}, {4, 3});
  for (const std::string act : {"", "Relu", "Relu6", "Elu"}) {
    SCOPED_TRACE(act);
    auto o = Optimize(DenseGraph(act, false), {"x"}, {"out"}, {}, Only({"remapping"}));
    const Node* f = o.Find(act.empty() ? "ba" : "act");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->type_string(), "_FusedMatMul");
    EXPECT_EQ(o.Find("mm"), nullptr);
    std::vector<std::string> ops;
    ASSERT_TRUE(GetNodeAttr(f->def(), "fused_ops", &ops).ok());
    std::vector<std::string> want = {"BiasAdd"};
    if (!act.empty()) want.push_back(act);
    EXPECT_EQ(ops, want);
    EXPECT_EQ(InputName(f, 0), "_arg_x_0_0:0");
    EXPECT_EQ(InputName(f, 1), "w:0");
    EXPECT_EQ(InputName(f, 2), "bias:0");
    EXPECT_EQ(InputName(o.Find("out"), 0), f->name() + ":0");
    if (act != "Elu") {  // Elu may differ in the last bit (fused_epilogue.h)
      pass_test::ExpectSameWithPassesOnAndOff(DenseGraph(act, false), {{"x", x}}, {"out"});
    }
  }
}

TEST(RemapperTest, IntermediatesWithOtherUsersAreNotFused) {
  // mm has a second consumer: nothing fuses.
  auto o = Optimize(DenseGraph("Relu", true), {"x"}, {"out", "peek"}, {}, Only({"remapping"}));
  EXPECT_EQ(o.Count("_FusedMatMul"), 0);
  // ba is fetched: MatMul + BiasAdd fuse (keeping ba's name), the Relu stays apart.
  auto f = Optimize(DenseGraph("Relu", false), {"x"}, {"out", "ba"}, {}, Only({"remapping"}));
  ASSERT_NE(f.Find("ba"), nullptr);
  EXPECT_EQ(f.Find("ba")->type_string(), "_FusedMatMul");
  EXPECT_EQ(f.Find("act")->type_string(), "Relu");
  // mm is fetched: nothing fuses.
  auto m = Optimize(DenseGraph("Relu", false), {"x"}, {"out", "mm"}, {}, Only({"remapping"}));
  EXPECT_EQ(m.Count("_FusedMatMul"), 0);
  // The Relu is colocated elsewhere: MatMul + BiasAdd fuse, the Relu stays apart.
  GraphDef colocated = DenseGraph("Relu", false);
  for (NodeDef& n : *colocated.mutable_node()) {
    if (n.name() == "act") AddNodeAttr("_class", std::vector<std::string>{"loc:@w"}, &n);
  }
  auto c = Optimize(colocated, {"x"}, {"out"}, {}, Only({"remapping"}));
  EXPECT_EQ(c.Find("ba")->type_string(), "_FusedMatMul");
  EXPECT_EQ(c.Find("act")->type_string(), "Relu");
  // A device type with kernels for MatMul, BiasAdd and Relu but none for _FusedMatMul (as a GPU
  // without the fused kernel): no fusion. A device type with none of them does not matter.
  OptimizerContext ctx = OptimizerContext::ForSignature({"x"}, {"out"}, {});
  ctx.device_types = {"CPU", "TX_TEST_NO_FUSED"};
  auto d = Optimize(DenseGraph("Relu", false), {"x"}, {"out"}, {}, Only({"remapping"}), &ctx);
  EXPECT_EQ(d.Count("_FusedMatMul"), 0);
  ctx.device_types = {"CPU", "TX_TEST_NO_KERNELS"};
  auto e = Optimize(DenseGraph("Relu", false), {"x"}, {"out"}, {}, Only({"remapping"}), &ctx);
  EXPECT_EQ(e.Count("_FusedMatMul"), 1);
}

GraphDef ConvGraph(const std::string& conv_format, const std::string& bias_format) {
  GraphBuilder b;
  const bool nchw = conv_format == "NCHW";
  b.Placeholder("x", nchw ? PartialTensorShape({2, 3, 5, 5}) : PartialTensorShape({2, 5, 5, 3}));
  std::vector<float> fv(3 * 3 * 3 * 4);
  for (size_t i = 0; i < fv.size(); ++i) fv[i] = 0.05f * static_cast<float>(i % 11) - 0.2f;
  b.Const("f", Floats(fv, {3, 3, 3, 4}));
  b.Const("bias", Floats({0.5f, -0.5f, 0, 1}, {4}));
  NodeDef* conv = b.Op("conv", "Conv2D", {"x", "f"});
  AddNodeAttr("strides", std::vector<int64_t>{1, 1, 1, 1}, conv);
  AddNodeAttr("padding", std::string("SAME"), conv);
  AddNodeAttr("data_format", conv_format, conv);
  AddNodeAttr("data_format", bias_format, b.Op("ba", "BiasAdd", {"conv", "bias"}));
  b.Op("act", "Relu", {"ba"});
  return b.def();
}

TEST(RemapperTest, FusesConv2DBiasAddRelu) {
  auto o = Optimize(ConvGraph("NHWC", "NHWC"), {"x"}, {"act"}, {}, Only({"remapping"}));
  ASSERT_NE(o.Find("act"), nullptr);
  EXPECT_EQ(o.Find("act")->type_string(), "_FusedConv2D");
  EXPECT_EQ(o.graph->num_nodes(), 5);  // _Arg, f, bias, act, _Retval
  std::string padding;
  ASSERT_TRUE(GetNodeAttr(o.Find("act")->def(), "padding", &padding).ok());
  EXPECT_EQ(padding, "SAME");
  // Layouts that differ are not fused.
  auto mixed = Optimize(ConvGraph("NCHW", "NHWC"), {"x"}, {"act"}, {}, Only({"remapping"}));
  EXPECT_EQ(mixed.Count("_FusedConv2D"), 0);

  std::vector<float> xv(2 * 5 * 5 * 3);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = 0.1f * static_cast<float>(i % 13) - 0.6f;
  for (const char* format : {"NHWC", "NCHW"}) {
    SCOPED_TRACE(format);
    const bool nchw = std::string(format) == "NCHW";
    Tensor x = Floats(xv, nchw ? TensorShape({2, 3, 5, 5}) : TensorShape({2, 5, 5, 3}));
    auto fused = Optimize(ConvGraph(format, format), {"x"}, {"act"}, {}, Only({"remapping"}));
    EXPECT_EQ(fused.Count("_FusedConv2D"), 1);
    pass_test::ExpectSameWithPassesOnAndOff(ConvGraph(format, format), {{"x", x}}, {"act"});
  }
}

// The gradient of Relu -> MaxPool (-> a bias before the ReLU):
// MaxPoolGrad(y, p, g) -> ReluGrad(., y) -> BiasAddGrad. `k` x `k` windows moved by `s`;
// `features` is the ReluGrad's second input.
GraphDef PoolGradGraph(int k, int s, const std::string& features = "y") {
  GraphBuilder b;
  b.Placeholder("x", PartialTensorShape({2, 4, 4, 3}));
  const int64_t out = (4 - k) / s + 1;
  b.Placeholder("g", PartialTensorShape({2, out, out, 3}));
  b.Op("y", "Relu", {"x"});
  auto window = [&](NodeDef* n) {
    AddNodeAttr("ksize", std::vector<int64_t>{1, k, k, 1}, n);
    AddNodeAttr("strides", std::vector<int64_t>{1, s, s, 1}, n);
    AddNodeAttr("padding", std::string("VALID"), n);
  };
  window(b.Op("p", "MaxPool", {"y"}));
  window(b.Op("mpg", "MaxPoolGrad", {"y", "p", "g"}));
  b.Op("rg", "ReluGrad", {"mpg", features});
  b.Op("bg", "BiasAddGrad", {"rg"});
  b.Op("out", "Neg", {"rg"});
  b.Op("outb", "Neg", {"bg"});
  return b.def();
}

TEST(RemapperTest, FusesMaxPoolGradReluGradBiasAddGrad) {
  auto o = Optimize(PoolGradGraph(2, 2), {"x", "g"}, {"out", "outb"}, {}, Only({"remapping"}));
  ASSERT_NE(o.Find("rg"), nullptr);
  EXPECT_EQ(o.Find("rg")->type_string(), "_FusedMaxPoolGrad");
  EXPECT_EQ(o.Find("mpg"), nullptr);
  EXPECT_EQ(o.Find("bg"), nullptr);
  EXPECT_EQ(InputName(o.Find("rg"), 0), "y:0");
  EXPECT_EQ(InputName(o.Find("rg"), 1), "p:0");
  EXPECT_EQ(InputName(o.Find("rg"), 2), "_arg_g_0_1:0");
  EXPECT_EQ(InputName(o.Find("out"), 0), "rg:0");
  EXPECT_EQ(InputName(o.Find("outb"), 0), "rg:1");
  std::vector<int64_t> strides;
  ASSERT_TRUE(GetNodeAttr(o.Find("rg")->def(), "strides", &strides).ok());
  EXPECT_EQ(strides, std::vector<int64_t>({1, 2, 2, 1}));

  // Values on a grid: ties, zeros and negatives; the bias sums are exact, so the same bits.
  std::vector<float> xv(2 * 4 * 4 * 3), gv(2 * 2 * 2 * 3);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = 0.5f * static_cast<float>((i * 7) % 9) - 2;
  for (size_t i = 0; i < gv.size(); ++i) gv[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
  pass_test::ExpectSameWithPassesOnAndOff(
      PoolGradGraph(2, 2), {{"x", Floats(xv, {2, 4, 4, 3})}, {"g", Floats(gv, {2, 2, 2, 3})}},
      {"out", "outb"});

  // The BiasAddGrad is fetched: the fused node leaves it apart, reading output 0.
  auto f = Optimize(PoolGradGraph(2, 2), {"x", "g"}, {"out", "bg"}, {}, Only({"remapping"}));
  EXPECT_EQ(f.Find("rg")->type_string(), "_FusedMaxPoolGrad");
  ASSERT_NE(f.Find("bg"), nullptr);
  EXPECT_EQ(InputName(f.Find("bg"), 0), "rg:0");
}

TEST(RemapperTest, MaxPoolGradChainsThatDoNotFuse) {
  // Overlapping windows (3x3 moved by 1).
  auto overlap =
      Optimize(PoolGradGraph(3, 1), {"x", "g"}, {"out", "outb"}, {}, Only({"remapping"}));
  EXPECT_EQ(overlap.Count("_FusedMaxPoolGrad"), 0);
  // The ReluGrad's features are not the pooled tensor.
  auto other = Optimize(PoolGradGraph(2, 2, "x"), {"x", "g"}, {"out", "outb"}, {},
                        Only({"remapping"}));
  EXPECT_EQ(other.Count("_FusedMaxPoolGrad"), 0);
  // The MaxPoolGrad is fetched.
  auto fetched = Optimize(PoolGradGraph(2, 2), {"x", "g"}, {"out", "mpg"}, {}, Only({"remapping"}));
  EXPECT_EQ(fetched.Count("_FusedMaxPoolGrad"), 0);
  // A device type with the unfused kernels but not the fused one.
  OptimizerContext ctx = OptimizerContext::ForSignature({"x", "g"}, {"out", "outb"}, {});
  ctx.device_types = {"CPU", "TX_TEST_NO_FUSED"};
  auto d = Optimize(PoolGradGraph(2, 2), {"x", "g"}, {"out", "outb"}, {}, Only({"remapping"}),
                    &ctx);
  EXPECT_EQ(d.Count("_FusedMaxPoolGrad"), 0);
}

}  // namespace
}  // namespace tensorflux
