// Feeds and fetches through a master over gRPC without TensorProto re-encoding
// (master_coding.h, Worker::RunGraphWithTensorsAsync): two in-process GrpcServers; a client
// session on task 0 feeds tensors of several dtypes (string, empty, scalar, a 1 MiB float)
// through Identity nodes on task 0 (the master's in-process worker) and on task 1 (RunGraph over
// gRPC), and gets back exactly what it fed. Bytes that are not a RunStepRequest are refused
// with INVALID_ARGUMENT naming the message; a malformed response is DATA_LOSS naming the master.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distributed/coding_test_util.h"
#include "distributed/worker_test_util.h"
#include "gtest/gtest.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "server_process.h"
#include "tensorflux/distributed/grpc_channel.h"
#include "tensorflux/distributed/grpc_server.h"
#include "tensorflux/master.pb.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace {

using coding_test::ExpectSameTensor;
using coding_test::Iota;

struct Cluster {
  Cluster() {
    ServerDef def;
    auto* job = def.mutable_cluster()->add_job();
    job->set_name("worker");
    for (int i = 0; i < 2; ++i) {
      ports[i] = server_test::FreePort();
      (*job->mutable_tasks())[i] = "127.0.0.1:" + std::to_string(ports[i]);
    }
    def.set_job_name("worker");
    for (int i = 0; i < 2; ++i) {
      GrpcServerOptions o;
      o.server_def = def;
      o.server_def.set_task_index(i);
      auto s = GrpcServer::Create(o);
      EXPECT_TRUE(s.ok()) << s.status();
      if (s.ok()) servers[i] = *std::move(s);
    }
  }
  int ports[2] = {0, 0};
  std::unique_ptr<GrpcServer> servers[2];
};

// x_<i> (Placeholder) -> y_<i> (Identity), both on `task`.
void AddIdentity(GraphDef* g, int i, DataType dtype, int task) {
  const std::string dev = absl::StrCat("/job:worker/task:", task);
  NodeDef* x = g->add_node();
  x->set_name(absl::StrCat("x_", i));
  x->set_op("Placeholder");
  x->set_device(dev);
  (*x->mutable_attr())["dtype"].set_type(dtype);
  NodeDef* y = g->add_node();
  y->set_name(absl::StrCat("y_", i));
  y->set_op("Identity");
  y->set_device(dev);
  y->add_input(x->name());
  (*y->mutable_attr())["T"].set_type(dtype);
}

TEST(RunStepTest, FeedsAndFetchesRoundTripThroughTheMaster) {
  Cluster c;
  ASSERT_TRUE(c.servers[0] && c.servers[1]);
  Tensor strings(DT_STRING, TensorShape({3}));
  strings.flat<std::string>()[0] = "";
  strings.flat<std::string>()[1] = std::string("a\0b", 3);
  strings.flat<std::string>()[2] = std::string(5000, 'z');
  const std::vector<Tensor> values = {
      Iota<float>(TensorShape({512, 512}), 0.5f),  // 1 MiB: sent from its buffer
      Iota<int64_t>(TensorShape({2, 3}), -3),
      Tensor::Scalar<bool>(true),
      Tensor(DT_FLOAT, TensorShape({0, 3})),
      strings,
      Iota<uint8_t>(TensorShape({7}), 250),
  };
  GraphDef g;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
  for (int task = 0; task < 2; ++task) {
    for (size_t v = 0; v < values.size(); ++v) {
      const int i = static_cast<int>(task * values.size() + v);
      AddIdentity(&g, i, values[v].dtype(), task);
      feeds.emplace_back(absl::StrCat("x_", i), values[v]);
      fetches.push_back(absl::StrCat("y_", i));
    }
  }
  fetches.push_back("x_0:0");  // a fed tensor fetched directly
  SessionOptions opts;
  opts.target = c.servers[0]->target();
  opts.config.set_operation_timeout_in_ms(20000);
  auto session = NewSession(opts);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(g).ok());
  for (int step = 0; step < 2; ++step) {  // the second step runs the compiled signature
    std::vector<Tensor> out;
    Status s = (*session)->Run(feeds, fetches, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(out.size(), fetches.size());
    for (size_t i = 0; i < feeds.size(); ++i) {
      SCOPED_TRACE(fetches[i]);
      ExpectSameTensor(out[i], feeds[i].second);
    }
    ExpectSameTensor(out.back(), values[0]);
  }
  // An uninitialized feed is the client's error, before anything is sent.
  std::vector<Tensor> out;
  Status s = (*session)->Run({{"x_1", Tensor()}}, {"y_1"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  ASSERT_TRUE((*session)->Close().ok());
}

TEST(RunStepTest, MalformedRequestIsInvalidArgument) {
  Cluster c;
  ASSERT_TRUE(c.servers[0]);
  auto channel = NewGrpcChannel("127.0.0.1:" + std::to_string(c.ports[0]), GrpcChannelOptions());
  ASSERT_TRUE(channel.ok()) << channel.status();
  grpc::Status raw = testing::RawCall(*channel, "/tensorflux.MasterService/RunStep",
                                      std::string("\x12\x05\x0a\x01", 4));  // truncated feed
  EXPECT_EQ(raw.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << raw.error_message();
  EXPECT_NE(raw.error_message().find("Malformed RunStep request"), std::string::npos)
      << raw.error_message();
  // A well-formed request for a session that does not exist: the master's own error.
  RunStepRequest req;
  req.set_session_handle("nope");
  raw = testing::RawCall(*channel, "/tensorflux.MasterService/RunStep", req.SerializeAsString());
  EXPECT_EQ(raw.error_code(), grpc::StatusCode::NOT_FOUND) << raw.error_message();
}

// A master that answers RunStep with `run_step_bytes` and every other call with a
// CreateSessionResponse of handle "h".
class FakeMaster : public grpc::CallbackGenericService {
 public:
  explicit FakeMaster(std::string run_step_bytes) : run_step_bytes_(std::move(run_step_bytes)) {}

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    class Reactor : public grpc::ServerGenericBidiReactor {
     public:
      explicit Reactor(std::string answer) : answer_(std::move(answer)) { StartRead(&request_); }
      void OnReadDone(bool ok) override {
        if (!ok) return Finish(grpc::Status(grpc::StatusCode::INTERNAL, "no request"));
        grpc::Slice slice(answer_);
        response_ = grpc::ByteBuffer(&slice, 1);
        StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
      }
      void OnDone() override { delete this; }

     private:
      std::string answer_;
      grpc::ByteBuffer request_, response_;
    };
    const bool run_step = ctx->method() == "/tensorflux.MasterService/RunStep";
    CreateSessionResponse created;  // for CreateSession (and nothing for CloseSession)
    created.set_session_handle("h");
    return new Reactor(run_step ? run_step_bytes_ : created.SerializeAsString());
  }

 private:
  const std::string run_step_bytes_;
};

TEST(RunStepTest, MalformedResponseIsDataLossNamingTheMaster) {
  RunStepResponse good;
  Iota<float>(TensorShape({8}), 1.0f).AsProtoTensorContent(good.add_tensor()->mutable_tensor());
  good.mutable_tensor(0)->set_name("y_0");
  const std::string bytes = good.SerializeAsString();
  for (const std::string& answer : {bytes.substr(0, bytes.size() - 3), std::string("\x0a\x02\x12", 3)}) {
    PinGrpcCallbackThreads();  // a callback-API server in a test process
    FakeMaster fake(answer);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterCallbackGenericService(&fake);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    ASSERT_NE(server, nullptr);
    SessionOptions opts;
    opts.target = "grpc://127.0.0.1:" + std::to_string(port);
    opts.config.set_operation_timeout_in_ms(5000);
    auto session = NewSession(opts);
    ASSERT_TRUE(session.ok()) << session.status();
    GraphDef g;
    AddIdentity(&g, 0, DT_FLOAT, 0);
    ASSERT_TRUE((*session)->Create(g).ok());
    std::vector<Tensor> out;
    Status s = (*session)->Run({{"x_0", Iota<float>(TensorShape({8}), 1.0f)}}, {"y_0"}, {}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
    EXPECT_NE(std::string(s.message()).find("Malformed RunStep response"), std::string::npos) << s;
    EXPECT_NE(std::string(s.message()).find(std::to_string(port)), std::string::npos) << s;
    (*session)->Close().IgnoreError();
    server->Shutdown();
  }
}

}  // namespace
}  // namespace tensorflux
