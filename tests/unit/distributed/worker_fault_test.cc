// Faults and bad input at the Worker over loopback gRPC: a RecvTensor from a task that is down,
// or killed during the step, fails fast with UNAVAILABLE/ABORTED naming it; a failing partition
// aborts the other task's step with its error; bad requests get their canonical codes; the
// token is checked; a tensor over the message limit is refused clearly.
#include "tensorflux/distributed/worker.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "distributed/worker_test_util.h"
#include "gtest/gtest.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace {

using testing::BinaryNode;
using testing::ClientKey;
using testing::FloatConst;
using testing::kClientDevice;
using testing::RawCall;
using testing::RecvNode;
using testing::SendNode;
using testing::TestCluster;
using testing::Values;
using testing::WorkerDevice;

TEST(WorkerTest, RecvTensorFromAGoneTaskFailsFastNamingIt) {
  TestCluster cluster(2, /*down=*/{1});
  // Task 0 waits for a tensor task 1 would send.
  const std::string graph =
      RecvNode("r", WorkerDevice(0), "edge_1_y", WorkerDevice(1), 7) +
      SendNode("r_fetch", "r", WorkerDevice(0), "fetch_r");
  RegisterGraphRequest req;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(graph, req.mutable_graph_def()));
  RegisterGraphResponse reg;
  ASSERT_TRUE(cluster.client(0)->RegisterGraph(req, &reg).ok());
  const auto start = std::chrono::steady_clock::now();
  std::vector<RunGraphResponse> resps;
  auto st = cluster.RunStep({reg.graph_handle()}, 5, {}, &resps, /*timeout_ms=*/5000);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(st[0].code(), absl::StatusCode::kUnavailable) << st[0];
  EXPECT_NE(std::string(st[0].message()).find("/job:worker/replica:0/task:1"), std::string::npos)
      << st[0];
  EXPECT_LT(secs, 5.0);
  ASSERT_TRUE(cluster.CleanupStep(5).ok());
}

TEST(WorkerTest, ATaskKilledDuringTheStepFailsItFastNamingIt) {
  TestCluster cluster(2);
  // Task 1 waits for a tensor of task 0, whose step never runs; task 0 then goes away.
  const std::string graph =
      RecvNode("r", WorkerDevice(1), "edge_1_y", WorkerDevice(0), cluster.incarnation(0)) +
      SendNode("r_fetch", "r", WorkerDevice(1), "fetch_r");
  RegisterGraphRequest req;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(graph, req.mutable_graph_def()));
  RegisterGraphResponse reg;
  ASSERT_TRUE(cluster.client(1)->RegisterGraph(req, &reg).ok());
  RunGraphRequest run;
  run.set_graph_handle(reg.graph_handle());
  run.set_step_id(11);
  RunGraphResponse ran;
  CallOptions opts;
  opts.SetTimeout(20000);
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  Status result;
  const auto start = std::chrono::steady_clock::now();
  cluster.client(1)->RunGraphAsync(&opts, &run, &ran, [&](const Status& s) {
    std::lock_guard<std::mutex> l(mu);
    result = s;
    finished = true;
    cv.notify_all();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  cluster.Kill(0);
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return finished; });
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(result.code() == absl::StatusCode::kUnavailable ||
              result.code() == absl::StatusCode::kAborted)
      << result;
  EXPECT_NE(std::string(result.message()).find("/job:worker/replica:0/task:0"), std::string::npos)
      << result;
  EXPECT_LT(secs, 10.0);
  CleanupGraphRequest cleanup;
  cleanup.set_step_id(11);
  CleanupGraphResponse cleaned;
  ASSERT_TRUE(cluster.client(1)->CleanupGraph(cleanup, &cleaned).ok());
}

TEST(WorkerTest, AFailingPartitionAbortsTheOtherTask) {
  TestCluster cluster(2);
  // Task 0: MatMul of [2,2] by [3,1] fails; its result was to go to task 1, which waits for it.
  const std::string graph =
      FloatConst("a", WorkerDevice(0), {1, 2, 3, 4}, {2, 2}) +
      FloatConst("b", WorkerDevice(0), {1, 2, 3}, {3, 1}) +
      BinaryNode("bad", "MatMul", "a", "b", WorkerDevice(0)) +
      FloatConst("one", WorkerDevice(1), {1}, {}) +
      BinaryNode("c", "Mul", "bad", "one", WorkerDevice(1)) +
      SendNode("c_fetch", "c", WorkerDevice(1), "fetch_c");
  auto handles = cluster.RegisterPartitioned(graph);
  ASSERT_TRUE(handles.ok()) << handles.status();
  const auto start = std::chrono::steady_clock::now();
  std::vector<RunGraphResponse> resps;
  auto st = cluster.RunStep(*handles, 9, {}, &resps, /*timeout_ms=*/20000);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(st[0].code(), absl::StatusCode::kInvalidArgument) << st[0];
  EXPECT_NE(std::string(st[0].message()).find("bad"), std::string::npos) << st[0];
  // Task 1's RecvTensor fails with task 0's error as soon as task 0 aborts its step.
  EXPECT_FALSE(st[1].ok());
  EXPECT_NE(std::string(st[1].message()).find("{{node bad}}"), std::string::npos) << st[1];
  EXPECT_LT(secs, 10.0);
  ASSERT_TRUE(cluster.CleanupStep(9).ok());
}

TEST(WorkerTest, BadRequestsGetCanonicalCodes) {
  TestCluster cluster(1);
  auto w = cluster.client(0);
  // A node on a device the worker does not have.
  RegisterGraphRequest reg;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      FloatConst("c", WorkerDevice(3), {1}, {}), reg.mutable_graph_def()));
  RegisterGraphResponse handle;
  Status s = w->RegisterGraph(reg, &handle);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find("{{node c}}"), std::string::npos) << s;
  // Unknown graph handle.
  RunGraphRequest run;
  run.set_graph_handle("nope");
  RunGraphResponse ran;
  EXPECT_EQ(w->RunGraph(run, &ran).code(), absl::StatusCode::kNotFound);
  DeregisterGraphRequest dereg;
  dereg.set_graph_handle("nope");
  DeregisterGraphResponse dereged;
  EXPECT_EQ(w->DeregisterGraph(dereg, &dereged).code(), absl::StatusCode::kNotFound);
  // A malformed rendezvous key, a key of another task, a stale incarnation.
  RecvTensorRequest recv;
  recv.set_step_id(1);
  recv.set_rendezvous_key("not a key");
  TensorResponse got;
  EXPECT_EQ(w->RecvTensor(recv, &got).code(), absl::StatusCode::kInvalidArgument);
  recv.set_rendezvous_key(ClientKey(WorkerDevice(1), kClientDevice, "t"));
  EXPECT_EQ(w->RecvTensor(recv, &got).code(), absl::StatusCode::kInvalidArgument);
  recv.set_rendezvous_key(ClientKey(WorkerDevice(0), kClientDevice, "t",
                                    cluster.incarnation(0) + 1));
  s = w->RecvTensor(recv, &got);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_NE(std::string(s.message()).find("incarnation"), std::string::npos) << s;
  // A RecvTensor for a key nobody sends ends at its deadline.
  recv.set_rendezvous_key(ClientKey(WorkerDevice(0), kClientDevice, "t", cluster.incarnation(0)));
  s = w->RecvTensor(recv, &got, /*timeout_ms=*/200);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  // A bad feed tensor; a recv_key the step does not send.
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      FloatConst("c", WorkerDevice(0), {1}, {}), reg.mutable_graph_def()));
  ASSERT_TRUE(w->RegisterGraph(reg, &handle).ok());
  run.set_graph_handle(handle.graph_handle());
  run.set_step_id(2);
  run.add_recv_key(ClientKey(WorkerDevice(0), kClientDevice, "never"));
  s = w->RunGraph(run, &ran);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find("was not sent"), std::string::npos) << s;
  run.clear_recv_key();
  run.set_step_id(3);
  NamedTensorProto* feed = run.add_send();
  feed->set_name(ClientKey(kClientDevice, WorkerDevice(0), "f"));
  feed->mutable_tensor()->set_dtype(DT_FLOAT);
  feed->mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(4);
  feed->mutable_tensor()->set_tensor_content("abc");  // 3 bytes for 4 floats
  EXPECT_EQ(w->RunGraph(run, &ran).code(), absl::StatusCode::kInvalidArgument);
  run.clear_send();  // a request with only the one thing wrong: a partial run
  run.set_is_partial(true);
  EXPECT_EQ(w->RunGraph(run, &ran).code(), absl::StatusCode::kUnimplemented);

  // Bytes that are not a RunGraphRequest.
  grpc::Status raw = RawCall(cluster.channel(0), "RunGraph", std::string("\xff\xff\xff", 3));
  EXPECT_EQ(raw.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << raw.error_message();
  EXPECT_NE(raw.error_message().find("Malformed RunGraph request"), std::string::npos);
  ASSERT_TRUE(cluster.CleanupStep(1).ok());
  ASSERT_TRUE(cluster.CleanupStep(2).ok());
  ASSERT_TRUE(cluster.CleanupStep(3).ok());
}

TEST(WorkerTest, TokenIsRequiredWhenSet) {
  GrpcWorkerServiceOptions service;
  service.auth_token = "s3cret";
  GrpcChannelOptions channel;
  channel.auth_token = "s3cret";
  TestCluster cluster(1, {}, service, channel);
  GetStatusResponse status;
  ASSERT_TRUE(cluster.client(0)->GetStatus(GetStatusRequest(), &status).ok());
  ASSERT_EQ(status.device_attributes_size(), 1);
  EXPECT_EQ(status.device_attributes(0).name(), WorkerDevice(0));
  EXPECT_EQ(RawCall(cluster.channel(0), "GetStatus", "").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(RawCall(cluster.channel(0), "GetStatus", "", "wrong!").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(RawCall(cluster.channel(0), "GetStatus", "", "s3cret").ok());
  EXPECT_TRUE(BearerTokenMatches("Bearer abc", "abc"));
  EXPECT_FALSE(BearerTokenMatches("Bearer abd", "abc"));
  EXPECT_FALSE(BearerTokenMatches("bearer abc", "abc"));
  EXPECT_FALSE(BearerTokenMatches("Bearer abcd", "abc"));
}

// A tensor over the service's max_message_size is refused before anything is sent, with the
// sizes in the message (the same check refuses tensors over gRPC's 2^31-1 bytes; tested without
// allocating in tensor_coding_test).
TEST(WorkerTest, ATensorOverTheMessageLimitIsRefusedClearly) {
  GrpcWorkerServiceOptions service;
  service.max_message_size = 1 << 20;
  TestCluster cluster(1, {}, service);
  const std::string dev = WorkerDevice(0);
  const std::string graph =
      absl::StrCat("node { name: 'dims' op: 'Const' device: '", dev,
                   "' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value "
                   "{ tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: ",
                   1 << 19, " } } } } ") +
      FloatConst("v", dev, {0.5}, {}) +
      absl::StrCat("node { name: 'fill' op: 'Fill' input: 'dims' input: 'v' device: '", dev,
                   "' attr { key: 'T' value { type: DT_FLOAT } } } ") +
      SendNode("send", "fill", dev, "big", WorkerDevice(1), cluster.incarnation(0));
  auto handles = cluster.RegisterPartitioned(graph);
  ASSERT_TRUE(handles.ok()) << handles.status();
  std::vector<RunGraphResponse> resps;
  ASSERT_TRUE(cluster.RunStep(*handles, 1, {}, &resps)[0].ok());
  RecvTensorRequest recv;
  recv.set_step_id(1);
  recv.set_rendezvous_key(ClientKey(dev, WorkerDevice(1), "big", cluster.incarnation(0)));
  TensorResponse got;
  Status s = cluster.client(0)->RecvTensor(recv, &got);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(std::string(s.message()).find("A tensor of 2097152 bytes"), std::string::npos) << s;
  EXPECT_NE(std::string(s.message()).find("max_message_size"), std::string::npos) << s;
  ASSERT_TRUE(cluster.CleanupStep(1).ok());
}

}  // namespace
}  // namespace tensorflux
