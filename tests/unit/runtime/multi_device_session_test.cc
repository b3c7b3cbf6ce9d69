// LocalSession over several CPU devices (ConfigProto.device_count): results match one device,
// feeds and fetches work on any device, cross-device control edges order nodes, partition graphs
// come back in RunMetadata, a failing partition aborts the others (also one waiting in a _Recv)
// and the step returns that error, timeouts, concurrent steps; and the _Send/_Recv kernels' own
// errors. Graphs use the TxRtTest ops (runtime_test_ops.h).
#include <atomic>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime_test_ops.h"
#include "tensorflux/devices/cpu_device.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/runtime/executor.h"
#include "tensorflux/runtime/local_session.h"
#include "tensorflux/runtime/rendezvous.h"

namespace tensorflux {
namespace {

using rt_test::AddConst;
using rt_test::AddNode;

std::string Dev(int i) { return "/job:localhost/replica:0/task:0/device:CPU:" + std::to_string(i); }

NodeDef* On(int device, NodeDef* n) {
  n->set_device(Dev(device));
  return n;
}

std::unique_ptr<LocalSession> MakeSession(const GraphDef& g, int cpus, int inter_op = 0) {
  SessionOptions opts;
  (*opts.config.mutable_device_count())["CPU"] = cpus;
  opts.config.set_inter_op_parallelism_threads(inter_op);
  auto s = std::make_unique<LocalSession>(opts);
  Status st = s->Create(g);
  EXPECT_TRUE(st.ok()) << st;
  return s;
}

bool HasText(const Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

int CountOps(const GraphDef& g, const std::string& op) {
  int n = 0;
  for (const NodeDef& nd : g.node()) n += nd.op() == op;
  return n;
}

// c1 = 2 (D0), c2 = 3 (D1), a = c1 + c2 (D2), b = c1 + c1 (D3), d = a + b (D0),
// x: fed float scalar (D3), y = x + d (D1).
GraphDef SpreadGraph() {
  GraphDef g;
  On(0, AddConst(&g, "c1", 2.0f));
  On(1, AddConst(&g, "c2", 3.0f));
  On(2, AddNode(&g, "a", "TxRtTestAdd", {"c1", "c2"}));
  On(3, AddNode(&g, "b", "TxRtTestAdd", {"c1", "c1"}));
  On(0, AddNode(&g, "d", "TxRtTestAdd", {"a", "b"}));
  NodeDef* x = On(3, AddNode(&g, "x", "Placeholder"));
  AddNodeAttr("dtype", DT_FLOAT, x);
  On(1, AddNode(&g, "y", "TxRtTestAdd", {"x", "d"}));
  return g;
}

Tensor Scalar(float v) { return Tensor::FromVector<float>({v}, TensorShape({})); }

TEST(MultiDeviceSessionTest, SpreadGraphMatchesOneDevice) {
  for (int inter_op : {0, -1}) {  // with an inter-op pool, and all on the calling thread
    auto one = MakeSession(SpreadGraph(), 1, inter_op);
    auto four = MakeSession(SpreadGraph(), 4, inter_op);
    std::vector<Tensor> a, b;
    ASSERT_TRUE(one->Run({{"x", Scalar(0.5f)}}, {"y", "d", "a", "x"}, {}, &a).ok());
    RunOptions ro;
    ro.set_output_partition_graphs(true);
    RunMetadata md;
    Status s = four->Run(ro, {{"x", Scalar(0.5f)}}, {"y", "d", "a", "x"}, {}, &b, &md);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(b.size(), 4u);
    // y = 0.5 + (2 + 3) + (2 + 2)
    const float want[] = {9.5f, 9.0f, 5.0f, 0.5f};
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(a[i].scalar<float>(), want[i]);
      EXPECT_EQ(b[i].scalar<float>(), want[i]);
    }
    // Four partitions; transfers: c1 -> D2, D3; c2 -> D2; a -> D0; b -> D0; d -> D1. The feed
    // of x runs on D1 beside its consumer y, and each fetch beside its producer.
    ASSERT_EQ(md.partition_graphs_size(), 4);
    int sends = 0, recvs = 0;
    for (const GraphDef& g : md.partition_graphs()) {
      sends += CountOps(g, "_Send");
      recvs += CountOps(g, "_Recv");
      ASSERT_GT(g.node_size(), 0);
      for (const NodeDef& n : g.node()) EXPECT_EQ(n.device(), g.node(0).device());
    }
    EXPECT_EQ(sends, 6);
    EXPECT_EQ(recvs, 6);
    EXPECT_EQ(four->NumCachedExecutors(), 1);
  }
}

TEST(MultiDeviceSessionTest, FullTraceHasEveryDeviceAndTransfer) {
  auto s = MakeSession(SpreadGraph(), 4);
  RunOptions ro;
  ro.set_trace_level(RunOptions::FULL_TRACE);
  ro.set_output_partition_graphs(true);
  RunMetadata md;
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(ro, {{"x", Scalar(1.0f)}}, {"y"}, {}, &out, &md).ok());
  std::map<std::string, std::set<std::string>> traced;  // device -> node names run
  for (const DeviceStepStats& d : md.step_stats().dev_stats()) {
    for (const NodeExecStats& n : d.node_stats()) traced[d.device()].insert(n.node_name());
  }
  ASSERT_EQ(traced.size(), 4u);
  int transfers = 0;
  for (const GraphDef& g : md.partition_graphs()) {
    for (const NodeDef& n : g.node()) {
      if (n.op() != "_Send" && n.op() != "_Recv") continue;
      ++transfers;
      EXPECT_TRUE(traced[n.device()].count(n.name())) << n.name() << " on " << n.device();
    }
  }
  EXPECT_EQ(transfers, 12);
}

TEST(MultiDeviceSessionTest, FeedsAndFetchesOnAnyDevice) {
  auto s = MakeSession(SpreadGraph(), 4);
  for (float v : {1.0f, -3.0f}) {
    std::vector<Tensor> out;
    // Feeding d (on D0) cuts a, b and the constants out of the step.
    Status st = s->Run({{"x", Scalar(v)}, {"d", Scalar(100.0f)}}, {"y", "x"}, {}, &out);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(out[0].scalar<float>(), v + 100.0f);
    EXPECT_EQ(out[1].scalar<float>(), v);
  }
  EXPECT_EQ(s->NumCachedExecutors(), 1);
}

TEST(MultiDeviceSessionTest, UnknownDeviceRequestFallsBackToCpu0) {
  GraphDef g;
  AddConst(&g, "c", 4.0f)->set_device("/device:GPU:0");
  On(7, AddNode(&g, "y", "TxRtTestAdd", {"c", "c"}));  // CPU:7 does not exist here
  auto s = MakeSession(g, 2);
  std::vector<Tensor> out;
  RunOptions ro;
  ro.set_output_partition_graphs(true);
  RunMetadata md;
  ASSERT_TRUE(s->Run(ro, {}, {"y"}, {}, &out, &md).ok());
  EXPECT_EQ(out[0].scalar<float>(), 8.0f);
  EXPECT_EQ(md.partition_graphs_size(), 1);
}

TEST(MultiDeviceSessionTest, ControlEdgeAcrossDevices) {
  GraphDef g;
  On(0, AddConst(&g, "c", 1.0f));
  On(1, AddNode(&g, "cnt", "TxRtTestCount", {"c"}));
  On(0, AddNode(&g, "after", "NoOp", {"^cnt"}));
  auto s = MakeSession(g, 2);
  rt_test::ResetCounts();
  RunOptions ro;
  ro.set_output_partition_graphs(true);
  RunMetadata md;
  ASSERT_TRUE(s->Run(ro, {}, {}, {"after"}, nullptr, &md).ok());
  EXPECT_EQ(rt_test::CountOf("cnt"), 1);  // pulled in by the control edge alone
  ASSERT_EQ(md.partition_graphs_size(), 2);
  int consts = 0, dummy_recvs = 0;
  for (const GraphDef& pg : md.partition_graphs()) {
    for (const NodeDef& n : pg.node()) {
      if (n.op() == "Const") {
        ++consts;
        ASSERT_EQ(n.input_size(), 1);
        EXPECT_EQ(n.input(0), "^cnt");
      }
      if (n.name() == "after") {
        ASSERT_EQ(n.input_size(), 1);
        EXPECT_EQ(n.input(0)[0], '^');
        ++dummy_recvs;
      }
    }
  }
  EXPECT_EQ(consts, 1);
  EXPECT_EQ(dummy_recvs, 1);
}

// c (D0) -> slow (D1, sleeps) -> fail (D1); D0 and D2 wait in a _Recv for fail's output.
GraphDef FailingGraph() {
  GraphDef g;
  On(0, AddConst(&g, "c", 1.0f));
  NodeDef* slow = On(1, AddNode(&g, "slow", "TxRtTestSleep", {"c"}));
  AddNodeAttr("ms", int64_t{20}, slow);
  On(1, AddNode(&g, "fail", "TxRtTestFail", {"slow"}));
  On(0, AddNode(&g, "y", "TxRtTestAdd", {"fail", "c"}));
  On(2, AddNode(&g, "z", "TxRtTestAdd", {"fail", "fail"}));
  On(2, AddNode(&g, "ok", "TxRtTestAdd", {"c", "c"}));
  return g;
}

TEST(MultiDeviceSessionTest, FailingPartitionAbortsTheOthers) {
  for (int inter_op : {0, 1, -1}) {
    auto s = MakeSession(FailingGraph(), 3, inter_op);
    for (int i = 0; i < 5; ++i) {
      std::vector<Tensor> out;
      Status st = s->Run({}, {"y", "z", "ok"}, {}, &out);
      EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
      EXPECT_TRUE(HasText(st, "{{node fail}} (op TxRtTestFail): TxRtTestFail failed as asked"))
          << st;
      EXPECT_FALSE(HasText(st, "_Recv")) << st;
    }
    // The session still works afterwards.
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({}, {"ok"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<float>(), 2.0f);
  }
}

TEST(MultiDeviceSessionTest, TimeoutStopsAPartitionWaitingInARecv) {
  GraphDef g;
  On(0, AddConst(&g, "c", 1.0f));
  // Device 1 computes until the step is cancelled; device 0 waits in its Recv meanwhile.
  On(1, AddNode(&g, "slow", "TxRtTestWaitForCancel", {"c"}));
  On(0, AddNode(&g, "y", "TxRtTestAdd", {"slow", "c"}));
  auto s = MakeSession(g, 2);
  RunOptions ro;
  ro.set_timeout_in_ms(20);
  std::vector<Tensor> out;
  Status st = s->Run(ro, {}, {"y"}, {}, &out, nullptr);
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
}

TEST(MultiDeviceSessionTest, ConcurrentSteps) {
  auto s = MakeSession(SpreadGraph(), 4);
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const float v = static_cast<float>(t * 100 + i);
        std::vector<Tensor> out;
        if (s->Run({{"x", Scalar(v)}}, {"y"}, {}, &out).ok() &&
            out[0].scalar<float>() == v + 9.0f) {
          good.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 100);
}

TEST(MultiDeviceSessionTest, ExplicitSendRecvPairOnOneDevice) {
  // A client-built pair runs through the step's rendezvous like a partitioner-made one.
  GraphDef g;
  AddConst(&g, "c", 5.0f);
  auto common = [](NodeDef* n) {
    AddNodeAttr("tensor_name", std::string("t"), n);
    AddNodeAttr("send_device", Dev(0), n);
    AddNodeAttr("recv_device", Dev(0), n);
    AddNodeAttr("send_device_incarnation", int64_t{1}, n);
  };
  NodeDef* send = AddNode(&g, "send", "_Send", {"c"});
  AddNodeAttr("T", DT_FLOAT, send);
  common(send);
  NodeDef* recv = AddNode(&g, "recv", "_Recv");
  AddNodeAttr("tensor_type", DT_FLOAT, recv);
  common(recv);
  AddNode(&g, "y", "TxRtTestAdd", {"recv", "recv"});
  auto s = MakeSession(g, 1);
  std::vector<Tensor> out;
  Status st = s->Run({}, {"y"}, {"send"}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(out[0].scalar<float>(), 10.0f);
}

TEST(MultiDeviceSessionTest, UnmatchedRecvOrDuplicateSendIsRefused) {
  auto attrs = [](NodeDef* n, const char* tensor_name) {
    AddNodeAttr("tensor_name", std::string(tensor_name), n);
    AddNodeAttr("send_device", Dev(0), n);
    AddNodeAttr("recv_device", Dev(0), n);
    AddNodeAttr("send_device_incarnation", int64_t{1}, n);
  };
  GraphDef g;
  AddConst(&g, "c", 5.0f);
  for (const char* name : {"send1", "send2"}) {
    NodeDef* send = AddNode(&g, name, "_Send", {"c"});
    AddNodeAttr("T", DT_FLOAT, send);
    attrs(send, "t");
  }
  NodeDef* lonely = AddNode(&g, "lonely", "_Recv");
  AddNodeAttr("tensor_type", DT_FLOAT, lonely);
  attrs(lonely, "nobody_sends_this");
  auto s = MakeSession(g, 1);
  std::vector<Tensor> out;
  Status st = s->Run({}, {"lonely"}, {}, &out);  // would hang without the check
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "{{node lonely}} (op _Recv) would wait forever")) << st;
  st = s->Run({}, {}, {"send1", "send2"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "same rendezvous key")) << st;
  EXPECT_TRUE(s->Run({}, {}, {"send1"}, &out).ok());
}

// ---------------------------------------------------------------- kernel errors

NodeDef SendRecvDef(const std::string& name, const std::string& op, DataType dt,
                    const std::string& send_device = Dev(0)) {
  NodeDef n;
  n.set_name(name);
  n.set_op(op);
  AddNodeAttr(op == "_Send" ? "T" : "tensor_type", dt, &n);
  AddNodeAttr("tensor_name", std::string("edge_1_c"), &n);
  AddNodeAttr("send_device", send_device, &n);
  AddNodeAttr("recv_device", Dev(1), &n);
  AddNodeAttr("send_device_incarnation", int64_t{1}, &n);
  return n;
}

// Runs `g` on one CPU device through an executor; `rendezvous` may be null.
Status RunExecutor(const GraphDef& gdef, Rendezvous* rendezvous) {
  auto g = GraphFromGraphDef(gdef);
  if (!g.ok()) return g.status();
  CpuDevice device(Dev(0), 1);
  ExecutorParams p;
  p.device = &device;
  auto ex = Executor::Create(p, *std::move(g));
  if (!ex.ok()) return ex.status();
  Executor::Args args;
  args.rendezvous = rendezvous;
  return (*ex)->Run(args);
}

TEST(SendRecvKernelTest, RecvWithoutRendezvousFails) {
  GraphDef g;
  *g.add_node() = SendRecvDef("recv", "_Recv", DT_FLOAT);
  Status s = RunExecutor(g, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_TRUE(HasText(s, "{{node recv}}")) << s;
  EXPECT_TRUE(HasText(s, "rendezvous")) << s;
}

// c = 1 sent by "send" from `send_device`; with a _Recv of `recv_type` when recv_type is set.
GraphDef SendGraph(const std::string& send_device, DataType recv_type = DT_INVALID) {
  GraphDef g;
  AddConst(&g, "c", 1.0f);
  *g.add_node() = SendRecvDef("send", "_Send", DT_FLOAT, send_device);
  g.mutable_node(1)->add_input("c");
  if (recv_type != DT_INVALID) *g.add_node() = SendRecvDef("recv", "_Recv", recv_type);
  return g;
}

TEST(SendRecvKernelTest, BadDeviceAttrIsInvalidArgument) {
  LocalRendezvous r;
  Status s = RunExecutor(SendGraph("cpu0"), &r);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(HasText(s, "{{node send}}")) << s;
  EXPECT_TRUE(HasText(s, "Invalid rendezvous key")) << s;
}

TEST(SendRecvKernelTest, DtypeMismatchNamesTheRecv) {
  LocalRendezvous r;
  Status s = RunExecutor(SendGraph(Dev(0), DT_INT32), &r);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(HasText(s, "{{node recv}}")) << s;
  EXPECT_TRUE(HasText(s, "expected a int32 tensor")) << s;
}

TEST(SendRecvKernelTest, RecvOfADeadTensorIsUnimplemented) {
  GraphDef g;
  *g.add_node() = SendRecvDef("recv", "_Recv", DT_FLOAT);
  LocalRendezvous r;
  auto key = Rendezvous::ParseKey(Rendezvous::CreateKey(Dev(0), 1, Dev(1), "edge_1_c", {}));
  ASSERT_TRUE(key.ok());
  ASSERT_TRUE(r.Send(*key, {}, Scalar(1.0f), /*is_dead=*/true).ok());
  Status s = RunExecutor(g, &r);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_TRUE(HasText(s, "{{node recv}}")) << s;
}

}  // namespace
}  // namespace tensorflux
