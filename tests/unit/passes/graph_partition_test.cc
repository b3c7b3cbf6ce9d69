// The partitioner: one GraphDef per device, one _Send/_Recv pair per (tensor, destination
// device), control edges carried by a dummy Const, TF's attrs, unique tensor names, and errors
// for unplaced nodes and reference edges between devices. Graphs use the TxGraphTest ops.
#include "tensorflux/passes/graph_partition.h"

#include <set>

#include "gtest/gtest.h"
#include "../graph/graph_test_util.h"

namespace tensorflux {
namespace {

using ::tensorflux::testing::MakeGraph;

constexpr char kD0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kD1[] = "/job:localhost/replica:0/task:0/device:CPU:1";
constexpr char kD2[] = "/job:localhost/replica:0/task:0/device:CPU:2";

// The text of a node on `device`.
std::string N(const std::string& name, const std::string& op, const std::string& device,
              std::initializer_list<std::string> inputs, const std::string& extra = "") {
  std::string s = "node { name: '" + name + "' op: '" + op + "' device: '" + device + "' ";
  for (const auto& in : inputs) s += "input: '" + in + "' ";
  return s + extra + "}\n";
}
const std::string kFloat = "attr { key: 'T' value { type: DT_FLOAT } }";
const std::string kInt = "attr { key: 'T' value { type: DT_INT32 } }";

// Places every node on its requested device.
void PlaceAsRequested(Graph* g) {
  for (Node* n : g->nodes()) n->set_assigned_device_name(n->requested_device());
}

// sp = Split(x) on D0 feeds b1 (twice) and b2 on D1, k on D2 and loc on D0; i (int32) on D1
// feeds bi on D0; control edges b1 -> k, b1 -> n, x -> k cross devices.
std::string TestGraph() {
  return "versions { producer: 27 }\n" + N("x", "TxGraphTestSource", kD0, {}) +
         N("sp", "TxGraphTestSplit", kD0, {"x"}) + N("i", "TxGraphTestIntSource", kD1, {}) +
         N("b1", "TxGraphTestBinary", kD1, {"sp", "sp:0"}, kFloat) +
         N("b2", "TxGraphTestBinary", kD1, {"sp", "sp:1"}, kFloat) +
         N("k", "TxGraphTestSink", kD2, {"sp:1", "^b1", "^x"}) +
         N("loc", "TxGraphTestSink", kD0, {"sp"}) +
         N("bi", "TxGraphTestBinary", kD0, {"i", "i"}, kInt) +
         N("n", "TxGraphTestNoOp", kD2, {"^b1"});
}

const NodeDef* Find(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}
std::vector<const NodeDef*> OfOp(const GraphDef& g, const std::string& op) {
  std::vector<const NodeDef*> out;
  for (const NodeDef& n : g.node()) {
    if (n.op() == op) out.push_back(&n);
  }
  return out;
}
const std::string& S(const NodeDef& n, const char* attr) { return n.attr().at(attr).s(); }

class GraphPartitionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_ = MakeGraph(TestGraph());
    ASSERT_NE(g_, nullptr);
    PlaceAsRequested(g_.get());
    PartitionOptions opts;
    opts.get_incarnation = [](const std::string& d) -> uint64_t {
      return d == kD0 ? 11 : d == kD1 ? 22 : 33;
    };
    Status s = Partition(opts, *g_, &parts_);
    ASSERT_TRUE(s.ok()) << s;
  }
  // The _Recv on `device` whose _Send (found on any device) takes `send_input`.
  const NodeDef* RecvOf(const std::string& send_input, const std::string& device) {
    for (auto& [d, g] : parts_) {
      for (const NodeDef* send : OfOp(g, "_Send")) {
        if (send->input(0) != send_input || S(*send, "recv_device") != device) continue;
        for (const NodeDef* recv : OfOp(parts_.at(device), "_Recv")) {
          if (S(*recv, "tensor_name") == S(*send, "tensor_name")) return recv;
        }
      }
    }
    return nullptr;
  }

  std::unique_ptr<Graph> g_;
  std::map<std::string, GraphDef> parts_;
};

TEST_F(GraphPartitionTest, OneGraphPerDeviceEachValid) {
  ASSERT_EQ(parts_.size(), 3u);
  for (auto& [device, gdef] : parts_) {
    EXPECT_EQ(gdef.versions().producer(), 27);
    for (const NodeDef& n : gdef.node()) EXPECT_EQ(n.device(), device) << n.name();
    auto imported = GraphFromGraphDef(gdef);
    EXPECT_TRUE(imported.ok()) << device << ": " << imported.status();
  }
  for (const char* name : {"x", "sp", "loc", "bi"}) EXPECT_NE(Find(parts_[kD0], name), nullptr);
  for (const char* name : {"i", "b1", "b2"}) EXPECT_NE(Find(parts_[kD1], name), nullptr);
  for (const char* name : {"k", "n"}) EXPECT_NE(Find(parts_[kD2], name), nullptr);
}

TEST_F(GraphPartitionTest, OneSendPerTensorAndDestination) {
  // D0 sends sp:0 and sp:1 to D1, sp:1 to D2 and x's control to D2; D1 sends i to D0 and b1's
  // control to D2.
  EXPECT_EQ(OfOp(parts_[kD0], "_Send").size(), 4u);
  EXPECT_EQ(OfOp(parts_[kD1], "_Send").size(), 2u);
  EXPECT_EQ(OfOp(parts_[kD2], "_Send").size(), 0u);
  EXPECT_EQ(OfOp(parts_[kD0], "_Recv").size(), 1u);
  EXPECT_EQ(OfOp(parts_[kD1], "_Recv").size(), 2u);
  EXPECT_EQ(OfOp(parts_[kD2], "_Recv").size(), 3u);

  const NodeDef* sp0_on_d1 = RecvOf("sp", kD1);
  const NodeDef* sp1_on_d1 = RecvOf("sp:1", kD1);
  const NodeDef* sp1_on_d2 = RecvOf("sp:1", kD2);
  ASSERT_NE(sp0_on_d1, nullptr);
  ASSERT_NE(sp1_on_d1, nullptr);
  ASSERT_NE(sp1_on_d2, nullptr);
  const NodeDef* b1 = Find(parts_[kD1], "b1");
  const NodeDef* b2 = Find(parts_[kD1], "b2");
  ASSERT_EQ(b1->input_size(), 2);
  EXPECT_EQ(b1->input(0), sp0_on_d1->name());
  EXPECT_EQ(b1->input(1), sp0_on_d1->name());
  EXPECT_EQ(b2->input(0), sp0_on_d1->name());
  EXPECT_EQ(b2->input(1), sp1_on_d1->name());
  EXPECT_EQ(Find(parts_[kD2], "k")->input(0), sp1_on_d2->name());
  EXPECT_EQ(Find(parts_[kD0], "loc")->input(0), "sp");  // local edge unchanged
  const NodeDef* i_on_d0 = RecvOf("i", kD0);
  ASSERT_NE(i_on_d0, nullptr);
  EXPECT_EQ(i_on_d0->attr().at("tensor_type").type(), DT_INT32);
  EXPECT_EQ(Find(parts_[kD0], "bi")->input(1), i_on_d0->name());
}

TEST_F(GraphPartitionTest, ControlEdgesUseADummyTensor) {
  // x -> k: a Const on D0 with ^x feeds a _Send; the _Recv on D2 is a control input of k.
  auto consts = OfOp(parts_[kD0], "Const");
  ASSERT_EQ(consts.size(), 1u);
  const NodeDef* dummy = consts[0];
  ASSERT_EQ(dummy->input_size(), 1);
  EXPECT_EQ(dummy->input(0), "^x");
  EXPECT_EQ(dummy->attr().at("dtype").type(), DT_FLOAT);
  const TensorProto& value = dummy->attr().at("value").tensor();
  ASSERT_EQ(value.tensor_shape().dim_size(), 1);
  EXPECT_EQ(value.tensor_shape().dim(0).size(), 0);
  const NodeDef* x_on_d2 = RecvOf(dummy->name(), kD2);
  ASSERT_NE(x_on_d2, nullptr);
  EXPECT_EQ(x_on_d2->attr().at("tensor_type").type(), DT_FLOAT);

  // b1 -> k and b1 -> n: one dummy pair for both.
  auto d1_consts = OfOp(parts_[kD1], "Const");
  ASSERT_EQ(d1_consts.size(), 1u);
  EXPECT_EQ(d1_consts[0]->input(0), "^b1");
  const NodeDef* b1_on_d2 = RecvOf(d1_consts[0]->name(), kD2);
  ASSERT_NE(b1_on_d2, nullptr);
  const NodeDef* k = Find(parts_[kD2], "k");
  ASSERT_EQ(k->input_size(), 3);
  std::set<std::string> k_control = {k->input(1), k->input(2)};
  EXPECT_EQ(k_control, (std::set<std::string>{"^" + x_on_d2->name(), "^" + b1_on_d2->name()}));
  const NodeDef* n = Find(parts_[kD2], "n");
  ASSERT_EQ(n->input_size(), 1);
  EXPECT_EQ(n->input(0), "^" + b1_on_d2->name());
}

TEST_F(GraphPartitionTest, SendRecvAttrsAndNames) {
  std::set<std::string> tensor_names;
  int pairs = 0;
  for (auto& [device, gdef] : parts_) {
    for (const NodeDef* send : OfOp(gdef, "_Send")) {
      ++pairs;
      EXPECT_TRUE(tensor_names.insert(S(*send, "tensor_name")).second) << "not unique";
      EXPECT_EQ(S(*send, "tensor_name").rfind("edge_", 0), 0u);
      EXPECT_EQ(S(*send, "send_device"), device);
      EXPECT_EQ(send->attr().at("send_device_incarnation").i(), device == kD0 ? 11 : 22);
      EXPECT_FALSE(send->attr().at("client_terminated").b());
      const std::string& dst = S(*send, "recv_device");
      ASSERT_TRUE(parts_.count(dst));
      const NodeDef* recv = nullptr;
      for (const NodeDef* r : OfOp(parts_[dst], "_Recv")) {
        if (S(*r, "tensor_name") == S(*send, "tensor_name")) recv = r;
      }
      ASSERT_NE(recv, nullptr);
      for (const char* a : {"send_device", "recv_device"}) EXPECT_EQ(S(*recv, a), S(*send, a));
      EXPECT_EQ(recv->attr().at("send_device_incarnation").i(),
                send->attr().at("send_device_incarnation").i());
      EXPECT_EQ(recv->attr().at("tensor_type").type(), send->attr().at("T").type());
      EXPECT_EQ(recv->input_size(), 0);
      // Named after the sent node: "<src>/_<n>"; the tensor name ends with "_<src>".
      const std::string src = send->input(0);
      const std::string src_node = src.substr(0, src.find(':'));
      const NodeDef* src_def = Find(gdef, src_node);
      ASSERT_NE(src_def, nullptr);
      const std::string origin =
          src_def->op() == "Const" ? src_def->input(0).substr(1) : src_node;
      EXPECT_EQ(send->name().rfind(origin + "/_", 0), 0u) << send->name();
      EXPECT_EQ(recv->name().rfind(origin + "/_", 0), 0u) << recv->name();
      const std::string& tn = S(*send, "tensor_name");
      EXPECT_EQ(tn.substr(tn.size() - origin.size() - 1), "_" + origin);
    }
  }
  EXPECT_EQ(pairs, 6);
}

TEST(GraphPartitionErrors, NodeWithoutDevice) {
  auto g = MakeGraph(N("x", "TxGraphTestSource", kD0, {}) + N("s", "TxGraphTestSink", "", {"x"}));
  ASSERT_NE(g, nullptr);
  PlaceAsRequested(g.get());
  std::map<std::string, GraphDef> parts;
  Status s = Partition({}, *g, &parts);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("{{node s}}"), std::string::npos) << s;
}

TEST(GraphPartitionErrors, ReferenceEdgeAcrossDevices) {
  auto g = MakeGraph(N("v", "TxGraphTestRef", kD0, {}) + N("x", "TxGraphTestSource", kD1, {}) +
                     N("assign", "TxGraphTestRefIn", kD1, {"v", "x"}));
  ASSERT_NE(g, nullptr);
  PlaceAsRequested(g.get());
  std::map<std::string, GraphDef> parts;
  Status s = Partition({}, *g, &parts);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("{{node assign}}"), std::string::npos) << s;
  EXPECT_NE(std::string(s.message()).find("by reference"), std::string::npos) << s;
}

TEST(GraphPartitionErrors, RefOutputIntoValueInputSendsTheValue) {
  auto g = MakeGraph(N("v", "TxGraphTestRef", kD0, {}) + N("read", "TxGraphTestSink", kD1, {"v"}));
  ASSERT_NE(g, nullptr);
  PlaceAsRequested(g.get());
  std::map<std::string, GraphDef> parts;
  ASSERT_TRUE(Partition({}, *g, &parts).ok());
  auto sends = OfOp(parts[kD0], "_Send");
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(sends[0]->attr().at("T").type(), DT_FLOAT);  // the base type
  EXPECT_EQ(sends[0]->attr().at("send_device_incarnation").i(), 1);  // the default
  for (auto& [d, gdef] : parts) EXPECT_TRUE(GraphFromGraphDef(gdef).ok()) << d;
}

TEST(GraphPartitionErrors, NewNamesAvoidExistingNodes) {
  // "x/_0" is taken by a node of the graph, so the pair gets the next names.
  auto g = MakeGraph(N("x", "TxGraphTestSource", kD0, {}) +
                     N("x/_0", "TxGraphTestSource", kD0, {}) +
                     N("s", "TxGraphTestSink", kD1, {"x"}));
  ASSERT_NE(g, nullptr);
  PlaceAsRequested(g.get());
  std::map<std::string, GraphDef> parts;
  ASSERT_TRUE(Partition({}, *g, &parts).ok());
  EXPECT_EQ(OfOp(parts[kD0], "_Send")[0]->name(), "x/_1");
  EXPECT_EQ(OfOp(parts[kD1], "_Recv")[0]->name(), "x/_2");
}

}  // namespace
}  // namespace tensorflux
