// ExtractSubGraph, RemoveTrainingNodes and ConvertVariablesToConstants on hand-written GraphDefs:
// the frozen graph, run in a fresh session without initialization, gives the values the trained
// session gives (and y = x * w + b worked out by hand).
#include <gtest/gtest.h>

#include <google/protobuf/text_format.h>

#include <string>
#include <vector>

#include "tensorflux/runtime/session.h"
#include "tensorflux/train/freeze_graph.h"

namespace tensorflux {
namespace {

GraphDef Parse(const std::string& text) {
  GraphDef g;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &g)) << text;
  return g;
}

// y = x * w + b with resource w (read twice: y and a fetch "w_read") and ref-free b; an
// update node and a CheckNumerics + Identity chain on y.
const char* kGraph = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "w" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: 2 } } } } }
  node { name: "b" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: 2 } } } } }
  node { name: "w_init" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                             float_val: 2 float_val: -3 } } } }
  node { name: "b_init" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                             float_val: 0.5 float_val: 1 } } } }
  node { name: "w_assign" op: "AssignVariableOp" input: "w" input: "w_init"
         attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "b_assign" op: "AssignVariableOp" input: "b" input: "b_init"
         attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "w_read" op: "ReadVariableOp" input: "w"
         attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "mul" op: "Mul" input: "x" input: "w_read" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "b_read" op: "ReadVariableOp" input: "b"
         attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "add" op: "AddV2" input: "mul" input: "b_read" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "check" op: "CheckNumerics" input: "add" attr { key: "T" value { type: DT_FLOAT } }
         attr { key: "message" value { s: "y" } } }
  node { name: "y" op: "Identity" input: "check" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "out" op: "Identity" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "w_bump" op: "AssignAddVariableOp" input: "w" input: "w_init"
         attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "after_bump" op: "Identity" input: "add" input: "^w_bump"
         attr { key: "T" value { type: DT_FLOAT } } }
)pb";

std::vector<std::string> Names(const GraphDef& g) {
  std::vector<std::string> n;
  for (const NodeDef& node : g.node()) n.push_back(node.name());
  return n;
}

std::vector<float> RunOut(Session* s, const std::string& fetch) {
  Tensor x(DT_FLOAT, TensorShape({2}));
  x.data<float>()[0] = 10;
  x.data<float>()[1] = 100;
  std::vector<Tensor> out;
  Status st = s->Run({{"x", x}}, {fetch}, {}, &out);
  EXPECT_TRUE(st.ok()) << st;
  if (!st.ok()) return {};
  return {out[0].data<float>()[0], out[0].data<float>()[1]};
}

TEST(FreezeGraphTest, ExtractSubGraphKeepsOrderAndControlInputs) {
  GraphDef g = Parse(kGraph);
  auto sub = ExtractSubGraph(g, {"after_bump"});
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_EQ(Names(*sub), (std::vector<std::string>{"x", "w", "b", "w_init", "w_read", "mul",
                                                   "b_read", "add", "w_bump", "after_bump"}));
  auto missing = ExtractSubGraph(g, {"nope"});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(std::string(missing.status().message()).find("nope"), std::string::npos);
}

TEST(FreezeGraphTest, RemoveTrainingNodesSplicesChains) {
  auto out = RemoveTrainingNodes(Parse(kGraph), {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto names = Names(*out);
  for (const char* gone : {"check", "y"})
    EXPECT_EQ(std::count(names.begin(), names.end(), gone), 0) << gone;
  // "out" is protected and now reads "add" directly; "after_bump" has a control input: kept.
  for (const NodeDef& n : out->node()) {
    if (n.name() == "out") EXPECT_EQ(n.input(0), "add");
  }
  EXPECT_EQ(std::count(names.begin(), names.end(), "after_bump"), 1);
}

TEST(FreezeGraphTest, FrozenGraphRunsWithoutVariables) {
  auto trained = NewSession(SessionOptions());
  ASSERT_TRUE(trained.ok());
  Session* s = trained->get();
  const GraphDef g = Parse(kGraph);
  ASSERT_TRUE(s->Create(g).ok());
  // Uninitialized: the read fails, and so does freezing.
  auto early = ConvertVariablesToConstants(s, g, {"out"});
  EXPECT_FALSE(early.ok());
  std::vector<Tensor> ignored;
  ASSERT_TRUE(s->Run({}, {}, {"w_assign", "b_assign"}, &ignored).ok());
  ASSERT_TRUE(s->Run({}, {}, {"w_bump"}, &ignored).ok());  // w = 2 * (2, -3) = (4, -6)
  const std::vector<float> want = {10 * 4 + 0.5f, 100 * -6 + 1.0f};
  EXPECT_EQ(RunOut(s, "out:0"), want);

  auto frozen = ConvertVariablesToConstants(s, g, {"out"});
  ASSERT_TRUE(frozen.ok()) << frozen.status();
  for (const NodeDef& n : frozen->node()) {
    EXPECT_NE(n.op(), "VarHandleOp") << n.name();
    EXPECT_NE(n.op(), "ReadVariableOp") << n.name();
    EXPECT_NE(n.op(), "AssignVariableOp") << n.name();
  }
  auto fresh = NewSession(SessionOptions());
  ASSERT_TRUE(fresh.ok());
  ASSERT_TRUE((*fresh)->Create(*frozen).ok());
  EXPECT_EQ(RunOut(fresh->get(), "out:0"), want);

  // b deny-listed stays a variable (and the frozen graph then needs it initialized).
  FreezeOptions keep_b;
  keep_b.variable_names_denylist = {"b"};
  auto partial = ConvertVariablesToConstants(s, g, {"out"}, keep_b);
  ASSERT_TRUE(partial.ok()) << partial.status();
  int handles = 0;
  for (const NodeDef& n : partial->node()) handles += n.op() == "VarHandleOp";
  EXPECT_EQ(handles, 1);
}

TEST(FreezeGraphTest, VariableWithoutReaderAndUpdatesInSubgraph) {
  auto trained = NewSession(SessionOptions());
  ASSERT_TRUE(trained.ok());
  Session* s = trained->get();
  const GraphDef g = Parse(kGraph);
  ASSERT_TRUE(s->Create(g).ok());
  std::vector<Tensor> ignored;
  ASSERT_TRUE(s->Run({}, {}, {"w_assign", "b_assign"}, &ignored).ok());
  // An update in the outputs' subgraph cannot be frozen: the error names it.
  auto bad = ConvertVariablesToConstants(s, g, {"after_bump"});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(bad.status().message()).find("w_bump"), std::string::npos)
      << bad.status();
  // Freezing a handle only (no reader in the graph for "b" if we drop b_read): reads via an
  // added node.
  GraphDef no_reader = g;
  no_reader.clear_node();
  for (const NodeDef& n : g.node())
    if (n.name() != "b_read" && n.name() != "add" && n.name() != "check" && n.name() != "y" &&
        n.name() != "out" && n.name() != "after_bump")
      *no_reader.add_node() = n;
  auto handle_only = ConvertVariablesToConstants(s, no_reader, {"b"});
  ASSERT_TRUE(handle_only.ok()) << handle_only.status();
  ASSERT_EQ(handle_only->node_size(), 1);
  EXPECT_EQ(handle_only->node(0).op(), "Const");
  auto value = Tensor::FromProto(handle_only->node(0).attr().at("value").tensor());
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(value->data<float>()[0], 0.5f);
  EXPECT_EQ(value->data<float>()[1], 1.0f);
}

}  // namespace
}  // namespace tensorflux
