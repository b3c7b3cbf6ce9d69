// RecvTensorStream over loopback gRPC (recv_tensor_stream.h, GrpcRemoteWorker,
// GrpcWorkerService): tensors of every kind (odd sizes cut into many pieces, strings, empty,
// scalars) arrive intact; the client takes the stream only for keys whose last tensor was
// large; a stream waiting for its tensor ends at its deadline, on cancellation and when the
// step is cleaned up; an aborted step on the receiving worker cancels its stream in flight; a
// bad request is INVALID_ARGUMENT and the token is checked. Bad streams: recv_tensor_stream_test.
#include <chrono>
#include <thread>

#include "absl/synchronization/notification.h"
#include "distributed/worker_test_util.h"
#include "gtest/gtest.h"
#include "poll_util.h"

namespace tensorflux {
namespace {

using testing::ClientKey;
using testing::FloatConst;
using testing::RawCall;
using testing::RecvNode;
using testing::SendNode;
using testing::TestCluster;
using testing::WorkerDevice;

std::string Const(const std::string& name, const std::string& dtype, const std::string& tensor) {
  return absl::StrCat("node { name: '", name, "' op: 'Const' device: '", WorkerDevice(0),
                      "' attr { key: 'dtype' value { type: ", dtype,
                      " } } attr { key: 'value' value { tensor { dtype: ", dtype, " ", tensor,
                      " } } } } ");
}

// An int32 Range 0..n on task 0, sent under `key`.
std::string RangeSent(const std::string& key, int64_t n, uint64_t incarnation) {
  const std::string scalar = "tensor_shape { } int_val: ";
  return Const(key + "_start", "DT_INT32", scalar + "0") +
         Const(key + "_limit", "DT_INT32", absl::StrCat(scalar, n)) +
         Const(key + "_delta", "DT_INT32", scalar + "1") +
         absl::StrCat("node { name: '", key, "' op: 'Range' input: '", key, "_start' input: '",
                      key, "_limit' input: '", key, "_delta' device: '", WorkerDevice(0),
                      "' attr { key: 'Tidx' value { type: DT_INT32 } } } ") +
         SendNode(key + "_send", key, WorkerDevice(0), key, WorkerDevice(1), incarnation,
                  "DT_INT32");
}

GrpcChannelOptions StreamAlways(int64_t chunk_bytes) {
  GrpcChannelOptions o;
  o.recv_stream_min_bytes = 0;
  o.recv_chunk_bytes = chunk_bytes;
  return o;
}

// Runs task 0's part of `graph` as step `step` and receives `key` with `client`.
Status RunAndRecv(TestCluster* cluster, WorkerInterface* client, const std::string& handle,
                  int64_t step, const std::string& key, TensorResponse* got) {
  std::vector<RunGraphResponse> resps;
  TX_RETURN_IF_ERROR(cluster->RunStep({handle}, step, {}, &resps)[0]);
  RecvTensorRequest recv;
  recv.set_step_id(step);
  recv.set_rendezvous_key(ClientKey(WorkerDevice(0), WorkerDevice(1), key,
                                    cluster->incarnation(0)));
  return client->RecvTensor(recv, got, 30000);
}

void ExpectRange(const Tensor& t, int64_t n) {
  ASSERT_EQ(t.dtype(), DT_INT32);
  ASSERT_EQ(t.NumElements(), n);
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) wrong += t.data<int32_t>()[i] != static_cast<int32_t>(i);
  EXPECT_EQ(wrong, 0);
}

TEST(RecvStreamTest, TensorsOfEveryKindArriveIntact) {
  TestCluster cluster(1);
  const uint64_t inc = cluster.incarnation(0);
  const std::string dev = WorkerDevice(0);
  const std::string graph =
      RangeSent("odd", 2501, inc) +  // 10004 bytes: ten 1000-byte pieces and one of 4
      RangeSent("exact", 2000, inc) +  // 8000 bytes: eight pieces
      Const("s", "DT_STRING",
            "tensor_shape { dim { size: 3 } } string_val: '' string_val: 'abc' "
            "string_val: 'a longer string, with\\000a nul'") +
      SendNode("s_send", "s", dev, "s", WorkerDevice(1), inc, "DT_STRING") +
      FloatConst("e", dev, {}, {0, 4}) + SendNode("e_send", "e", dev, "e", WorkerDevice(1), inc) +
      FloatConst("f", dev, {2.5}, {}) + SendNode("f_send", "f", dev, "f", WorkerDevice(1), inc);
  auto handles = cluster.RegisterPartitioned(graph);
  ASSERT_TRUE(handles.ok()) << handles.status();
  auto client = cluster.client_with(0, StreamAlways(1000));
  ASSERT_NE(client, nullptr);
  std::vector<RunGraphResponse> resps;
  ASSERT_TRUE(cluster.RunStep(*handles, 1, {}, &resps)[0].ok());
  auto recv = [&](const std::string& key, TensorResponse* got) {
    RecvTensorRequest r;
    r.set_step_id(1);
    r.set_rendezvous_key(ClientKey(dev, WorkerDevice(1), key, inc));
    return client->RecvTensor(r, got, 30000);
  };
  TensorResponse odd, exact, s, e, f;
  ASSERT_TRUE(recv("odd", &odd).ok());
  ExpectRange(odd.tensor, 2501);
  EXPECT_GT(odd.send_start_micros, 0);
  EXPECT_FALSE(odd.is_dead);
  ASSERT_TRUE(recv("exact", &exact).ok());
  ExpectRange(exact.tensor, 2000);
  ASSERT_TRUE(recv("s", &s).ok());
  ASSERT_EQ(s.tensor.dtype(), DT_STRING);
  ASSERT_EQ(s.tensor.NumElements(), 3);
  EXPECT_EQ(s.tensor.flat<std::string>()[0], "");
  EXPECT_EQ(s.tensor.flat<std::string>()[1], "abc");
  EXPECT_EQ(s.tensor.flat<std::string>()[2], std::string("a longer string, with\0a nul", 27));
  ASSERT_TRUE(recv("e", &e).ok());
  EXPECT_EQ(e.tensor.dtype(), DT_FLOAT);
  EXPECT_EQ(e.tensor.shape(), TensorShape({0, 4}));
  ASSERT_TRUE(recv("f", &f).ok());
  ASSERT_EQ(f.tensor.NumElements(), 1);
  EXPECT_EQ(f.tensor.data<float>()[0], 2.5f);
  EXPECT_EQ(std::dynamic_pointer_cast<GrpcRemoteWorker>(client)->recv_streams(), 5);
  ASSERT_TRUE(cluster.CleanupStep(1).ok());
}

// With the default options a key goes over the stream once its last tensor had 2 MiB or more.
TEST(RecvStreamTest, TheStreamIsTakenForKeysWhoseLastTensorWasLarge) {
  TestCluster cluster(1);
  const uint64_t inc = cluster.incarnation(0);
  auto big = cluster.RegisterPartitioned(RangeSent("big", 600000, inc));  // 2.4 MB
  auto small = cluster.RegisterPartitioned(RangeSent("small", 1000, inc));
  ASSERT_TRUE(big.ok() && small.ok());
  auto client = cluster.client_with(0, GrpcChannelOptions());
  auto* remote = dynamic_cast<GrpcRemoteWorker*>(client.get());
  ASSERT_NE(remote, nullptr);
  const int64_t expected_streams[] = {0, 1, 2};
  for (int64_t step = 1; step <= 3; ++step) {
    TensorResponse got;
    ASSERT_TRUE(RunAndRecv(&cluster, client.get(), (*big)[0], step, "big", &got).ok());
    ExpectRange(got.tensor, 600000);
    EXPECT_EQ(remote->recv_streams(), expected_streams[step - 1]);
    ASSERT_TRUE(RunAndRecv(&cluster, client.get(), (*small)[0], 10 + step, "small", &got).ok());
    ExpectRange(got.tensor, 1000);
    EXPECT_EQ(remote->recv_streams(), expected_streams[step - 1]);
    ASSERT_TRUE(cluster.CleanupStep(step).ok());
    ASSERT_TRUE(cluster.CleanupStep(10 + step).ok());
  }
  // recv_stream_min_bytes -1: never.
  GrpcChannelOptions never;
  never.recv_stream_min_bytes = -1;
  auto unary = cluster.client_with(0, never);
  for (int64_t step = 4; step <= 5; ++step) {
    TensorResponse got;
    ASSERT_TRUE(RunAndRecv(&cluster, unary.get(), (*big)[0], step, "big", &got).ok());
    ExpectRange(got.tensor, 600000);
    ASSERT_TRUE(cluster.CleanupStep(step).ok());
  }
  EXPECT_EQ(dynamic_cast<GrpcRemoteWorker*>(unary.get())->recv_streams(), 0);
}

// A stream waiting for a tensor nobody sends: its deadline, a cancellation, the step's cleanup.
TEST(RecvStreamTest, AWaitingStreamEndsAtItsDeadlineOnCancelAndOnCleanup) {
  TestCluster cluster(1);
  auto client = cluster.client_with(0, StreamAlways(0));
  RecvTensorRequest recv;
  recv.set_step_id(7);
  recv.set_rendezvous_key(
      ClientKey(WorkerDevice(0), WorkerDevice(1), "never", cluster.incarnation(0)));
  TensorResponse got;
  Status s = client->RecvTensor(recv, &got, /*timeout_ms=*/200);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("RecvTensorStream on"), std::string_view::npos) << s;

  // Starts a call for `key`, ends it with `end_it` 100 ms later, and returns its status (well
  // before its 30 s deadline). Each call waits on its own key: the server drops an abandoned
  // waiter only once the client's cancellation reaches it, which a loaded machine delays past
  // the next call (seen as "Duplicated recv" in a make test run).
  auto ended_by = [&](const std::string& key, const std::function<void(CallOptions*)>& end_it) {
    recv.set_rendezvous_key(
        ClientKey(WorkerDevice(0), WorkerDevice(1), key, cluster.incarnation(0)));
    CallOptions opts;
    opts.SetTimeout(30000);
    absl::Notification done;
    Status result;
    const auto start = std::chrono::steady_clock::now();
    client->RecvTensorAsync(&opts, &recv, &got, [&](const Status& st) {
      result = st;
      done.Notify();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    end_it(&opts);
    done.WaitForNotification();
    EXPECT_LT(test::SecondsSince(start),
              20.0);
    return result;
  };
  s = ended_by("never_cancelled", [](CallOptions* opts) { opts->StartCancel(); });
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
  s = ended_by("never_cleaned_up",
               [&](CallOptions*) { ASSERT_TRUE(cluster.CleanupStep(7).ok()); });
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_NE(s.message().find("was cleaned up"), std::string_view::npos) << s;
}

// Task 1 receives from task 0 over the stream (the cluster's channels stream every
// RecvTensor); task 0 never sends, and cleaning up task 1's step cancels the stream in flight:
// task 1's RunGraph ends at once with ABORTED instead of waiting for the call's deadline.
TEST(RecvStreamTest, AnAbortedStepCancelsItsStreamsInFlight) {
  TestCluster cluster(2, {}, GrpcWorkerServiceOptions(), StreamAlways(0));
  const std::string graph =
      RecvNode("r", WorkerDevice(1), "edge", WorkerDevice(0), cluster.incarnation(0)) +
      SendNode("r_fetch", "r", WorkerDevice(1), "fetch_r");
  auto handles = cluster.RegisterPartitioned(graph);
  ASSERT_TRUE(handles.ok()) << handles.status();
  Status step;
  const auto start = std::chrono::steady_clock::now();
  std::thread run([&] {
    std::vector<RunGraphResponse> resps;
    step = cluster.RunStep(*handles, 3, {}, &resps, /*timeout_ms=*/30000)[1];
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CleanupGraphRequest cleanup;
  cleanup.set_step_id(3);
  CleanupGraphResponse cleaned;
  ASSERT_TRUE(cluster.worker(1)->CleanupGraph(cleanup, &cleaned).ok());
  run.join();
  EXPECT_EQ(step.code(), absl::StatusCode::kAborted) << step;
  EXPECT_LT(test::SecondsSince(start), 20.0);
  ASSERT_TRUE(cluster.CleanupStep(3).ok());
}

TEST(RecvStreamTest, BadRequestsAndMissingTokensAreRefused) {
  GrpcWorkerServiceOptions service;
  service.auth_token = "s3cret";
  GrpcChannelOptions channel = StreamAlways(-5);
  channel.auth_token = "s3cret";
  EXPECT_EQ(ValidateChannelOptions(channel).code(), absl::StatusCode::kInvalidArgument);
  channel.recv_chunk_bytes = 0;
  TestCluster cluster(1, {}, service, channel);
  RecvTensorStreamRequest bad;
  bad.set_chunk_bytes(-1);
  grpc::Status raw = RawCall(cluster.channel(0), "RecvTensorStream", bad.SerializeAsString(),
                             "s3cret");
  EXPECT_EQ(raw.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << raw.error_message();
  EXPECT_NE(raw.error_message().find("chunk_bytes"), std::string::npos) << raw.error_message();
  raw = RawCall(cluster.channel(0), "RecvTensorStream", std::string("\xff\xff", 2), "s3cret");
  EXPECT_EQ(raw.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << raw.error_message();
  EXPECT_NE(raw.error_message().find("Malformed RecvTensorStream request"), std::string::npos);
  raw = RawCall(cluster.channel(0), "RecvTensorStream", "", "wrong!");
  EXPECT_EQ(raw.error_code(), grpc::StatusCode::UNAUTHENTICATED) << raw.error_message();
  // With the right token the stream serves (a key of another task: INVALID_ARGUMENT from the
  // worker, after authentication).
  RecvTensorRequest recv;
  recv.set_step_id(1);
  recv.set_rendezvous_key(ClientKey(WorkerDevice(1), WorkerDevice(0), "t"));
  TensorResponse got;
  Status s = cluster.client(0)->RecvTensor(recv, &got);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("RecvTensorStream on"), std::string_view::npos) << s;
}

}  // namespace
}  // namespace tensorflux
