// LocalSession: pruning, feeds (checks, any tensor), fetches and targets, executor cache,
// concurrent runs, timeouts, tracing, Create/Extend/Close. Graphs mostly use the TxRtTest ops
// (runtime_test_ops.h) plus Placeholder.
#include "tensorflux/runtime/local_session.h"

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime_test_ops.h"
#include "poll_util.h"

namespace tensorflux {
namespace {

using rt_test::AddConst;
using rt_test::AddNode;

NodeDef* AddPlaceholder(GraphDef* g, const std::string& name, DataType dt,
                        const PartialTensorShape* shape) {
  NodeDef* n = AddNode(g, name, "Placeholder");
  AddNodeAttr("dtype", dt, n);
  if (shape != nullptr) AddNodeAttr("shape", *shape, n);
  return n;
}

// x: float placeholder [2]; y = x + c (c = 10); bad = Fail(c) hangs off the side;
// cnt = Count(y).
GraphDef TestGraph() {
  GraphDef g;
  PartialTensorShape s2({2});
  AddPlaceholder(&g, "x", DT_FLOAT, &s2);
  AddConst(&g, "c", 10.0f);
  AddNode(&g, "y", "TxRtTestAdd", {"x", "c"});
  AddNode(&g, "bad", "TxRtTestFail", {"c"});
  AddNode(&g, "cnt", "TxRtTestCount", {"y"});
  // Diamond on constants.
  AddConst(&g, "c1", 2.0f);
  AddConst(&g, "c2", 3.0f);
  AddNode(&g, "a", "TxRtTestAdd", {"c1", "c2"});
  AddNode(&g, "b", "TxRtTestAdd", {"c1", "c1"});
  AddNode(&g, "d", "TxRtTestAdd", {"a", "b"});
  return g;
}

std::unique_ptr<LocalSession> MakeSession(const GraphDef& g, ConfigProto config = {}) {
  SessionOptions opts;
  opts.config = config;
  auto s = std::make_unique<LocalSession>(opts);
  Status st = s->Create(g);
  EXPECT_TRUE(st.ok()) << st;
  return s;
}

Tensor Vec(std::initializer_list<float> v) {
  return Tensor::FromVector<float>(std::vector<float>(v), TensorShape({(int64_t)v.size()}));
}

bool HasText(const Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

TEST(LocalSessionTest, DiamondAndPruning) {
  auto s = MakeSession(TestGraph());
  std::vector<Tensor> out;
  // "bad" and the unfed placeholder are outside the pruned subgraph, so they never run.
  Status st = s->Run({}, {"d:0", "a"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].scalar<float>(), 9.0f);
  EXPECT_EQ(out[1].scalar<float>(), 5.0f);
}

TEST(LocalSessionTest, FeedPlaceholder) {
  auto s = MakeSession(TestGraph());
  std::vector<Tensor> out;
  Status st = s->Run({{"x", Vec({1.0f, -4.0f})}}, {"y:0"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].flat<float>()[0], 11.0f);
  EXPECT_EQ(out[0].flat<float>()[1], 6.0f);
}

TEST(LocalSessionTest, FeedAnyTensorCutsItsProducers) {
  GraphDef g = TestGraph();
  AddNode(&g, "e", "TxRtTestAdd", {"bad", "c"});  // bad:0 feeds e
  auto s = MakeSession(g);
  std::vector<Tensor> out;
  // Without the feed, "bad" runs and fails the step.
  Status st = s->Run({}, {"e"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(HasText(st, "bad")) << st;
  // Feeding bad:0 replaces its output, so "bad" does not run.
  st = s->Run({{"bad:0", Tensor::Scalar<float>(5.0f)}}, {"e"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(out[0].scalar<float>(), 15.0f);
  // Fetching a fed tensor returns the fed value; the same tensor may be fetched twice.
  st = s->Run({{"a", Tensor::Scalar<float>(100.0f)}}, {"d", "a:0", "d:0"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].scalar<float>(), 104.0f);
  EXPECT_EQ(out[1].scalar<float>(), 100.0f);
  EXPECT_EQ(out[2].scalar<float>(), 104.0f);
}

TEST(LocalSessionTest, UnfedPlaceholderFails) {
  auto s = MakeSession(TestGraph());
  std::vector<Tensor> out;
  Status st = s->Run({}, {"y"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(HasText(st, "You must feed a value for placeholder tensor 'x' with dtype float"))
      << st;
}

TEST(LocalSessionTest, FeedDtypeAndShapeErrors) {
  GraphDef g = TestGraph();
  PartialTensorShape scalar = PartialTensorShape::Scalar();
  PartialTensorShape any_by_2({-1, 2});
  AddPlaceholder(&g, "sc", DT_FLOAT, &scalar);
  AddPlaceholder(&g, "m", DT_FLOAT, &any_by_2);
  AddNode(&g, "sc2", "TxRtTestAdd", {"sc", "sc"});
  auto s = MakeSession(g);
  std::vector<Tensor> out;

  Status st = s->Run({{"x", Tensor::FromVector<int32_t>({1, 2}, TensorShape({2}))}}, {"y"}, {},
                     &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(HasText(st, "must be a float tensor, got int32")) << st;

  st = s->Run({{"x", Vec({1, 2, 3})}}, {"y"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(HasText(st, "[3]")) << st;
  EXPECT_TRUE(HasText(st, "'x'")) << st;

  // A placeholder declared scalar accepts any shape (TF C API behaviour).
  st = s->Run({{"sc", Vec({1, 2, 3})}}, {"sc2"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(out[0].flat<float>()[2], 6.0f);

  // [-1, 2] accepts [5, 2] and refuses [2, 5] and a vector.
  std::vector<float> ten(10, 1.0f);
  EXPECT_TRUE(s->Run({{"m", Tensor::FromVector<float>(ten, TensorShape({5, 2}))}}, {"m"}, {}, &out)
                  .ok());
  st = s->Run({{"m", Tensor::FromVector<float>(ten, TensorShape({2, 5}))}}, {"m"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  st = s->Run({{"m", Vec({1, 2})}}, {"m"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;

  // Feeding the same tensor twice.
  st = s->Run({{"x", Vec({1, 2})}, {"x:0", Vec({1, 2})}}, {"y"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
}

TEST(LocalSessionTest, NotFoundErrors) {
  GraphDef g = TestGraph();
  AddNode(&g, "noop", "NoOp", {"^d"});
  auto s = MakeSession(g);
  std::vector<Tensor> out;
  Status st = s->Run({}, {"nope:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(HasText(st, "nope")) << st;
  st = s->Run({}, {"d:1"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound) << st;
  st = s->Run({{"ghost:0", Tensor::Scalar<float>(1)}}, {"d"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(HasText(st, "ghost")) << st;
  st = s->Run({}, {}, {"no_such_target"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(HasText(st, "no_such_target")) << st;
  st = s->Run({}, {"x:bad"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  st = s->Run({}, {"^d"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  // A node without outputs cannot be fetched, only run as a target.
  st = s->Run({}, {"noop"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(HasText(st, "noop")) << st;
  EXPECT_TRUE(s->Run({}, {}, {"noop"}, &out).ok());
  // A target names a node, not a tensor.
  st = s->Run({}, {}, {"d:0"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
}

TEST(LocalSessionTest, TargetsRunWithoutFetches) {
  rt_test::ResetCounts();
  auto s = MakeSession(TestGraph());
  std::vector<Tensor> out;
  Status st = s->Run({{"x", Vec({1, 2})}}, {}, {"cnt"}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(rt_test::CountOf("cnt"), 1);
}

TEST(LocalSessionTest, ExecutorIsCachedPerSignature) {
  rt_test::ResetCounts();
  auto s = MakeSession(TestGraph());
  std::vector<Tensor> out;
  for (int i = 0; i < 3; ++i) {
    Status st = s->Run({{"x", Vec({float(i), 0})}}, {"cnt"}, {}, &out);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(out[0].flat<float>()[0], 10.0f + i);
  }
  EXPECT_EQ(s->NumCachedExecutors(), 1);
  EXPECT_EQ(rt_test::CountOf("cnt"), 3);
  // "x" and "x:0" name the same feed.
  ASSERT_TRUE(s->Run({{"x:0", Vec({0, 0})}}, {"cnt:0"}, {}, &out).ok());
  EXPECT_EQ(s->NumCachedExecutors(), 1);
  ASSERT_TRUE(s->Run({}, {"d"}, {}, &out).ok());
  EXPECT_EQ(s->NumCachedExecutors(), 2);
}

TEST(LocalSessionTest, ConcurrentRunsGetTheirOwnResults) {
  GraphDef g;
  PartialTensorShape scalar = PartialTensorShape::Scalar();
  AddPlaceholder(&g, "x", DT_FLOAT, &scalar);
  std::string prev = "x";
  for (int i = 0; i < 20; ++i) {
    std::string name = absl::StrCat("add", i);
    AddNode(&g, name, "TxRtTestAdd", {prev, "x"});
    prev = name;
  }
  auto s = MakeSession(g);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 50; ++rep) {
        const float x = static_cast<float>(t * 1000 + rep);
        std::vector<Tensor> out;
        Status st = s->Run({{"x", Tensor::Scalar<float>(x)}}, {prev, "add3"}, {}, &out);
        if (!st.ok() || out.size() != 2 || out[0].scalar<float>() != 21.0f * x ||
            out[1].scalar<float>() != 5.0f * x) {
          wrong.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(s->NumCachedExecutors(), 1);
}

TEST(LocalSessionTest, KernelErrorNamesTheNode) {
  auto s = MakeSession(TestGraph());
  std::vector<Tensor> out;
  Status st = s->Run({}, {"bad"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(HasText(st, "{{node bad}}")) << st;
}

// c -> wait (returns only once its step is cancelled) -> end (counts its runs); counts reset.
GraphDef WaitForCancelGraph() {
  rt_test::ResetCounts();
  GraphDef g;
  AddConst(&g, "c", 0.0f);
  AddNode(&g, "wait", "TxRtTestWaitForCancel", {"c"});
  AddNode(&g, "end", "TxRtTestCount", {"wait"});
  return g;
}

// The step's timeout cancels it: `wait` returns only once cancelled, and `end` never runs.
TEST(LocalSessionTest, TimeoutCancelsTheStep) {
  auto s = MakeSession(WaitForCancelGraph());
  RunOptions ro;
  ro.set_timeout_in_ms(30);
  std::vector<Tensor> out;
  Status st = s->Run(ro, {}, {"end"}, {}, &out, nullptr);
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  EXPECT_TRUE(HasText(st, "timed out after 30 ms")) << st;
  EXPECT_EQ(rt_test::CountOf("end"), 0);
}

// Close() cancels a running step (TF's DirectSession does): `wait` returns only once its step is
// cancelled, so without the cancellation the step would run until the 60 s timeout below.
TEST(LocalSessionTest, CloseCancelsRunningSteps) {
  auto s = MakeSession(WaitForCancelGraph());
  const int waiters = rt_test::g_cancel_waiters.load();
  Status st;
  const auto start = std::chrono::steady_clock::now();
  std::thread step([&] {
    RunOptions ro;
    ro.set_timeout_in_ms(60000);
    std::vector<Tensor> out;
    st = s->Run(ro, {}, {"end"}, {}, &out, nullptr);
  });
  EXPECT_TRUE(test::PollUntil([&] { return rt_test::g_cancel_waiters.load() > waiters; }));
  ASSERT_TRUE(s->Close().ok());
  step.join();
  EXPECT_EQ(st.code(), absl::StatusCode::kCancelled) << st;
  EXPECT_TRUE(HasText(st, "the session was closed")) << st;
  EXPECT_LT(test::SecondsSince(start), 30.0);
  EXPECT_EQ(rt_test::CountOf("end"), 0);
  // A step after Close is refused, as before.
  std::vector<Tensor> out;
  EXPECT_FALSE(s->Run({}, {"c"}, {}, &out).ok());
}

TEST(LocalSessionTest, FullTraceFillsStepStats) {
  auto s = MakeSession(TestGraph());
  RunOptions ro;
  ro.set_trace_level(RunOptions::FULL_TRACE);
  ro.set_output_partition_graphs(true);
  RunMetadata md;
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(ro, {}, {"d"}, {}, &out, &md).ok());
  ASSERT_EQ(md.step_stats().dev_stats_size(), 1);
  const auto& dev = md.step_stats().dev_stats(0);
  EXPECT_EQ(dev.device(), "/job:localhost/replica:0/task:0/device:CPU:0");
  std::set<std::string> names;
  for (const auto& ns : dev.node_stats()) names.insert(ns.node_name());
  for (const char* n : {"c1", "c2", "a", "b", "d"}) EXPECT_EQ(names.count(n), 1u) << n;
  EXPECT_EQ(names.count("bad"), 0u);
  ASSERT_EQ(md.partition_graphs_size(), 1);
  // Without tracing nothing is recorded.
  RunMetadata md2;
  ASSERT_TRUE(s->Run(RunOptions(), {}, {"d"}, {}, &out, &md2).ok());
  EXPECT_EQ(md2.step_stats().dev_stats_size(), 0);
}

TEST(LocalSessionTest, CreateExtendAndClose) {
  SessionOptions opts;
  LocalSession s(opts);
  std::vector<Tensor> out;
  EXPECT_EQ(s.Run({}, {"a"}, {}, &out).code(), absl::StatusCode::kFailedPrecondition);

  GraphDef unknown;
  AddNode(&unknown, "u", "NoSuchOpAnywhere");
  Status st = s.Create(unknown);
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound) << st;

  GraphDef g1;
  AddConst(&g1, "c1", 2.0f);
  ASSERT_TRUE(s.Create(g1).ok());
  EXPECT_EQ(s.Create(g1).code(), absl::StatusCode::kFailedPrecondition);

  GraphDef g2;
  AddNode(&g2, "a", "TxRtTestAdd", {"c1", "c1"});
  ASSERT_TRUE(s.Extend(g2).ok());
  ASSERT_TRUE(s.Run({}, {"a"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 4.0f);
  // Names must be new.
  st = s.Extend(g2);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(HasText(st, "'a'")) << st;
  // A bad extension leaves the graph as it was.
  GraphDef g3;
  AddNode(&g3, "z", "TxRtTestAdd", {"c1", "missing"});
  EXPECT_FALSE(s.Extend(g3).ok());
  ASSERT_TRUE(s.Run({}, {"a"}, {}, &out).ok());

  ASSERT_TRUE(s.Close().ok());
  EXPECT_EQ(s.Run({}, {"a"}, {}, &out).code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(s.Extend(g2).code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(s.Close().ok());
}

TEST(LocalSessionTest, NoInterOpPoolRunsOnCaller) {
  ConfigProto config;
  config.set_inter_op_parallelism_threads(-1);
  config.set_intra_op_parallelism_threads(1);
  auto s = MakeSession(TestGraph(), config);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"d"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 9.0f);
}

// Two expensive branches and a join: with inter_op_parallelism_threads 0 a session whose only
// device is a CPU runs every kernel on the thread that calls Run (no inter-op pool).
// The inputs are fed (constant ones would be folded: their kernels would run while the graph is
// optimized) and differ (CSE would merge the branches).
GraphDef ThreadIdGraph() {
  GraphDef g;
  AddPlaceholder(&g, "x", DT_FLOAT, nullptr);
  AddPlaceholder(&g, "y", DT_FLOAT, nullptr);
  AddNode(&g, "t1", "TxRtTestThreadId", {"x"});
  AddNode(&g, "t2", "TxRtTestThreadId", {"y"});
  AddNode(&g, "sum", "TxRtTestAdd", {"t1", "t2"});
  AddNode(&g, "t3", "TxRtTestThreadId", {"sum"});
  return g;
}

TEST(LocalSessionTest, OneCpuDeviceRunsOnTheCallerByDefault) {
  auto s = MakeSession(ThreadIdGraph());
  std::vector<Tensor> out;
  for (int i = 0; i < 20; ++i) {  // the executor measures costs over the first runs
    rt_test::ResetThreadsSeen();
    ASSERT_TRUE(s->Run({{"x", Tensor::Scalar<float>(1.0f)}, {"y", Tensor::Scalar<float>(1.0f)}},
                       {"t3"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<float>(), 2.0f);
    EXPECT_EQ(rt_test::ThreadsSeen(), std::set<std::thread::id>{std::this_thread::get_id()});
  }
}

// A step waiting in a dequeue that another thread's step (an enqueue) finishes runs the rest of
// its kernels on its own calling thread, not on the thread that enqueued: that one's Run returns
// without doing the other step's work (which, in a py_func taking a lock the producer holds
// around Run, deadlocked).
TEST(LocalSessionTest, WorkAnotherStepFinishesComesBackToTheCaller) {
  GraphDef g;
  NodeDef* q = AddNode(&g, "q", "FIFOQueueV2");
  AddNodeAttr("component_types", std::vector<DataType>{DT_FLOAT}, q);
  AddNodeAttr("capacity", int64_t{-1}, q);
  AddPlaceholder(&g, "x", DT_FLOAT, nullptr);
  AddNodeAttr("Tcomponents", std::vector<DataType>{DT_FLOAT},
              AddNode(&g, "enq", "QueueEnqueueV2", {"q", "x"}));
  AddNodeAttr("component_types", std::vector<DataType>{DT_FLOAT},
              AddNode(&g, "deq", "QueueDequeueV2", {"q"}));
  AddNode(&g, "t", "TxRtTestThreadId", {"deq"});
  auto s = MakeSession(g);
  rt_test::ResetThreadsSeen();
  std::thread::id consumer_id;
  Status consumer_status;
  std::vector<Tensor> got;
  std::thread consumer([&] {
    consumer_id = std::this_thread::get_id();
    consumer_status = s->Run({}, {"t"}, {}, &got);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the dequeue waits
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"x", Tensor::Scalar<float>(4.0f)}}, {}, {"enq"}, &out).ok());
  consumer.join();
  ASSERT_TRUE(consumer_status.ok()) << consumer_status;
  EXPECT_EQ(got[0].scalar<float>(), 4.0f);
  EXPECT_EQ(rt_test::ThreadsSeen(), std::set<std::thread::id>{consumer_id});
}

TEST(LocalSessionTest, ExplicitInterOpThreadsRunBranchesAtOnce) {
  GraphDef g;
  AddPlaceholder(&g, "x", DT_FLOAT, nullptr);
  AddPlaceholder(&g, "y", DT_FLOAT, nullptr);  // two inputs: CSE would merge the barriers
  NodeDef* b1 = AddNode(&g, "b1", "TxRtTestBarrier", {"x"});
  NodeDef* b2 = AddNode(&g, "b2", "TxRtTestBarrier", {"y"});
  AddNodeAttr("n", int64_t{2}, b1);
  AddNodeAttr("n", int64_t{2}, b2);
  AddNode(&g, "sum", "TxRtTestAdd", {"b1", "b2"});
  ConfigProto config;
  config.set_inter_op_parallelism_threads(2);
  auto s = MakeSession(g, config);
  std::vector<Tensor> out;
  rt_test::g_barrier_arrived.store(0);
  // Each barrier waits for the other.
  const Status st = s->Run(
      {{"x", Tensor::Scalar<float>(1.0f)}, {"y", Tensor::Scalar<float>(1.0f)}}, {"sum"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(out[0].scalar<float>(), 2.0f);
}

TEST(LocalSessionTest, NewSessionTargets) {
  SessionOptions opts;
  auto s = NewSession(opts);
  ASSERT_TRUE(s.ok());
  opts.target = "grpc://localhost:2222";
  auto r = NewSession(opts);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LocalSessionTest, RealOpsChain) {
  // Const + AddV2 from the op library, as the executor benchmark uses them.
  GraphDef g;
  auto add_const = [&](const std::string& name, float v) {
    NodeDef* n = AddNode(&g, name, "Const");
    AddNodeAttr("dtype", DT_FLOAT, n);
    AddNodeAttr("value", Tensor::Scalar<float>(v), n);
  };
  add_const("x0", 0.5f);
  add_const("one", 1.0f);
  for (int i = 0; i < 100; ++i) {
    NodeDef* n = AddNode(&g, absl::StrCat("x", i + 1), "AddV2",
                         {absl::StrCat("x", i), "one"});
    AddNodeAttr("T", DT_FLOAT, n);
  }
  auto s = MakeSession(g);
  std::vector<Tensor> out;
  Status st = s->Run({}, {"x100"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(out[0].scalar<float>(), 100.5f);
}

}  // namespace
}  // namespace tensorflux
