// Faults of a cluster of tensorflux-server processes (ps + 2 workers on loopback) that
// cluster_test.cc's killed worker does not cover: the ps killed during a step fails the step
// within seconds with UNAVAILABLE/ABORTED naming the ps, and once it restarts the same workers
// serve a new session; a task that accepts calls but never answers (SIGSTOPped) bounds every
// call by its deadline: a step whose worker is stopped, and a client whose master is stopped,
// fail with DEADLINE_EXCEEDED in about operation_timeout_in_ms naming the task, and the cluster
// serves again once it runs (SIGCONT). In process: a ps stopped during a step leaves no step or
// session state on the workers.
#include <chrono>
#include <future>
#include <thread>

#include "cluster_test_util.h"
#include "poll_util.h"
#include "gtest/gtest.h"
#include "tensorflux/distributed/grpc_server.h"
#include "tensorflux/distributed/worker.h"

namespace tensorflux {
namespace {

using cluster_test::BusyStepGraph;
using cluster_test::Cluster;
using cluster_test::Connect;
using cluster_test::Floats;
using cluster_test::kTrainGraph;
using cluster_test::ParseGraph;
using cluster_test::Values;

using test::SecondsSince;

bool Mentions(const Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

// One training step of kTrainGraph; w after it. `ro` (its timeout_in_ms) applies to both runs.
Status TrainOnce(Session* s, std::vector<float>* w, const RunOptions& ro = {}) {
  std::vector<Tensor> out;
  TX_RETURN_IF_ERROR(s->Run(ro, {{"x0", Floats({1, 0.5f, -1})}, {"x1", Floats({2, 1, 0.25f})}},
                            {}, {"train"}, &out, nullptr));
  TX_RETURN_IF_ERROR(s->Run(ro, {}, {"w_read"}, {}, &out, nullptr));
  *w = Values(out[0]);
  return OkStatus();
}

TEST(ClusterFaultTest, KilledPsFailsTheStepNamingIt) {
  Cluster c;
  ASSERT_TRUE(c.StartAll()) << c.ps.log() << c.w0.log() << c.w1.log();
  // Worker 1 computes for seconds; the ps waits for its result (as a ps waits for gradients).
  auto session = Connect(c.w0_port, 20000);
  ASSERT_TRUE(session->Create(ParseGraph(BusyStepGraph("/job:worker/task:1", "/job:ps/task:0")))
                  .ok());
  auto step = std::async(std::launch::async, [&] {
    std::vector<Tensor> out;
    return session->Run({}, {"total"}, {}, &out);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  ASSERT_EQ(step.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
      << "the step finished before the ps was killed: make it longer";
  c.ps.Signal(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_EQ(step.wait_for(std::chrono::seconds(8)), std::future_status::ready)
      << "the step hangs after its ps died";
  const Status s = step.get();
  EXPECT_LT(SecondsSince(killed), 5.0);
  EXPECT_TRUE(s.code() == absl::StatusCode::kUnavailable ||
              s.code() == absl::StatusCode::kAborted)
      << s;
  EXPECT_TRUE(Mentions(s, "/job:ps/replica:0/task:0")) << s;
  c.ps.Wait();

  // A new session needs every task (as in TF): the ps restarts on its port, its variables
  // gone, and a new session initializes and trains through the same workers.
  c.Start(&c.ps, "ps", 0);
  ASSERT_TRUE(c.ps.WaitListening()) << c.ps.log();
  auto again = Connect(c.w0_port);
  ASSERT_TRUE(again->Create(ParseGraph(kTrainGraph)).ok());
  ASSERT_TRUE(again->Run({}, {}, {"w_init"}, nullptr).ok());
  std::vector<float> w;
  const Status ran = TrainOnce(again.get(), &w);
  ASSERT_TRUE(ran.ok()) << ran;
  EXPECT_EQ(w, std::vector<float>({1 * 0.625f, 2 * 0.8125f, 3 * 1.09375f}));
}

TEST(ClusterFaultTest, AStoppedTaskFailsCallsAtTheirDeadline) {
  Cluster c;
  ASSERT_TRUE(c.StartAll()) << c.ps.log() << c.w0.log() << c.w1.log();
  constexpr int64_t kTimeoutMs = 1500;
  auto session = Connect(c.w0_port, kTimeoutMs);
  ASSERT_TRUE(session->Create(ParseGraph(kTrainGraph)).ok());
  // The first steps register every partition, which a loaded machine can take longer than
  // kTimeoutMs over: they get a step timeout of their own (RunOptions overrides the config's).
  RunOptions setup;
  setup.set_timeout_in_ms(60000);
  ASSERT_TRUE(session->Run(setup, {}, {}, {"w_init"}, nullptr, nullptr).ok());
  std::vector<float> w;
  Status s = TrainOnce(session.get(), &w, setup);
  ASSERT_TRUE(s.ok()) << s;  // every partition registered and run once

  // Worker 1 accepts connections but runs nothing: its RunGraph never answers.
  ASSERT_TRUE(c.w1.Pause());
  auto start = std::chrono::steady_clock::now();
  s = TrainOnce(session.get(), &w);
  double secs = SecondsSince(start);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_TRUE(Mentions(s, "/job:worker/replica:0/task:1")) << s;
  EXPECT_GT(secs, kTimeoutMs / 1000.0 - 0.1);
  EXPECT_LT(secs, kTimeoutMs / 1000.0 + 3.0);

  // The master itself stopped: a new client's CreateSession ends at its deadline too.
  c.w1.Signal(SIGCONT);
  ASSERT_TRUE(c.w0.Pause());
  auto client = Connect(c.w0_port, kTimeoutMs);
  start = std::chrono::steady_clock::now();
  s = client->Create(ParseGraph(kTrainGraph));
  secs = SecondsSince(start);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_LT(secs, kTimeoutMs / 1000.0 + 3.0);
  c.w0.Signal(SIGCONT);

  // Running again, the cluster serves: the failed step did not apply its update (w after the
  // one good step: w * (1 - lr * (x0 + x1)) = 5/8, 13/16, 35/32 of 1, 2, 3; the next good step
  // multiplies by the same factors).
  auto after = Connect(c.w0_port, 10000);
  ASSERT_TRUE(after->Create(ParseGraph(kTrainGraph)).ok());
  s = TrainOnce(after.get(), &w);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(w, std::vector<float>({1 * 0.625f * 0.625f, 2 * 0.8125f * 0.8125f,
                                   3 * 1.09375f * 1.09375f}));
}

// In process, where the workers' state is visible: the ps stops (GrpcServer::Stop: it stops
// serving and cancels its calls) while a step waits on it (a dequeue from an empty queue on the
// ps feeds worker 1, whose result worker 0 fetches). The step fails naming the ps, and neither
// worker keeps any state of it.
TEST(ClusterFaultTest, AStoppedPsLeavesNoStepStateOnTheWorkers) {
  ServerDef def;
  int ports[3];
  const char* jobs[3] = {"ps", "worker", "worker"};
  const int tasks[3] = {0, 0, 1};
  for (int i = 0; i < 3; ++i) ports[i] = server_test::FreePort();
  auto* ps = def.mutable_cluster()->add_job();
  ps->set_name("ps");
  (*ps->mutable_tasks())[0] = "127.0.0.1:" + std::to_string(ports[0]);
  auto* worker = def.mutable_cluster()->add_job();
  worker->set_name("worker");
  (*worker->mutable_tasks())[0] = "127.0.0.1:" + std::to_string(ports[1]);
  (*worker->mutable_tasks())[1] = "127.0.0.1:" + std::to_string(ports[2]);
  std::unique_ptr<GrpcServer> servers[3];
  for (int i = 0; i < 3; ++i) {
    GrpcServerOptions o;
    o.server_def = def;
    o.server_def.set_job_name(jobs[i]);
    o.server_def.set_task_index(tasks[i]);
    auto s = GrpcServer::Create(o);
    ASSERT_TRUE(s.ok()) << s.status();
    servers[i] = *std::move(s);
  }
  Worker* w0 = servers[1]->worker();
  Worker* w1 = servers[2]->worker();
  auto session = Connect(ports[1], 20000);
  ASSERT_TRUE(session->Create(ParseGraph(R"pb(
    node { name: "q" op: "FIFOQueueV2" device: "/job:ps/task:0"
           attr { key: "component_types" value { list { type: DT_FLOAT } } }
           attr { key: "capacity" value { i: 1 } } }
    node { name: "deq" op: "QueueDequeueV2" input: "q" device: "/job:ps/task:0"
           attr { key: "component_types" value { list { type: DT_FLOAT } } } }
    node { name: "neg" op: "Neg" input: "deq" device: "/job:worker/task:1"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "out" op: "Neg" input: "neg" device: "/job:worker/task:0"
           attr { key: "T" value { type: DT_FLOAT } } }
  )pb")).ok());
  auto step = std::async(std::launch::async, [&] {
    std::vector<Tensor> out;
    return session->Run({}, {"out"}, {}, &out);
  });
  // Both workers hold the step while it waits.
  test::PollUntil([&] { return w0->num_steps() > 0 && w1->num_steps() > 0; });
  ASSERT_EQ(step.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  EXPECT_EQ(w0->num_steps(), 1);
  EXPECT_EQ(w1->num_steps(), 1);
  const auto stopped = std::chrono::steady_clock::now();
  servers[0]->Stop();
  ASSERT_EQ(step.wait_for(std::chrono::seconds(8)), std::future_status::ready)
      << "the step hangs after its ps stopped";
  const Status s = step.get();
  EXPECT_LT(SecondsSince(stopped), 5.0);
  EXPECT_TRUE(s.code() == absl::StatusCode::kUnavailable ||
              s.code() == absl::StatusCode::kAborted)
      << s;
  EXPECT_TRUE(Mentions(s, "/job:ps/replica:0/task:0")) << s;
  test::PollUntil([&] { return w0->num_steps() + w1->num_steps() == 0; });
  EXPECT_EQ(w0->num_steps(), 0);
  EXPECT_EQ(w1->num_steps(), 0);
  ASSERT_TRUE(session->Close().ok());
  EXPECT_EQ(w0->num_sessions(), 0);
  EXPECT_EQ(w1->num_sessions(), 0);
}

}  // namespace
}  // namespace tensorflux
