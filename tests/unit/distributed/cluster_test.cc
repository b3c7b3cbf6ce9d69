// A cluster of tensorflux-server processes on loopback (ps + 2 workers, free ports): a training
// step placed over the three tasks gives the LocalSession's values (and the hand-computed ones);
// a worker killed with SIGKILL in the middle of a step fails the step within seconds with
// UNAVAILABLE/ABORTED naming it, and a restarted worker serves a new session. In process: two
// GrpcServers, and CloseSession leaves no session or step state on the other worker. Asynchronous
// between-graph training (a client per worker, each applying its own gradients on the ps).
#include <chrono>
#include <future>
#include <set>
#include <thread>

#include "gtest/gtest.h"
#include "google/protobuf/text_format.h"
#include "cluster_test_util.h"
#include "poll_util.h"
#include "tensorflux/distributed/grpc_server.h"
#include "tensorflux/distributed/master.h"
#include "tensorflux/distributed/worker.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace {

using cluster_test::BusyStepGraph;
using cluster_test::Cluster;
using cluster_test::Connect;
using cluster_test::Floats;
using cluster_test::kTrainGraph;
using cluster_test::ParseGraph;
using cluster_test::Values;
using server_test::FreePort;
using server_test::ServerProcess;

// Two training steps; the values of w after each.
Status TrainTwice(Session* s, std::vector<std::vector<float>>* after) {
  TX_RETURN_IF_ERROR(s->Run({}, {}, {"w_init"}, nullptr));
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x0", Floats({1, 0.5f, -1})},
                                                             {"x1", Floats({2, 1, 0.25f})}};
  for (int step = 0; step < 2; ++step) {
    TX_RETURN_IF_ERROR(s->Run(feeds, {}, {"train"}, nullptr));
    std::vector<Tensor> out;
    TX_RETURN_IF_ERROR(s->Run({}, {"w_read"}, {}, &out));
    after->push_back(Values(out[0]));
  }
  return OkStatus();
}

TEST(ClusterTest, TrainingStepMatchesLocalSession) {
  Cluster c;
  ASSERT_TRUE(c.StartAll()) << c.ps.log() << c.w0.log() << c.w1.log();
  auto remote = Connect(c.w0_port);
  ASSERT_TRUE(remote->Create(ParseGraph(kTrainGraph)).ok());
  std::vector<std::vector<float>> got;
  Status s = TrainTwice(remote.get(), &got);
  ASSERT_TRUE(s.ok()) << s;

  // The same graph in process (soft placement moves the /job:ps and /job:worker requests).
  auto local = Connect(0);
  ASSERT_TRUE(local->Create(ParseGraph(kTrainGraph)).ok());
  std::vector<std::vector<float>> want;
  ASSERT_TRUE(TrainTwice(local.get(), &want).ok());
  EXPECT_EQ(got, want);
  // By hand: w <- w * (1 - lr * (x0 + x1)), lr = 1/8: factors 5/8, 13/16, 35/32 (exact).
  EXPECT_EQ(got[0], std::vector<float>({1 * 0.625f, 2 * 0.8125f, 3 * 1.09375f}));

  // The nodes ran where they were asked to.
  std::vector<DeviceAttributes> devices;
  ASSERT_TRUE(remote->ListDevices(&devices).ok());
  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d.name());
  EXPECT_EQ(names, (std::vector<std::string>{"/job:worker/replica:0/task:0/device:CPU:0",
                                             "/job:ps/replica:0/task:0/device:CPU:0",
                                             "/job:worker/replica:0/task:1/device:CPU:0"}));
  // A traced step: every task's step stats and the graphs each device ran come back.
  RunOptions opts;
  opts.set_trace_level(RunOptions::FULL_TRACE);
  opts.set_output_partition_graphs(true);
  RunMetadata md;
  std::vector<Tensor> out;
  ASSERT_TRUE(remote->Run(opts, {{"x0", Floats({0, 0, 0})}, {"x1", Floats({0, 0, 0})}}, {},
                          {"train"}, &out, &md).ok());
  std::set<std::string> traced;
  for (const DeviceStepStats& d : md.step_stats().dev_stats()) {
    if (d.node_stats_size() > 0) traced.insert(d.device());
  }
  EXPECT_EQ(traced, std::set<std::string>(names.begin(), names.end()));
  ASSERT_EQ(md.partition_graphs_size(), 3);
  int sends = 0, recvs = 0;
  for (const GraphDef& g : md.partition_graphs()) {
    for (const NodeDef& n : g.node()) {
      sends += n.op() == "_Send";
      recvs += n.op() == "_Recv";
    }
  }
  // A _Send/_Recv pair per cross-task edge, and a client-terminated _Recv per feed (x0, x1).
  EXPECT_GT(sends, 0);
  EXPECT_EQ(recvs, sends + 2);
  ASSERT_TRUE(remote->Close().ok());
}

// Asynchronous between-graph training over the processes: each worker's client has its own
// graph and session on its own task's master; its step computes its gradient (lr * c_i, a
// linear loss) on its worker and applies it to w on the ps, with no barrier between the
// workers. The two clients run their steps at the same time; every update lands once: w ends at
// w0 - K * (lr * c0 + lr * c1) and the step counter at 2K (exact: the values are dyadic).
std::string AsyncWorkerGraph(int task, const std::vector<float>& c) {
  const std::string worker = "/job:worker/task:" + std::to_string(task);
  return R"pb(
    node { name: "w" op: "VarHandleOp" device: "/job:ps/task:0"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 3 } } } }
           attr { key: "shared_name" value { s: "async_w" } } }
    node { name: "n" op: "VarHandleOp" device: "/job:ps/task:0"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape {} } }
           attr { key: "shared_name" value { s: "async_steps" } } }
    node { name: "w0" op: "Const"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } }
                                                float_val: 1 float_val: 2 float_val: 3 } } } }
    node { name: "zero" op: "Const"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0 } } } }
    node { name: "one" op: "Const"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }
    node { name: "w_init" op: "AssignVariableOp" input: "w" input: "w0"
           attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "n_init" op: "AssignVariableOp" input: "n" input: "zero"
           attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "w_read" op: "ReadVariableOp" input: "w" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "n_read" op: "ReadVariableOp" input: "n" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "lr" op: "Const" device: ")pb" + worker + R"pb("
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0.125 } } } }
    node { name: "c" op: "Const" device: ")pb" + worker + R"pb("
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } }
                  float_val: )pb" + std::to_string(c[0]) + " float_val: " + std::to_string(c[1]) +
         " float_val: " + std::to_string(c[2]) + R"pb( } } } }
    node { name: "delta" op: "Mul" input: "lr" input: "c" device: ")pb" + worker + R"pb("
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "apply" op: "AssignSubVariableOp" input: "w" input: "delta"
           attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "count" op: "AssignAddVariableOp" input: "n" input: "one"
           attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "train" op: "NoOp" input: "^apply" input: "^count" }
  )pb";
}

TEST(ClusterTest, AsynchronousTrainingAppliesEveryWorkersGradient) {
  Cluster c;
  ASSERT_TRUE(c.StartAll()) << c.ps.log() << c.w0.log() << c.w1.log();
  const std::vector<std::vector<float>> cs = {{1, 2, -1}, {0.5f, 0.25f, 4}};
  const int ports[2] = {c.w0_port, c.w1_port};
  std::unique_ptr<Session> sessions[2];
  for (int i = 0; i < 2; ++i) {
    sessions[i] = Connect(ports[i]);
    ASSERT_TRUE(sessions[i]->Create(ParseGraph(AsyncWorkerGraph(i, cs[i]))).ok());
  }
  ASSERT_TRUE(sessions[0]->Run({}, {}, {"w_init", "n_init"}, nullptr).ok());  // the chief
  constexpr int kSteps = 5;
  std::future<Status> workers[2];
  for (int i = 0; i < 2; ++i) {
    workers[i] = std::async(std::launch::async, [&, i] {
      for (int step = 0; step < kSteps; ++step) {
        TX_RETURN_IF_ERROR(sessions[i]->Run({}, {}, {"train"}, nullptr));
      }
      return OkStatus();
    });
  }
  for (auto& w : workers) {
    const Status s = w.get();
    ASSERT_TRUE(s.ok()) << s;
  }
  std::vector<Tensor> out;
  ASSERT_TRUE(sessions[1]->Run({}, {"w_read", "n_read"}, {}, &out).ok());
  std::vector<float> want;
  for (int j = 0; j < 3; ++j) {
    want.push_back(static_cast<float>(j + 1) - kSteps * 0.125f * (cs[0][j] + cs[1][j]));
  }
  EXPECT_EQ(Values(out[0]), want);
  EXPECT_EQ(out[1].scalar<float>(), 2.0f * kSteps);
}

TEST(ClusterTest, KilledWorkerFailsTheStepAndARestartedOneServes) {
  Cluster c;
  ASSERT_TRUE(c.StartAll()) << c.ps.log() << c.w0.log() << c.w1.log();
  // A step that keeps worker 1 busy for seconds, whose result worker 0 waits for.
  const std::string graph = BusyStepGraph("/job:worker/task:1", "/job:worker/task:0");
  auto session = Connect(c.w0_port, 20000);
  ASSERT_TRUE(session->Create(ParseGraph(graph)).ok());
  auto start = std::chrono::steady_clock::now();
  auto step = std::async(std::launch::async, [&] {
    std::vector<Tensor> out;
    return session->Run({}, {"total"}, {}, &out);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  ASSERT_EQ(step.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
      << "the step finished before the worker was killed: make it longer";
  c.w1.Signal(SIGKILL);
  auto killed = std::chrono::steady_clock::now();
  ASSERT_EQ(step.wait_for(std::chrono::seconds(8)), std::future_status::ready)
      << "the step hangs after its worker died";
  Status s = step.get();
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  EXPECT_LT(secs, 5.0);
  EXPECT_TRUE(s.code() == absl::StatusCode::kUnavailable ||
              s.code() == absl::StatusCode::kAborted)
      << s;
  EXPECT_NE(std::string(s.message()).find("/job:worker/replica:0/task:1"), std::string::npos) << s;
  (void)start;
  c.w1.Wait();

  // The worker comes back on its port: a new session runs a step that uses it.
  c.Start(&c.w1, "worker", 1);
  ASSERT_TRUE(c.w1.WaitListening()) << c.w1.log();
  auto again = Connect(c.w0_port);
  ASSERT_TRUE(again->Create(ParseGraph(kTrainGraph)).ok());
  std::vector<std::vector<float>> got;
  s = TrainTwice(again.get(), &got);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(got[0], std::vector<float>({1 * 0.625f, 2 * 0.8125f, 3 * 1.09375f}));
}

TEST(ClusterTest, CloseSessionReleasesWorkerState) {
  const int p0 = FreePort(), p1 = FreePort();
  ServerDef def;
  auto* job = def.mutable_cluster()->add_job();
  job->set_name("worker");
  (*job->mutable_tasks())[0] = "127.0.0.1:" + std::to_string(p0);
  (*job->mutable_tasks())[1] = "127.0.0.1:" + std::to_string(p1);
  def.set_job_name("worker");
  GrpcServerOptions o0, o1;
  o0.server_def = def;
  o1.server_def = def;
  o1.server_def.set_task_index(1);
  auto s0 = GrpcServer::Create(o0);
  auto s1 = GrpcServer::Create(o1);
  ASSERT_TRUE(s0.ok() && s1.ok()) << s0.status() << s1.status();
  auto session = Connect(p0);
  ASSERT_TRUE(session->Create(ParseGraph(R"pb(
    node { name: "x" op: "Placeholder" device: "/job:worker/task:1"
           attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "y" op: "Mul" input: "x" input: "x" device: "/job:worker/task:1"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "z" op: "Neg" input: "y" device: "/job:worker/task:0"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "bad" op: "MatMul" input: "x" input: "x" device: "/job:worker/task:1"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "bad_neg" op: "Neg" input: "bad" device: "/job:worker/task:0"
           attr { key: "T" value { type: DT_FLOAT } } }
  )pb")).ok());
  std::vector<Tensor> out;
  Status st = session->Run({{"x", Floats({3, -4})}}, {"z"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(Values(out[0]), std::vector<float>({-9, -16}));
  // A step failing on task 1 (MatMul of a vector) while task 0 waits for it: both tasks drop
  // the step's state (CleanupGraph is sent after the reply, so poll for it briefly).
  st = session->Run({{"x", Floats({3, -4})}}, {"bad_neg"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_NE(std::string(st.message()).find("{{node bad}}"), std::string::npos) << st;
  test::PollUntil(
      [&] { return (*s0)->worker()->num_steps() + (*s1)->worker()->num_steps() == 0; });
  EXPECT_EQ((*s0)->worker()->num_steps(), 0);
  EXPECT_EQ((*s1)->worker()->num_steps(), 0);
  EXPECT_EQ((*s0)->master()->NumSessions(), 1);
  EXPECT_EQ((*s1)->worker()->num_sessions(), 1);
  ASSERT_TRUE(session->Close().ok());
  EXPECT_EQ((*s0)->master()->NumSessions(), 0);
  EXPECT_EQ((*s0)->worker()->num_sessions(), 0);
  EXPECT_EQ((*s1)->worker()->num_sessions(), 0);
  EXPECT_EQ((*s1)->worker()->num_steps(), 0);
  EXPECT_EQ((*s0)->worker()->num_steps(), 0);

  // Variables outlive sessions (TF's shared resources) until Reset empties the containers.
  const char kVar[] = R"pb(
    node { name: "v" op: "VarHandleOp" device: "/job:worker/task:1"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 2 } } } }
           attr { key: "shared_name" value { s: "v" } } }
    node { name: "v_value" op: "Const"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                                float_val: 7 float_val: 8 } } } }
    node { name: "v_init" op: "AssignVariableOp" input: "v" input: "v_value"
           attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "v_read" op: "ReadVariableOp" input: "v"
           attr { key: "dtype" value { type: DT_FLOAT } } }
  )pb";
  auto first = Connect(p0);
  ASSERT_TRUE(first->Create(ParseGraph(kVar)).ok());
  ASSERT_TRUE(first->Run({}, {}, {"v_init"}, nullptr).ok());
  ASSERT_TRUE(first->Close().ok());
  auto second = Connect(p0);
  ASSERT_TRUE(second->Create(ParseGraph(kVar)).ok());
  st = second->Run({}, {"v_read"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(Values(out[0]), std::vector<float>({7, 8}));
  ResetResponse reset;
  ASSERT_TRUE((*s0)->master()->Reset(ResetRequest(), &reset).ok());
  EXPECT_EQ((*s0)->master()->NumSessions(), 0);  // Reset closes the master's sessions
  auto third = Connect(p0);
  ASSERT_TRUE(third->Create(ParseGraph(kVar)).ok());
  st = third->Run({}, {"v_read"}, {}, &out);
  EXPECT_TRUE(st.code() == absl::StatusCode::kFailedPrecondition ||
              st.code() == absl::StatusCode::kNotFound)
      << "the variable should be gone after Reset: " << st;
}

}  // namespace
}  // namespace tensorflux
