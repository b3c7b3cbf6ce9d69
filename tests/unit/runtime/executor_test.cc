// Executor: dataflow values, errors, cycles, cancellation, tensor release, forwarding, async
// kernels, step stats and concurrent steps. Graphs use the TxRtTest ops (runtime_test_ops.h).
#include "tensorflux/runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "poll_util.h"
#include "runtime_test_ops.h"
#include "tensorflux/devices/cpu_device.h"
#include "tensorflux/graph/graph_def_io.h"

namespace tensorflux {
namespace {

using rt_test::AddConst;
using rt_test::AddNode;
using rt_test::AddRetval;

class ExecutorTest : public ::testing::Test {
 protected:
  ExecutorTest() : device_("/job:localhost/replica:0/task:0/device:CPU:0", 1) {}

  StatusOr<std::unique_ptr<Executor>> Build(const GraphDef& gdef) {
    TX_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, GraphFromGraphDef(gdef));
    ExecutorParams p;
    p.device = &device_;
    return Executor::Create(p, std::move(g));
  }

  // Runs one step and returns the `num_retvals` results.
  StatusOr<std::vector<Tensor>> RunStep(Executor* e, int num_retvals, ThreadPool* pool,
                                        CancellationManager* cm = nullptr,
                                        StepStats* stats = nullptr,
                                        std::vector<Tensor> args = {}) {
    SimpleCallFrame frame(std::move(args), num_retvals);
    Executor::Args a;
    a.call_frame = &frame;
    a.inter_op_pool = pool;
    a.cancellation_manager = cm;
    a.step_stats = stats;
    TX_RETURN_IF_ERROR(e->Run(a));
    std::vector<Tensor> out;
    TX_RETURN_IF_ERROR(frame.ConsumeRetvals(&out));
    return out;
  }

  CpuDevice device_;
  ThreadPool pool_{"test_inter_op", 4};
};

// c1 = 2, c2 = 3; a = c1 + c2 = 5; b = c1 + c1 = 4; d = a + b = 9.
GraphDef Diamond() {
  GraphDef g;
  AddConst(&g, "c1", 2.0f);
  AddConst(&g, "c2", 3.0f);
  AddNode(&g, "a", "TxRtTestAdd", {"c1", "c2"});
  AddNode(&g, "b", "TxRtTestAdd", {"c1", "c1"});
  AddNode(&g, "d", "TxRtTestAdd", {"a", "b"});
  AddRetval(&g, "r0", "d", 0);
  AddRetval(&g, "r1", "a", 1);
  return g;
}

TEST_F(ExecutorTest, DiamondValuesInlineAndOnPool) {
  auto e = Build(Diamond());
  ASSERT_TRUE(e.ok()) << e.status();
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool_}) {
    for (int rep = 0; rep < 3; ++rep) {
      auto out = RunStep(e->get(), 2, pool);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].scalar<float>(), 9.0f);
      EXPECT_EQ((*out)[1].scalar<float>(), 5.0f);
    }
  }
}

TEST_F(ExecutorTest, ArgFeedsTheGraphAndChecksDtype) {
  GraphDef g;
  NodeDef* arg = AddNode(&g, "x", "_Arg");
  AddNodeAttr("T", DT_FLOAT, arg);
  AddNodeAttr("index", int64_t{0}, arg);
  AddNode(&g, "y", "TxRtTestAdd", {"x", "x"});
  AddRetval(&g, "r", "y", 0);
  auto e = Build(g);
  ASSERT_TRUE(e.ok()) << e.status();
  auto out = RunStep(e->get(), 1, nullptr, nullptr, nullptr,
                     {Tensor::FromVector<float>({1.5f, -2.0f}, TensorShape({2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].flat<float>()[0], 3.0f);
  EXPECT_EQ((*out)[0].flat<float>()[1], -4.0f);

  auto bad = RunStep(e->get(), 1, nullptr, nullptr, nullptr, {Tensor::Scalar<int32_t>(1)});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("must be a float tensor, got int32"), std::string::npos)
      << bad.status();
}

TEST_F(ExecutorTest, ErrorStopsTheStepAndNamesTheNode) {
  rt_test::ResetCounts();
  GraphDef g;
  AddConst(&g, "c", 1.0f);
  AddNode(&g, "bad", "TxRtTestFail", {"c"});
  AddNode(&g, "after", "TxRtTestCount", {"bad"});
  AddRetval(&g, "r", "after", 0);
  auto e = Build(g);
  ASSERT_TRUE(e.ok()) << e.status();
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool_}) {
    auto out = RunStep(e->get(), 1, pool);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find("bad"), std::string::npos) << out.status();
    EXPECT_NE(out.status().message().find("TxRtTestFail"), std::string::npos) << out.status();
    EXPECT_NE(out.status().message().find("failed as asked"), std::string::npos);
  }
  EXPECT_EQ(rt_test::CountOf("after"), 0);
}

TEST_F(ExecutorTest, ErrorCancelsTheStepManager) {
  GraphDef g;
  AddConst(&g, "c", 1.0f);
  AddNode(&g, "bad", "TxRtTestFail", {"c"});
  auto e = Build(g);
  ASSERT_TRUE(e.ok());
  CancellationManager cm;
  EXPECT_FALSE(RunStep(e->get(), 0, nullptr, &cm).ok());
  EXPECT_TRUE(cm.IsCancelled());
}

TEST_F(ExecutorTest, MissingOutputIsInternalError) {
  GraphDef g;
  AddNode(&g, "quiet", "TxRtTestNoOutput");
  AddRetval(&g, "r", "quiet", 0);
  auto e = Build(g);
  ASSERT_TRUE(e.ok());
  auto out = RunStep(e->get(), 1, nullptr);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(out.status().message().find("quiet"), std::string::npos) << out.status();
}

TEST_F(ExecutorTest, NodeWithoutKernelFailsAtCreate) {
  GraphDef g;
  AddNode(&g, "nk", "TxRtTestNoKernel");
  auto e = Build(g);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(e.status().message().find("nk"), std::string::npos) << e.status();
}

TEST_F(ExecutorTest, CycleFailsAtCreate) {
  GraphDef g;
  AddConst(&g, "c", 1.0f);
  AddNode(&g, "x", "TxRtTestAdd", {"c", "c"});
  AddNode(&g, "y", "TxRtTestAdd", {"c", "c"});
  AddNode(&g, "z", "TxRtTestCount", {"y"});
  auto g1 = GraphFromGraphDef(g);
  ASSERT_TRUE(g1.ok()) << g1.status();
  Graph* graph = g1->get();
  // Rewire x <- y and y <- x: a cycle the importer would have refused.
  ASSERT_TRUE(graph->UpdateEdge(graph->FindNode("y"), 0, graph->FindNode("x"), 1).ok());
  ASSERT_TRUE(graph->UpdateEdge(graph->FindNode("x"), 0, graph->FindNode("y"), 1).ok());
  ExecutorParams p;
  p.device = &device_;
  auto e = Executor::Create(p, std::move(*g1));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(e.status().message());
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'x'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'y'"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("'z'"), std::string::npos) << msg;
}

// c -> wait (TxRtTestWaitForCancel: returns its input once the step is cancelled) -> end.
GraphDef WaitForCancelGraph() {
  GraphDef g;
  AddConst(&g, "c", 0.0f);
  AddNode(&g, "wait", "TxRtTestWaitForCancel", {"c"});
  AddNode(&g, "end", "TxRtTestCount", {"wait"});
  return g;
}

// A cancellation in the middle of a step (while `wait` runs, however late the canceller's
// thread gets to it) fails the step as CANCELLED and no node runs after it, though `wait`
// itself returned fine.
TEST_F(ExecutorTest, CancellationStopsTheStep) {
  rt_test::ResetCounts();
  auto e = Build(WaitForCancelGraph());
  ASSERT_TRUE(e.ok());
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool_}) {
    rt_test::g_cancel_waiters = 0;
    CancellationManager cm;
    std::thread canceller([&cm] {
      if (test::PollUntil([] { return rt_test::g_cancel_waiters.load() > 0; })) cm.StartCancel();
    });
    auto out = RunStep(e->get(), 0, pool, &cm);
    canceller.join();
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled) << out.status();
  }
  EXPECT_EQ(rt_test::CountOf("end"), 0);
  CancellationManager pre;
  pre.StartCancel();
  auto out = RunStep(e->get(), 0, nullptr, &pre);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled);
}

TEST_F(ExecutorTest, ExpensiveNodesRunInParallelOnThePool) {
  // Four expensive barrier nodes become ready together; each waits until all four are running,
  // which only happens if the executor runs them concurrently (3 on the pool, 1 inline).
  GraphDef g;
  AddConst(&g, "c", 1.0f);
  for (int i = 0; i < 4; ++i) {
    NodeDef* s = AddNode(&g, absl::StrCat("s", i), "TxRtTestBarrier", {"c"});
    AddNodeAttr("n", int64_t{4}, s);
  }
  AddNode(&g, "a", "TxRtTestAdd", {"s0", "s1"});
  AddNode(&g, "b", "TxRtTestAdd", {"s2", "s3"});
  AddNode(&g, "d", "TxRtTestAdd", {"a", "b"});
  AddRetval(&g, "r", "d", 0);
  auto e = Build(g);
  ASSERT_TRUE(e.ok());
  rt_test::g_barrier_arrived = 0;
  auto out = RunStep(e->get(), 1, &pool_);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<float>(), 4.0f);
}

TEST_F(ExecutorTest, IntermediateIsReleasedAfterItsLastConsumer) {
  constexpr int64_t kN = 4 << 20;  // 16 MiB of floats
  GraphDef g;
  NodeDef* big = AddNode(&g, "big", "TxRtTestBig");
  AddNodeAttr("n", kN, big);
  AddNode(&g, "sum1", "TxRtTestSum", {"big"});
  AddNode(&g, "sum2", "TxRtTestSum", {"big"});
  AddNode(&g, "s", "TxRtTestAdd", {"sum1", "sum2"});
  AddNode(&g, "probe", "TxRtTestProbe", {"s"});
  AddRetval(&g, "r", "probe", 0);
  auto e = Build(g);
  ASSERT_TRUE(e.ok());
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool_}) {
    const int64_t before = cpu_allocator()->GetStats().bytes_in_use;
    auto out = RunStep(e->get(), 1, pool);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].scalar<float>(), 2.0f * kN);
    // At the probe, the 16 MiB tensor has been freed (only scalars are live).
    EXPECT_LT(rt_test::g_probe_bytes.load() - before, int64_t{1} << 20);
  }
}

TEST_F(ExecutorTest, LastConsumerGetsTheTensorByMove) {
  GraphDef g;
  NodeDef* b1 = AddNode(&g, "b1", "TxRtTestBig");
  AddNodeAttr("n", int64_t{16}, b1);
  AddNode(&g, "only", "TxRtTestRefCheck", {"b1"});
  NodeDef* b2 = AddNode(&g, "b2", "TxRtTestBig");
  AddNodeAttr("n", int64_t{16}, b2);
  AddNode(&g, "first", "TxRtTestRefCheck", {"b2"});
  AddNode(&g, "second", "TxRtTestRefCheck", {"b2"});
  auto e = Build(g);
  ASSERT_TRUE(e.ok());
  rt_test::g_ref_one = 0;
  rt_test::g_ref_many = 0;
  ASSERT_TRUE(RunStep(e->get(), 0, nullptr).ok());
  // "only" holds b1 alone; of b2's two consumers the first sees a shared buffer and, once it has
  // released its input, the second holds it alone.
  EXPECT_EQ(rt_test::g_ref_one.load(), 2);
  EXPECT_EQ(rt_test::g_ref_many.load(), 1);
}

TEST_F(ExecutorTest, AsyncKernelsInlineAndOnOtherThreads) {
  GraphDef g;
  AddConst(&g, "c", 0.0f);
  std::string prev = "c";
  for (int i = 0; i < 20; ++i) {
    std::string name = absl::StrCat("a", i);
    NodeDef* n = AddNode(&g, name, "TxRtTestAsyncAddOne", {prev});
    AddNodeAttr("on_thread", i % 3 == 0, n);
    prev = name;
  }
  AddRetval(&g, "r", prev, 0);
  auto e = Build(g);
  ASSERT_TRUE(e.ok()) << e.status();
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool_}) {
    auto out = RunStep(e->get(), 1, pool);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].scalar<float>(), 20.0f);
  }
}

TEST_F(ExecutorTest, StepStatsHaveOneEntryPerNode) {
  auto e = Build(Diamond());
  ASSERT_TRUE(e.ok());
  StepStats stats;
  ASSERT_TRUE(RunStep(e->get(), 2, &pool_, nullptr, &stats).ok());
  ASSERT_EQ(stats.dev_stats_size(), 1);
  const DeviceStepStats& d = stats.dev_stats(0);
  EXPECT_EQ(d.device(), device_.name());
  ASSERT_EQ(d.node_stats_size(), 7);
  std::vector<std::string> names;
  for (const auto& ns : d.node_stats()) {
    names.push_back(ns.node_name());
    EXPECT_GT(ns.all_start_micros(), 0);
    EXPECT_GE(ns.all_end_rel_micros(), ns.op_end_rel_micros());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c1", "c2", "d", "r0", "r1"}));
}

TEST_F(ExecutorTest, ConcurrentStepsOnOneExecutor) {
  GraphDef g;
  NodeDef* arg = AddNode(&g, "x", "_Arg");
  AddNodeAttr("T", DT_FLOAT, arg);
  AddNodeAttr("index", int64_t{0}, arg);
  std::string prev = "x";
  for (int i = 0; i < 50; ++i) {
    std::string name = absl::StrCat("add", i);
    AddNode(&g, name, "TxRtTestAdd", {prev, "x"});
    prev = name;
  }
  AddRetval(&g, "r", prev, 0);
  auto e = Build(g);
  ASSERT_TRUE(e.ok());
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 100; ++rep) {
        const float x = static_cast<float>(t * 100 + rep);
        auto out = RunStep(e->get(), 1, (rep % 2) ? &pool_ : nullptr, nullptr, nullptr,
                           {Tensor::Scalar<float>(x)});
        if (!out.ok() || (*out)[0].scalar<float>() != 51.0f * x) wrong.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(ExecutorTest, EmptyGraphRuns) {
  auto e = Build(GraphDef());
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(RunStep(e->get(), 0, nullptr).ok());
}

TEST_F(ExecutorTest, CreateNeedsADevice) {
  ExecutorParams p;
  auto e = Executor::Create(p, std::make_unique<Graph>());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorflux
