// Step stats (runtime/node_exec_stats.h): what the executor records per node (times, thread,
// label, outputs, memory) for sync and async kernels, merging per device, and the session's
// trace levels, and memory counted across threads: intra-op ParallelFor shards and async
// kernels' bound continuations. Graphs use the TxRtTest ops (runtime_test_ops.h).
#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "poll_util.h"
#include "runtime_test_ops.h"
#include "tensorflux/core/threadpool.h"
#include "tensorflux/devices/cpu_device.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/runtime/executor.h"
#include "tensorflux/runtime/node_exec_stats.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace {

using rt_test::AddConst;
using rt_test::AddNode;
using rt_test::AddRetval;

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

// c1 = 2; big = ones(10); s = Sleep(big, 3 ms) (shares big's buffer); add = s + c1 (forwards
// s's buffer); r = _Retval(add).
GraphDef SleepGraph() {
  GraphDef g;
  AddConst(&g, "c1", 2.0f);
  AddNodeAttr("n", int64_t{10}, AddNode(&g, "big", "TxRtTestBig"));
  AddNodeAttr("ms", int64_t{3}, AddNode(&g, "s", "TxRtTestSleep", {"big"}));
  AddNode(&g, "add", "TxRtTestAdd", {"s", "c1"});
  AddRetval(&g, "r", "add", 0);
  return g;
}

class StepStatsTest : public ::testing::Test {
 protected:
  StatusOr<std::unique_ptr<Executor>> Build(const GraphDef& gdef, CpuDevice* device) {
    TX_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, GraphFromGraphDef(gdef));
    ExecutorParams p;
    p.device = device;
    return Executor::Create(p, std::move(g));
  }

  Status Run(Executor* e, int num_retvals, StepStats* stats, ThreadPool* pool = nullptr) {
    SimpleCallFrame frame({}, num_retvals);
    Executor::Args a;
    a.call_frame = &frame;
    a.inter_op_pool = pool;
    a.step_stats = stats;
    return e->Run(a);
  }

  // Runs `g` (num_retvals _Retvals) once with pool_ as the inter-op pool; the thread that ran
  // each node, by node name.
  std::map<std::string, int64_t> ThreadsOf(const GraphDef& g, int num_retvals) {
    std::map<std::string, int64_t> threads;
    auto e = Build(g, &cpu0_);
    EXPECT_TRUE(e.ok()) << e.status();
    if (!e.ok()) return threads;
    StepStats stats;
    EXPECT_TRUE(Run(e->get(), num_retvals, &stats, &pool_).ok());
    for (const auto& [name, node] : ByName(stats.dev_stats(0))) {
      threads[name] = node->thread_id();
    }
    return threads;
  }

  static std::map<std::string, const NodeExecStats*> ByName(const DeviceStepStats& d) {
    std::map<std::string, const NodeExecStats*> m;
    for (const NodeExecStats& n : d.node_stats()) {
      EXPECT_TRUE(m.emplace(n.node_name(), &n).second) << "twice: " << n.node_name();
    }
    return m;
  }

  CpuDevice cpu0_{kCpu0, 1};
  CpuDevice cpu1_{kCpu1, 1};
  ThreadPool pool_{"step_stats_test", 2};
};

TEST_F(StepStatsTest, TimesThreadsAndLabels) {
  auto e = Build(SleepGraph(), &cpu0_);
  ASSERT_TRUE(e.ok()) << e.status();
  StepStats stats;
  const int64_t before = absl::GetCurrentTimeNanos();
  ASSERT_TRUE(Run(e->get(), 1, &stats, &pool_).ok());
  const int64_t after = absl::GetCurrentTimeNanos();
  ASSERT_EQ(stats.dev_stats_size(), 1);
  EXPECT_EQ(stats.dev_stats(0).device(), kCpu0);
  auto nodes = ByName(stats.dev_stats(0));
  ASSERT_EQ(nodes.size(), 5u);
  for (const auto& [name, st] : nodes) {
    SCOPED_TRACE(name);
    const int64_t start = st->all_start_nanos();
    EXPECT_LE(before, st->scheduled_nanos());
    EXPECT_LE(st->scheduled_nanos(), start);
    EXPECT_LE(0, st->op_start_rel_nanos());
    EXPECT_LE(st->op_start_rel_nanos(), st->op_end_rel_nanos());
    EXPECT_LE(st->op_end_rel_nanos(), st->all_end_rel_nanos());
    EXPECT_LE(start + st->all_end_rel_nanos(), after);
    // Micros are the nanos truncated, relative fields as differences of absolute micros.
    EXPECT_EQ(st->all_start_micros(), start / 1000);
    EXPECT_EQ(st->scheduled_micros(), st->scheduled_nanos() / 1000);
    EXPECT_EQ(st->all_end_rel_micros(), (start + st->all_end_rel_nanos()) / 1000 - start / 1000);
    EXPECT_EQ(st->op_end_rel_micros(), (start + st->op_end_rel_nanos()) / 1000 - start / 1000);
  }
  // The sleep is inside its op time.
  const NodeExecStats& s = *nodes.at("s");
  EXPECT_GE(s.op_end_rel_nanos() - s.op_start_rel_nanos(), 3'000'000);
  // Dataflow order: a consumer starts after its producer ended.
  EXPECT_GE(nodes.at("add")->all_start_nanos(), s.all_start_nanos() + s.all_end_rel_nanos());
  EXPECT_EQ(nodes.at("c1")->timeline_label(), "c1 = TxRtTestConst()");
  EXPECT_EQ(s.timeline_label(), "s = TxRtTestSleep(big)");
  EXPECT_EQ(nodes.at("add")->timeline_label(), "add = TxRtTestAdd(s, c1)");
  EXPECT_EQ(nodes.at("r")->timeline_label(), "r = _Retval(add)");
}

// When a node makes several expensive nodes ready, the one with the longest chain of expensive
// nodes after it stays on the finishing thread and the others go to the pool (TF keeps the last
// one, here s2, and only when nothing cheap is queued).
TEST_F(StepStatsTest, CriticalExpensiveSuccessorStaysOnTheThread) {
  GraphDef g;
  AddNodeAttr("n", int64_t{10}, AddNode(&g, "big", "TxRtTestBig"));
  AddNodeAttr("ms", int64_t{1}, AddNode(&g, "s1", "TxRtTestSleep", {"big"}));
  AddNodeAttr("ms", int64_t{1}, AddNode(&g, "s1b", "TxRtTestSleep", {"s1"}));
  AddNodeAttr("ms", int64_t{1}, AddNode(&g, "s1c", "TxRtTestSleep", {"s1b"}));
  AddNodeAttr("ms", int64_t{1}, AddNode(&g, "s2", "TxRtTestSleep", {"big"}));
  AddRetval(&g, "r1", "s1c", 0);
  AddRetval(&g, "r2", "s2", 1);
  const std::map<std::string, int64_t> thread = ThreadsOf(g, 2);
  ASSERT_EQ(thread.size(), 7u);
  EXPECT_EQ(thread.at("s1"), thread.at("big"));
  EXPECT_EQ(thread.at("s1b"), thread.at("big"));
  EXPECT_EQ(thread.at("s1c"), thread.at("big"));
  EXPECT_NE(thread.at("s2"), thread.at("big"));
}

// A thread keeps at most one expensive node queued: here s1 is kept behind the cheap `c`, and
// s2, which `c` makes ready while s1 is still queued, goes to the pool, so the two independent
// sleeps run in parallel (with both kept, they ran one after the other on one thread).
TEST_F(StepStatsTest, OneExpensiveNodeKeptPerThread) {
  GraphDef g;
  AddNodeAttr("n", int64_t{10}, AddNode(&g, "big", "TxRtTestBig"));
  AddNodeAttr("ms", int64_t{20}, AddNode(&g, "s1", "TxRtTestSleep", {"big"}));
  AddNode(&g, "c", "TxRtTestAdd", {"big", "big"});
  AddNodeAttr("ms", int64_t{20}, AddNode(&g, "s2", "TxRtTestSleep", {"c"}));
  AddRetval(&g, "r1", "s1", 0);
  AddRetval(&g, "r2", "s2", 1);
  const std::map<std::string, int64_t> thread = ThreadsOf(g, 2);
  ASSERT_EQ(thread.size(), 6u);
  EXPECT_NE(thread.at("s1"), thread.at("s2"));
}

TEST_F(StepStatsTest, OutputsAndMemory) {
  auto e = Build(SleepGraph(), &cpu0_);
  ASSERT_TRUE(e.ok()) << e.status();
  StepStats stats;
  ASSERT_TRUE(Run(e->get(), 1, &stats).ok());
  auto nodes = ByName(stats.dev_stats(0));
  const std::string allocator = cpu0_.GetAllocator()->Name();

  // big allocated its float[10] through the device's allocator.
  const NodeExecStats& big = *nodes.at("big");
  ASSERT_EQ(big.output_size(), 1);
  const TensorDescription& bd = big.output(0).tensor_description();
  EXPECT_EQ(big.output(0).slot(), 0);
  EXPECT_EQ(bd.dtype(), DT_FLOAT);
  ASSERT_EQ(bd.shape().dim_size(), 1);
  EXPECT_EQ(bd.shape().dim(0).size(), 10);
  EXPECT_EQ(bd.allocation_description().requested_bytes(), 40);
  EXPECT_EQ(bd.allocation_description().allocated_bytes(), 40);
  EXPECT_EQ(bd.allocation_description().allocator_name(), allocator);
  const uint64_t big_ptr = bd.allocation_description().ptr();
  EXPECT_NE(big_ptr, 0u);
  ASSERT_EQ(big.memory_size(), 1);
  EXPECT_EQ(big.memory(0).allocator_name(), allocator);
  EXPECT_EQ(big.memory(0).total_bytes(), 40);
  EXPECT_EQ(big.memory(0).peak_bytes(), 40);
  EXPECT_EQ(big.memory(0).live_bytes(), 40);
  EXPECT_GE(big.memory(0).allocator_bytes_in_use(), 40);

  // s passes big's buffer on and add forwards it: same address, nothing allocated.
  for (const char* name : {"s", "add"}) {
    SCOPED_TRACE(name);
    const NodeExecStats& n = *nodes.at(name);
    ASSERT_EQ(n.output_size(), 1);
    const AllocationDescription& a = n.output(0).tensor_description().allocation_description();
    EXPECT_EQ(a.ptr(), big_ptr);
    EXPECT_EQ(a.requested_bytes(), 40);
    EXPECT_EQ(a.allocator_name(), "");
    EXPECT_EQ(n.memory_size(), 0);
  }
  // The scalar constant comes from cpu_allocator() directly, which does not report.
  const NodeExecStats& c1 = *nodes.at("c1");
  ASSERT_EQ(c1.output_size(), 1);
  EXPECT_EQ(c1.output(0).tensor_description().shape().dim_size(), 0);
  EXPECT_EQ(c1.output(0).tensor_description().allocation_description().requested_bytes(), 4);
  EXPECT_EQ(c1.memory_size(), 0);
  EXPECT_EQ(nodes.at("r")->output_size(), 0);
}

TEST_F(StepStatsTest, AsyncKernelTimesAndOutputs) {
  GraphDef g;
  AddNodeAttr("n", int64_t{4}, AddNode(&g, "big", "TxRtTestBig"));
  AddNodeAttr("on_thread", true, AddNode(&g, "inc", "TxRtTestAsyncAddOne", {"big"}));
  AddRetval(&g, "r", "inc", 0);
  auto e = Build(g, &cpu0_);
  ASSERT_TRUE(e.ok()) << e.status();
  StepStats stats;
  ASSERT_TRUE(Run(e->get(), 1, &stats, &pool_).ok());
  auto nodes = ByName(stats.dev_stats(0));
  const NodeExecStats& inc = *nodes.at("inc");
  // ComputeAsync to its done callback, which runs on another thread after 1 ms.
  EXPECT_GE(inc.op_end_rel_nanos() - inc.op_start_rel_nanos(), 1'000'000);
  EXPECT_LE(inc.op_end_rel_nanos(), inc.all_end_rel_nanos());
  EXPECT_EQ(inc.timeline_label(), "inc = TxRtTestAsyncAddOne(big)");
  ASSERT_EQ(inc.output_size(), 1);
  const auto& alloc = inc.output(0).tensor_description().allocation_description();
  EXPECT_EQ(alloc.requested_bytes(), 16);
  // The output was allocated on the kernel's own thread, which bound the node's tracker.
  EXPECT_EQ(alloc.allocated_bytes(), 16);
  EXPECT_EQ(alloc.allocator_name(), cpu0_.GetAllocator()->Name());
  ASSERT_EQ(inc.memory_size(), 1);
  EXPECT_EQ(inc.memory(0).total_bytes(), 16);
  EXPECT_EQ(inc.memory(0).live_bytes(), 16);
}

TEST_F(StepStatsTest, AsyncKernelAllocatingInComputeAsync) {
  GraphDef g;
  AddNodeAttr("n", int64_t{3}, AddNode(&g, "big", "TxRtTestBig"));
  AddNodeAttr("on_thread", false, AddNode(&g, "inc", "TxRtTestAsyncAddOne", {"big"}));
  AddRetval(&g, "r", "inc", 0);
  auto e = Build(g, &cpu0_);
  ASSERT_TRUE(e.ok()) << e.status();
  StepStats stats;
  ASSERT_TRUE(Run(e->get(), 1, &stats, &pool_).ok());
  const NodeExecStats& inc = *ByName(stats.dev_stats(0)).at("inc");
  ASSERT_EQ(inc.memory_size(), 1);
  EXPECT_EQ(inc.memory(0).total_bytes(), 12);
  EXPECT_EQ(inc.output(0).tensor_description().allocation_description().allocated_bytes(), 12);
}

// TxStTestShardAlloc: y = x; allocates a 1000-byte temp in each of `shards` ParallelFor shards
// on the intra-op pool, two of them at once (the first waits up to 60 s for a second), so at
// least one runs on a pool thread. g_shards_off_caller counts shards run off the caller.
std::atomic<int> g_shards_running{0};
std::atomic<int> g_shards_off_caller{0};

REGISTER_OP("TxStTestShardAlloc").Input("x: float").Output("y: float").Attr("shards: int");

class ShardAllocOp : public OpKernel {
 public:
  explicit ShardAllocOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("shards", &shards_));
  }
  void Compute(OpKernelContext* ctx) override {
    ThreadPool* pool = ctx->intra_op_thread_pool();
    OP_REQUIRES(ctx, pool != nullptr, errors::Internal("no intra-op pool"));
    const std::thread::id caller = std::this_thread::get_id();
    pool->ParallelFor(shards_, 1'000'000, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        Tensor temp;
        OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, TensorShape({250}), &temp));
        g_shards_running.fetch_add(1);
        test::PollUntil([] { return g_shards_running.load() >= 2; });
        if (std::this_thread::get_id() != caller) g_shards_off_caller.fetch_add(1);
      }
    });
    ctx->set_output(0, ctx->input(0));
  }

 private:
  int64_t shards_ = 0;
};
REGISTER_KERNEL_BUILDER(Name("TxStTestShardAlloc").Device(DEVICE_CPU), ShardAllocOp);

TEST_F(StepStatsTest, AllocationsOnIntraOpThreads) {
  g_shards_running = 0;  // counts of this run only (--gtest_repeat)
  g_shards_off_caller = 0;
  CpuDevice cpu(kCpu0, /*intra_op_threads=*/3);
  GraphDef g;
  AddConst(&g, "c", 1.0f);
  AddNodeAttr("shards", int64_t{4}, AddNode(&g, "sharded", "TxStTestShardAlloc", {"c"}));
  AddRetval(&g, "r", "sharded", 0);
  auto e = Build(g, &cpu);
  ASSERT_TRUE(e.ok()) << e.status();
  StepStats stats;
  ASSERT_TRUE(Run(e->get(), 1, &stats, &pool_).ok());
  EXPECT_GE(g_shards_off_caller.load(), 1);  // else the test proves nothing
  const NodeExecStats& n = *ByName(stats.dev_stats(0)).at("sharded");
  ASSERT_EQ(n.memory_size(), 1);
  EXPECT_EQ(n.memory(0).allocator_name(), cpu.GetAllocator()->Name());
  EXPECT_EQ(n.memory(0).total_bytes(), 4000);  // every shard's temp, whichever thread ran it
  EXPECT_GE(n.memory(0).peak_bytes(), 2000);   // two held at once, on two threads
  EXPECT_EQ(n.memory(0).live_bytes(), 0);      // each freed on the thread that made it
}

TEST_F(StepStatsTest, OneDeviceStepStatsPerDevice) {
  GraphDef g1;
  AddConst(&g1, "a", 1.0f);
  AddRetval(&g1, "ra", "a", 0);
  GraphDef g2;
  AddConst(&g2, "b", 2.0f);
  AddRetval(&g2, "rb", "b", 0);
  auto e1 = Build(g1, &cpu0_);
  auto e2 = Build(g2, &cpu0_);
  auto e3 = Build(g2, &cpu1_);
  ASSERT_TRUE(e1.ok() && e2.ok() && e3.ok());
  StepStats stats;
  ASSERT_TRUE(Run(e1->get(), 1, &stats).ok());
  ASSERT_TRUE(Run(e3->get(), 1, &stats).ok());
  ASSERT_TRUE(Run(e2->get(), 1, &stats).ok());
  ASSERT_EQ(stats.dev_stats_size(), 2);
  EXPECT_EQ(stats.dev_stats(0).device(), kCpu0);
  EXPECT_EQ(stats.dev_stats(1).device(), kCpu1);
  std::vector<std::string> names;
  for (const auto& n : stats.dev_stats(0).node_stats()) names.push_back(n.node_name());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "ra", "b", "rb"}));
  EXPECT_EQ(stats.dev_stats(1).node_stats_size(), 2);
}

TEST(MergeDeviceStepStatsTest, AppendsToTheSameDevice) {
  StepStats into;
  DeviceStepStats a;
  a.set_device("d0");
  a.add_node_stats()->set_node_name("x");
  MergeDeviceStepStats(std::move(a), &into);
  DeviceStepStats b;
  b.set_device("d1");
  b.add_node_stats()->set_node_name("y");
  MergeDeviceStepStats(std::move(b), &into);
  DeviceStepStats c;
  c.set_device("d0");
  c.add_node_stats()->set_node_name("z");
  MergeDeviceStepStats(std::move(c), &into);
  ASSERT_EQ(into.dev_stats_size(), 2);
  ASSERT_EQ(into.dev_stats(0).node_stats_size(), 2);
  EXPECT_EQ(into.dev_stats(0).node_stats(1).node_name(), "z");
  EXPECT_EQ(into.dev_stats(1).node_stats(0).node_name(), "y");
}

TEST(NodeStatsLabelTest, SendAndRecvNameTheirTensorAndPeer) {
  NodeDef send;
  send.set_name("s");
  send.set_op("_Send");
  send.add_input("x");
  AddNodeAttr("tensor_name", std::string("edge_3_x"), &send);
  AddNodeAttr("recv_device", std::string(kCpu1), &send);
  AddNodeAttr("send_device", std::string(kCpu0), &send);
  NodeExecStats st;
  nodestats::SetTimelineLabel(&st, send);
  EXPECT_EQ(st.timeline_label(), absl::StrCat("s = _Send(edge_3_x @", kCpu1, ")"));
  NodeDef recv = send;
  recv.set_name("r");
  recv.set_op("_HostRecv");
  recv.clear_input();
  nodestats::SetTimelineLabel(&st, recv);
  EXPECT_EQ(st.timeline_label(), absl::StrCat("r = _HostRecv(edge_3_x @", kCpu0, ")"));
  NodeDef other;
  other.set_name("m");
  other.set_op("MatMul");
  other.add_input("a:1");
  other.add_input("b");
  other.add_input("^c");
  nodestats::SetTimelineLabel(&st, other);
  EXPECT_EQ(st.timeline_label(), "m = MatMul(a:1, b, ^c)");
}

// The session: every trace level above NO_TRACE records the same fields; NO_TRACE nothing.
TEST(SessionTraceTest, TraceLevels) {
  GraphDef g = SleepGraph();
  g.mutable_node()->RemoveLast();  // the _Retval: the session adds its own
  auto session = NewSession(SessionOptions());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(g).ok());
  for (auto level : {RunOptions::SOFTWARE_TRACE, RunOptions::HARDWARE_TRACE,
                     RunOptions::FULL_TRACE, RunOptions::NO_TRACE}) {
    SCOPED_TRACE(RunOptions::TraceLevel_Name(level));
    RunOptions ro;
    ro.set_trace_level(level);
    RunMetadata md;
    std::vector<Tensor> out;
    ASSERT_TRUE((*session)->Run(ro, {}, {"add"}, {}, &out, &md).ok());
    EXPECT_EQ(out[0].flat<float>()[9], 3.0f);
    if (level == RunOptions::NO_TRACE) {
      EXPECT_EQ(md.step_stats().dev_stats_size(), 0);
      continue;
    }
    ASSERT_EQ(md.step_stats().dev_stats_size(), 1);
    std::map<std::string, const NodeExecStats*> nodes;
    for (const auto& n : md.step_stats().dev_stats(0).node_stats()) nodes[n.node_name()] = &n;
    ASSERT_EQ(nodes.count("big"), 1u);
    EXPECT_EQ(nodes["big"]->timeline_label(), "big = TxRtTestBig()");
    EXPECT_EQ(nodes["big"]->output(0).tensor_description().allocation_description()
                  .allocated_bytes(), 40);
    EXPECT_EQ(nodes["big"]->memory(0).total_bytes(), 40);
  }
}

}  // namespace
}  // namespace tensorflux
