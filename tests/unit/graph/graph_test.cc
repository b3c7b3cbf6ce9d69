// Graph, Node and Edge: node validation, edge checks, removal, export and cloning.
#include "tensorflux/graph/graph.h"

#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "graph_test_util.h"
#include "tensorflux/framework/node_def_util.h"

namespace tensorflux {
namespace {

using ::tensorflux::testing::InputOf;
using ::tensorflux::testing::NodeNames;

NodeDef Def(const std::string& name, const std::string& op) {
  NodeDef d;
  d.set_name(name);
  d.set_op(op);
  return d;
}

NodeDef Binary(const std::string& name, DataType t = DT_FLOAT) {
  NodeDef d = Def(name, "TxGraphTestBinary");
  AddNodeAttr("T", t, &d);
  return d;
}

Node* Add(Graph* g, NodeDef d) {
  auto n = g->AddNode(std::move(d));
  EXPECT_TRUE(n.ok()) << n.status();
  return n.ok() ? *n : nullptr;
}

TEST(GraphTest, AddNodeFillsDefaultsAndComputesTypes) {
  Graph g;
  Node* s = Add(&g, Def("s", "TxGraphTestSource"));
  ASSERT_NE(s, nullptr);
  ASSERT_NE(s->attr("value"), nullptr);
  EXPECT_EQ(s->attr("value")->i(), 7);
  EXPECT_EQ(s->num_inputs(), 0);
  ASSERT_EQ(s->num_outputs(), 1);
  EXPECT_EQ(s->output_type(0), DT_FLOAT);
  EXPECT_TRUE(s->IsStateful());
  EXPECT_EQ(s->id(), 0);
  EXPECT_EQ(g.FindNode("s"), s);
  EXPECT_EQ(g.num_nodes(), 1);

  NodeDef nd = Def("n", "TxGraphTestN");
  AddNodeAttr("N", int64_t{3}, &nd);
  AddNodeAttr("T", DT_INT32, &nd);
  Node* n = Add(&g, nd);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->id(), 1);
  EXPECT_EQ(n->input_types(), DataTypeVector({DT_INT32, DT_INT32, DT_INT32}));
  EXPECT_EQ(n->output_types(), DataTypeVector({DT_INT32}));

  Node* r = Add(&g, Def("r", "TxGraphTestRef"));
  EXPECT_EQ(r->output_type(0), DT_FLOAT_REF);
}

TEST(GraphTest, AddNodeIgnoresInputList) {
  Graph g;
  NodeDef d = Binary("b");
  d.add_input("nowhere");  // one data input where the op takes two: inputs are edges here
  d.add_input("^also_nowhere");
  Node* b = Add(&g, d);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->num_inputs(), 2);
  EXPECT_TRUE(b->in_edges().empty());
}

TEST(GraphTest, AddNodeErrors) {
  Graph g;
  auto unknown = g.AddNode(Def("n", "TxGraphTestNope"));
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(unknown.status().message(), "Op type not registered 'TxGraphTestNope' in node 'n'");

  auto missing = g.AddNode(Def("m", "TxGraphTestBinary"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("'m'"), std::string::npos) << missing.status();
  EXPECT_NE(missing.status().message().find("'T'"), std::string::npos) << missing.status();

  NodeDef bad_type = Def("bt", "TxGraphTestBinary");
  AddNodeAttr("T", int64_t{3}, &bad_type);
  auto ill = g.AddNode(bad_type);
  EXPECT_EQ(ill.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(ill.status().message().find("bt"), std::string::npos) << ill.status();

  auto not_allowed = g.AddNode(Binary("na", DT_DOUBLE));
  EXPECT_EQ(not_allowed.status().code(), absl::StatusCode::kInvalidArgument) << not_allowed.status();

  NodeDef extra = Def("x", "TxGraphTestSource");
  AddNodeAttr("undeclared", int64_t{1}, &extra);
  EXPECT_EQ(g.AddNode(extra).status().code(), absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(g.AddNode(Def("", "TxGraphTestSource")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.AddNode(Def("a:1", "TxGraphTestSource")).status().code(),
            absl::StatusCode::kInvalidArgument);

  ASSERT_TRUE(g.AddNode(Def("s", "TxGraphTestSource")).ok());
  auto dup = g.AddNode(Def("s", "TxGraphTestSource"));
  EXPECT_EQ(dup.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(dup.status().message().find("'s'"), std::string::npos) << dup.status();
  EXPECT_EQ(g.num_nodes(), 1);
}

TEST(GraphTest, AddEdgeChecksRangesAndTypes) {
  Graph g;
  Node* s = Add(&g, Def("s", "TxGraphTestSource"));
  Node* i = Add(&g, Def("i", "TxGraphTestIntSource"));
  Node* b = Add(&g, Binary("b"));

  auto bad_out = g.AddEdge(s, 1, b, 0);
  EXPECT_EQ(bad_out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_out.status().message().find("invalid output 1"), std::string::npos)
      << bad_out.status();
  EXPECT_EQ(g.AddEdge(s, -1, b, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.AddEdge(s, 0, b, 2).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.AddEdge(s, 0, b, -1).status().code(), absl::StatusCode::kInvalidArgument);

  auto mismatch = g.AddEdge(i, 0, b, 0);
  EXPECT_EQ(mismatch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(mismatch.status().message().find("float"), std::string::npos) << mismatch.status();
  EXPECT_NE(mismatch.status().message().find("int32"), std::string::npos) << mismatch.status();
  EXPECT_NE(mismatch.status().message().find("'b'"), std::string::npos) << mismatch.status();

  auto e = g.AddEdge(s, 0, b, 1);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ((*e)->src(), s);
  EXPECT_EQ((*e)->dst(), b);
  EXPECT_EQ((*e)->dst_input(), 1);
  EXPECT_FALSE((*e)->IsControlEdge());
  EXPECT_EQ(g.AddEdge(s, 0, b, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.num_edges(), 1);
  EXPECT_EQ(InputOf(b, 1), "s:0");
  EXPECT_EQ(b->input_edge(0).status().code(), absl::StatusCode::kNotFound);
}

TEST(GraphTest, RefEdges) {
  Graph g;
  Node* r = Add(&g, Def("r", "TxGraphTestRef"));
  Node* s = Add(&g, Def("s", "TxGraphTestSource"));
  Node* b = Add(&g, Binary("b"));
  Node* assign = Add(&g, Def("assign", "TxGraphTestRefIn"));
  // A ref output may feed a non-ref input of the same base type...
  EXPECT_TRUE(g.AddEdge(r, 0, b, 0).ok());
  // ...and a ref input.
  EXPECT_TRUE(g.AddEdge(r, 0, assign, 0).ok());
  EXPECT_TRUE(g.AddEdge(s, 0, assign, 1).ok());
  // A ref input needs a ref output.
  Node* assign2 = Add(&g, Def("assign2", "TxGraphTestRefIn"));
  auto e = g.AddEdge(s, 0, assign2, 0);
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(e.status().message().find("float_ref"), std::string::npos) << e.status();
}

TEST(GraphTest, ControlEdgesAreNotDuplicated) {
  Graph g;
  Node* a = Add(&g, Def("a", "TxGraphTestNoOp"));
  Node* c = Add(&g, Def("c", "TxGraphTestNoOp"));
  const Edge* e1 = g.AddControlEdge(a, c);
  const Edge* e2 = g.AddControlEdge(a, c);
  EXPECT_EQ(e1, e2);
  EXPECT_TRUE(e1->IsControlEdge());
  EXPECT_EQ(e1->src_output(), kControlSlot);
  EXPECT_EQ(g.num_edges(), 1);
  EXPECT_EQ(a->out_edges().size(), 1u);
  EXPECT_EQ(c->in_edges().size(), 1u);
}

TEST(GraphTest, RemoveNodeAndEdges) {
  Graph g;
  Node* s = Add(&g, Def("s", "TxGraphTestSource"));
  Node* b = Add(&g, Binary("b"));
  Node* k = Add(&g, Def("k", "TxGraphTestSink"));
  ASSERT_TRUE(g.AddEdge(s, 0, b, 0).ok());
  ASSERT_TRUE(g.AddEdge(s, 0, b, 1).ok());
  ASSERT_TRUE(g.AddEdge(b, 0, k, 0).ok());
  g.AddControlEdge(s, k);
  EXPECT_EQ(g.num_edges(), 4);

  g.RemoveNode(b);
  EXPECT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(g.num_edges(), 1);
  EXPECT_EQ(g.FindNode("b"), nullptr);
  EXPECT_EQ(g.FindNodeId(1), nullptr);
  EXPECT_EQ(g.num_node_ids(), 3);
  EXPECT_EQ(NodeNames(g), std::vector<std::string>({"s", "k"}));
  ASSERT_EQ(s->out_edges().size(), 1u);
  EXPECT_TRUE(s->out_edges()[0]->IsControlEdge());
  ASSERT_EQ(k->in_edges().size(), 1u);

  g.RemoveEdge(k->in_edges()[0]);
  EXPECT_EQ(g.num_edges(), 0);
  EXPECT_TRUE(s->out_edges().empty());
  // The freed name can be reused; ids are not.
  Node* b2 = Add(&g, Binary("b"));
  EXPECT_EQ(b2->id(), 3);
}

TEST(GraphTest, UpdateEdge) {
  Graph g;
  Node* s1 = Add(&g, Def("s1", "TxGraphTestSource"));
  Node* s2 = Add(&g, Def("s2", "TxGraphTestSource"));
  Node* i = Add(&g, Def("i", "TxGraphTestIntSource"));
  Node* b = Add(&g, Binary("b"));
  ASSERT_TRUE(g.AddEdge(s1, 0, b, 0).ok());
  ASSERT_TRUE(g.UpdateEdge(s2, 0, b, 0).ok());
  EXPECT_EQ(InputOf(b, 0), "s2:0");
  EXPECT_TRUE(s1->out_edges().empty());
  // Unconnected input: UpdateEdge connects it.
  ASSERT_TRUE(g.UpdateEdge(s1, 0, b, 1).ok());
  EXPECT_EQ(InputOf(b, 1), "s1:0");
  // A failed update keeps the old connection.
  EXPECT_EQ(g.UpdateEdge(i, 0, b, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(InputOf(b, 0), "s2:0");
  EXPECT_EQ(g.num_edges(), 2);
}

TEST(GraphTest, NewName) {
  Graph g;
  EXPECT_EQ(g.NewName("x"), "x");
  Add(&g, Def("x", "TxGraphTestNoOp"));
  Add(&g, Def("x_1", "TxGraphTestNoOp"));
  EXPECT_EQ(g.NewName("x"), "x_2");
}

// Builds s, t (sources), sp = Split(s), b = Binary(sp:1, t), k = Sink(b) ^s ^t.
std::unique_ptr<Graph> BuildSample() {
  auto g = std::make_unique<Graph>();
  Node* s = Add(g.get(), Def("s", "TxGraphTestSource"));
  Node* t = Add(g.get(), Def("t", "TxGraphTestSource"));
  Node* sp = Add(g.get(), Def("sp", "TxGraphTestSplit"));
  Node* b = Add(g.get(), Binary("b"));
  Node* k = Add(g.get(), Def("k", "TxGraphTestSink"));
  EXPECT_TRUE(g->AddEdge(s, 0, sp, 0).ok());
  // Added out of input order on purpose: export orders data inputs by input index.
  EXPECT_TRUE(g->AddEdge(t, 0, b, 1).ok());
  EXPECT_TRUE(g->AddEdge(sp, 1, b, 0).ok());
  g->AddControlEdge(t, k);
  EXPECT_TRUE(g->AddEdge(b, 0, k, 0).ok());
  g->AddControlEdge(s, k);
  VersionDef v;
  v.set_producer(1234);
  v.set_min_consumer(12);
  g->set_versions(v);
  g->mutable_library()->add_function()->mutable_signature()->set_name("f");
  return g;
}

TEST(GraphTest, ToGraphDef) {
  auto g = BuildSample();
  GraphDef gd;
  g->ToGraphDef(&gd);
  ASSERT_EQ(gd.node_size(), 5);
  EXPECT_EQ(gd.versions().producer(), 1234);
  EXPECT_EQ(gd.versions().min_consumer(), 12);
  ASSERT_EQ(gd.library().function_size(), 1);
  EXPECT_EQ(gd.library().function(0).signature().name(), "f");
  EXPECT_EQ(gd.node(0).name(), "s");
  EXPECT_EQ(gd.node(0).attr().at("value").i(), 7);
  EXPECT_EQ(gd.node(2).input_size(), 1);
  EXPECT_EQ(gd.node(2).input(0), "s");
  const NodeDef& b = gd.node(3);
  ASSERT_EQ(b.input_size(), 2);
  EXPECT_EQ(b.input(0), "sp:1");
  EXPECT_EQ(b.input(1), "t");
  const NodeDef& k = gd.node(4);
  ASSERT_EQ(k.input_size(), 3);
  EXPECT_EQ(k.input(0), "b");
  EXPECT_EQ(k.input(1), "^t");
  EXPECT_EQ(k.input(2), "^s");
}

TEST(GraphTest, CloneIsDeepAndEqual) {
  auto g = BuildSample();
  g->RemoveNode(g->FindNode("t"));  // a hole in the ids
  g->FindNode("b")->set_assigned_device_name("/job:localhost/replica:0/task:0/device:CPU:0");
  auto c = g->Clone();
  GraphDef a, b;
  g->ToGraphDef(&a);
  c->ToGraphDef(&b);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(a, b))
      << a.DebugString() << "\nvs\n" << b.DebugString();
  EXPECT_EQ(c->num_nodes(), 4);
  EXPECT_EQ(c->num_edges(), g->num_edges());
  EXPECT_EQ(NodeNames(*c), NodeNames(*g));
  EXPECT_EQ(c->FindNode("b")->assigned_device_name(),
            "/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_NE(c->FindNode("b"), g->FindNode("b"));
  // Editing the clone leaves the original alone.
  c->RemoveNode(c->FindNode("sp"));
  EXPECT_EQ(g->num_nodes(), 4);
  EXPECT_NE(g->FindNode("sp"), nullptr);
  EXPECT_EQ(InputOf(g->FindNode("b"), 0), "sp:1");
}

}  // namespace
}  // namespace tensorflux
