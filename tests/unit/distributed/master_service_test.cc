// The MasterService's threading (grpc_master_service.h): RunStep is served on gRPC's callback
// threads, of which there are only a few, so a step that waits must not hold one. An in-process
// GrpcServer (one task) runs more blocked steps (dequeues of an empty queue) than gRPC has
// callback threads while other sessions are created, run and listed; the dequeues then get
// exactly the values enqueued. A client whose deadline passes cancels its step on the worker
// (its step state is gone long before the step's own 60 s timeout). A session over a task that
// never answers fails after the default 10 s when the config sets no timeout. CloseSession or
// Reset cancels the session's steps in flight.
#include <algorithm>
#include <chrono>
#include <future>
#include <thread>

#include "distributed/cluster_test_util.h"
#include "distributed/worker_test_util.h"
#include "gtest/gtest.h"
#include "poll_util.h"
#include "server_process.h"
#include "tensorflux/distributed/grpc_channel.h"
#include "tensorflux/distributed/grpc_server.h"
#include "tensorflux/distributed/worker.h"
#include "tensorflux/master.pb.h"
#include "tensorflux/master_service.grpc.pb.h"

namespace tensorflux {
namespace {

using cluster_test::Connect;
using cluster_test::Floats;
using cluster_test::ParseGraph;

// A FIFO queue of floats with an enqueue of "x" and a dequeue "deq".
constexpr char kQueueGraph[] = R"pb(
  node { name: "q" op: "FIFOQueueV2"
         attr { key: "component_types" value { list { type: DT_FLOAT } } }
         attr { key: "capacity" value { i: 100 } } }
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "enq" op: "QueueEnqueueV2" input: "q" input: "x"
         attr { key: "Tcomponents" value { list { type: DT_FLOAT } } } }
  node { name: "deq" op: "QueueDequeueV2" input: "q"
         attr { key: "component_types" value { list { type: DT_FLOAT } } } }
)pb";

// Task 0 of job "worker" on `port`; `dead_port` > 0: a task 1 there, never started.
std::unique_ptr<GrpcServer> StartServer(int port, int dead_port = 0) {
  ServerDef def;
  auto* job = def.mutable_cluster()->add_job();
  job->set_name("worker");
  (*job->mutable_tasks())[0] = "127.0.0.1:" + std::to_string(port);
  if (dead_port > 0) (*job->mutable_tasks())[1] = "127.0.0.1:" + std::to_string(dead_port);
  def.set_job_name("worker");
  GrpcServerOptions o;
  o.server_def = def;
  auto s = GrpcServer::Create(o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

// A MasterService stub for the server on `port` (null when the channel cannot be made).
std::unique_ptr<MasterService::Stub> MasterStub(int port) {
  auto channel = NewGrpcChannel("127.0.0.1:" + std::to_string(port), GrpcChannelOptions());
  EXPECT_TRUE(channel.ok()) << channel.status();
  return channel.ok() ? MasterService::NewStub(*channel) : nullptr;
}

TEST(MasterServiceTest, WaitingStepsHoldNoGrpcThread) {
  const int port = server_test::FreePort();
  std::unique_ptr<GrpcServer> server = StartServer(port);
  ASSERT_NE(server, nullptr);
  auto queue = Connect(port, 20000);
  ASSERT_TRUE(queue->Create(ParseGraph(kQueueGraph)).ok());
  // More waiting steps than gRPC has callback threads (2 to 16, by the cores).
  constexpr int kWaiting = 20;
  std::vector<std::future<StatusOr<float>>> dequeues;
  for (int i = 0; i < kWaiting; ++i) {
    dequeues.push_back(std::async(std::launch::async, [&]() -> StatusOr<float> {
      std::vector<Tensor> out;
      TX_RETURN_IF_ERROR(queue->Run({}, {"deq"}, {}, &out));
      return out[0].scalar<float>();
    }));
  }
  ASSERT_TRUE(test::PollUntil([&] { return server->worker()->num_steps() == kWaiting; }))
      << server->worker()->num_steps() << " steps started";

  // Another client is served meanwhile: a new session, a step, the device list (were the
  // waiting steps holding every callback thread, it would never be: the 30 s only bounds that).
  auto other = Connect(port, 30000);
  ASSERT_TRUE(other->Create(ParseGraph(R"pb(
    node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {}
                                                float_val: 2.5 } } } }
  )pb")).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(other->Run({}, {"c"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 2.5f);
  std::vector<DeviceAttributes> devices;
  ASSERT_TRUE(other->ListDevices(&devices).ok());
  EXPECT_FALSE(devices.empty());
  for (auto& d : dequeues) {
    EXPECT_EQ(d.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  }

  // Each waiting step gets one of the values, each value once.
  for (int i = 0; i < kWaiting; ++i) {
    ASSERT_TRUE(queue->Run({{"x", Floats({static_cast<float>(i)})}}, {}, {"enq"}, nullptr).ok());
  }
  std::vector<float> got;
  for (auto& d : dequeues) {
    ASSERT_EQ(d.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    StatusOr<float> v = d.get();
    ASSERT_TRUE(v.ok()) << v.status();
    got.push_back(*v);
  }
  std::sort(got.begin(), got.end());
  for (int i = 0; i < kWaiting; ++i) EXPECT_EQ(got[i], static_cast<float>(i));
  EXPECT_TRUE(test::PollUntil([&] { return server->worker()->num_steps() == 0; }));
}

TEST(MasterServiceTest, AClientDeadlineCancelsTheStep) {
  const int port = server_test::FreePort();
  std::unique_ptr<GrpcServer> server = StartServer(port);
  ASSERT_NE(server, nullptr);
  std::unique_ptr<MasterService::Stub> stub = MasterStub(port);
  ASSERT_NE(stub, nullptr);
  auto deadline = [](int ms) {
    return std::chrono::system_clock::now() + std::chrono::milliseconds(ms);
  };
  CreateSessionRequest create;
  *create.mutable_graph_def() = ParseGraph(kQueueGraph);
  CreateSessionResponse created;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline(10000));
    ASSERT_TRUE(stub->CreateSession(&ctx, create, &created).ok());
  }
  RunStepRequest run;
  run.set_session_handle(created.session_handle());
  run.add_fetch("deq:0");
  run.mutable_options()->set_timeout_in_ms(60000);
  RunStepRequest enqueue;
  enqueue.set_session_handle(created.session_handle());
  auto* feed = enqueue.add_feed();
  feed->set_name("x:0");
  Floats({3.5f}).AsProtoTensorContent(feed->mutable_tensor());
  enqueue.add_target("enq");
  // An enqueue, then a dequeue that gets its value.
  auto enqueue_and_dequeue = [&] {
    for (RunStepRequest* r : {&enqueue, &run}) {
      grpc::ClientContext ctx;
      ctx.set_deadline(deadline(60000));
      RunStepResponse response;
      ASSERT_TRUE(stub->RunStep(&ctx, *r, &response).ok());
      if (r == &run) {
        ASSERT_EQ(response.tensor_size(), 1);
        EXPECT_EQ(testing::Values(response.tensor(0).tensor()), std::vector<float>{3.5f});
      }
    }
  };
  // First, so that the step below only runs (compiling it, RegisterGraph included, could take
  // a loaded machine past the call's deadline before the step reached the worker).
  enqueue_and_dequeue();
  ASSERT_TRUE(test::PollUntil([&] { return server->worker()->num_steps() == 0; }));
  // A dequeue of the empty queue: the step may wait 60 s, its call only 3 s.
  auto call = std::async(std::launch::async, [&] {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline(3000));
    RunStepResponse response;
    return stub->RunStep(&ctx, run, &response);
  });
  ASSERT_TRUE(test::PollUntil([&] { return server->worker()->num_steps() == 1; }));
  ASSERT_EQ(call.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(call.get().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The cancelled step is gone from the worker at once, not at its own timeout.
  const auto cancelled = std::chrono::steady_clock::now();
  EXPECT_TRUE(test::PollUntil([&] { return server->worker()->num_steps() == 0; }));
  EXPECT_LT(test::SecondsSince(cancelled),
            20.0);
  // The session still serves: a value enqueued is dequeued.
  enqueue_and_dequeue();
}

// CloseSession or Reset while steps wait on the session's queue: the steps end at once with
// CANCELLED naming the closed session (TF's MasterSession::Close cancels its steps), not at their
// own 60 s timeout; nothing is left on the worker. Before the fix they waited out the timeout.
class CloseWithStepsInFlight : public ::testing::TestWithParam<const char*> {};

TEST_P(CloseWithStepsInFlight, CancelsTheSteps) {
  const std::string action = GetParam();
  const int port = server_test::FreePort();
  std::unique_ptr<GrpcServer> server = StartServer(port);
  ASSERT_NE(server, nullptr);
  std::unique_ptr<MasterService::Stub> stub = MasterStub(port);
  ASSERT_NE(stub, nullptr);
  auto call = [](int seconds) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
    return ctx;
  };
  CreateSessionRequest create;
  *create.mutable_graph_def() = ParseGraph(kQueueGraph);
  CreateSessionResponse created;
  ASSERT_TRUE(stub->CreateSession(call(30).get(), create, &created).ok());
  RunStepRequest dequeue;
  dequeue.set_session_handle(created.session_handle());
  dequeue.add_fetch("deq:0");
  dequeue.mutable_options()->set_timeout_in_ms(60000);

  constexpr int kWaiting = 3;
  std::vector<std::future<grpc::Status>> steps;
  for (int i = 0; i < kWaiting; ++i) {
    steps.push_back(std::async(std::launch::async, [&] {
      RunStepResponse response;
      return stub->RunStep(call(60).get(), dequeue, &response);
    }));
  }
  ASSERT_TRUE(test::PollUntil([&] { return server->worker()->num_steps() == kWaiting; }))
      << server->worker()->num_steps() << " steps started";
  grpc::Status closed;
  if (action == "CloseSession") {
    CloseSessionRequest close;
    close.set_session_handle(created.session_handle());
    CloseSessionResponse resp;
    closed = stub->CloseSession(call(30).get(), close, &resp);
  } else {
    ResetResponse resp;
    closed = stub->Reset(call(30).get(), ResetRequest(), &resp);
  }
  ASSERT_TRUE(closed.ok()) << closed.error_message();
  for (auto& step : steps) {
    ASSERT_EQ(step.wait_for(std::chrono::seconds(20)), std::future_status::ready)
        << "a step of the closed session still runs";
    grpc::Status s = step.get();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::CANCELLED) << s.error_message();
    EXPECT_NE(s.error_message().find("session " + created.session_handle() + " was closed"),
              std::string::npos)
        << s.error_message();
  }
  EXPECT_TRUE(test::PollUntil([&] { return server->worker()->num_steps() == 0; }));
  // The handle is gone: TF's NOT_FOUND wording.
  RunStepResponse response;
  EXPECT_EQ(stub->RunStep(call(30).get(), dequeue, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

INSTANTIATE_TEST_SUITE_P(MasterServiceTest, CloseWithStepsInFlight,
                         ::testing::Values("CloseSession", "Reset"));

TEST(MasterServiceTest, ASessionOverADeadTaskFailsAfterTheDefaultTimeout) {
  const int port = server_test::FreePort();
  const int dead_port = server_test::FreePort();
  std::unique_ptr<GrpcServer> server = StartServer(port, dead_port);
  ASSERT_NE(server, nullptr);
  auto session = Connect(port, /*timeout_ms=*/0);  // no operation_timeout_in_ms
  const auto start = std::chrono::steady_clock::now();
  Status s = session->Create(ParseGraph(kQueueGraph));
  const double seconds =
      test::SecondsSince(start);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(std::string(s.message()).find("/job:worker/replica:0/task:1"), std::string::npos)
      << s;
  EXPECT_GT(seconds, 9.0);   // asked again until the default ...
  EXPECT_LT(seconds, 15.0);  // ... and not longer (it was 20 s)
}

}  // namespace
}  // namespace tensorflux
