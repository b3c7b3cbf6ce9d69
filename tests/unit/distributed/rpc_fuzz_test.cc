// Raw bytes at every RPC of both services of a GrpcServer (MasterService: CreateSession,
// ExtendSession, RunStep, CloseSession, ListDevices, Reset; WorkerService: GetStatus,
// RegisterGraph, RunGraph, RecvTensor, DeregisterGraph, CleanupGraph, CleanupAll): bytes that are
// not the method's request message are INVALID_ARGUMENT "Malformed <Method> request"; bytes that
// happen to parse get the service's own answer (any canonical code but UNKNOWN); a request over
// the server's message limit is RESOURCE_EXHAUSTED; the server still answers afterwards; with a
// token, a call without it is UNAUTHENTICATED whatever its bytes.
#include <random>
#include <string>
#include <vector>

#include "distributed/worker_test_util.h"
#include "gtest/gtest.h"
#include "server_process.h"
#include "tensorflux/distributed/grpc_channel.h"
#include "tensorflux/distributed/grpc_server.h"
#include "tensorflux/master.pb.h"
#include "tensorflux/worker.pb.h"

namespace tensorflux {
namespace {

struct Method {
  const char* path;  // "/tensorflux.MasterService/CreateSession"
  const char* name;  // "CreateSession"
  // Whether `bytes` parse as the method's request message (protobuf's own parser).
  bool (*parses)(const std::string& bytes);
};

template <typename Req>
bool Parses(const std::string& bytes) {
  Req req;
  return req.ParseFromString(bytes);
}

const Method kMethods[] = {
    {"/tensorflux.MasterService/CreateSession", "CreateSession", Parses<CreateSessionRequest>},
    {"/tensorflux.MasterService/ExtendSession", "ExtendSession", Parses<ExtendSessionRequest>},
    {"/tensorflux.MasterService/RunStep", "RunStep", Parses<RunStepRequest>},
    {"/tensorflux.MasterService/CloseSession", "CloseSession", Parses<CloseSessionRequest>},
    {"/tensorflux.MasterService/ListDevices", "ListDevices", Parses<ListDevicesRequest>},
    {"/tensorflux.MasterService/Reset", "Reset", Parses<ResetRequest>},
    {"/tensorflux.WorkerService/GetStatus", "GetStatus", Parses<GetStatusRequest>},
    {"/tensorflux.WorkerService/RegisterGraph", "RegisterGraph", Parses<RegisterGraphRequest>},
    {"/tensorflux.WorkerService/RunGraph", "RunGraph", Parses<RunGraphRequest>},
    {"/tensorflux.WorkerService/RecvTensor", "RecvTensor", Parses<RecvTensorRequest>},
    {"/tensorflux.WorkerService/DeregisterGraph", "DeregisterGraph",
     Parses<DeregisterGraphRequest>},
    {"/tensorflux.WorkerService/CleanupGraph", "CleanupGraph", Parses<CleanupGraphRequest>},
    {"/tensorflux.WorkerService/CleanupAll", "CleanupAll", Parses<CleanupAllRequest>},
};

// A one-task server ("/job:worker/task:0") on a free port.
std::unique_ptr<GrpcServer> StartServer(int* port,
                                        ServerSecurityOptions security = ServerSecurityOptions()) {
  ServerDef def;
  auto* job = def.mutable_cluster()->add_job();
  job->set_name("worker");
  *port = server_test::FreePort();
  (*job->mutable_tasks())[0] = "127.0.0.1:" + std::to_string(*port);
  def.set_job_name("worker");
  GrpcServerOptions o;
  o.server_def = def;
  o.security = security;
  auto s = GrpcServer::Create(o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

// Byte strings to send: fixed bad ones (a truncated varint, a field with a length past the
// end, an invalid wire type, a group that never ends) and seeded random ones of 1..200 bytes.
std::vector<std::string> BadInputs() {
  std::vector<std::string> in = {std::string("\xff\xff\xff", 3),
                                 std::string("\x0a\x7f\x01", 3),
                                 std::string("\x0f\x00", 2),
                                 std::string("\x0b\x10\x01", 3),
                                 std::string("\x12\x05\x0a\x01", 4)};
  std::mt19937 rng(20261130);
  for (int i = 0; i < 12; ++i) {
    std::string b(1 + rng() % 200, '\0');
    for (char& c : b) c = static_cast<char>(rng() & 0xff);
    in.push_back(std::move(b));
  }
  return in;
}

TEST(RpcFuzzTest, RawBytesAtEveryRpcGetAClearError) {
  int port = 0;
  auto server = StartServer(&port);
  ASSERT_TRUE(server);
  auto channel = NewGrpcChannel("127.0.0.1:" + std::to_string(port), GrpcChannelOptions());
  ASSERT_TRUE(channel.ok()) << channel.status();
  int malformed = 0;
  for (const Method& m : kMethods) {
    for (const std::string& bytes : BadInputs()) {
      grpc::Status s = testing::RawCall(*channel, m.path, bytes);
      SCOPED_TRACE(std::string(m.name) + " with " + std::to_string(bytes.size()) + " bytes");
      if (!m.parses(bytes)) {
        ++malformed;
        EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
        EXPECT_NE(s.error_message().find(std::string("Malformed ") + m.name + " request"),
                  std::string::npos)
            << s.error_message();
      } else {
        EXPECT_NE(s.error_code(), grpc::StatusCode::UNKNOWN) << s.error_message();
      }
    }
  }
  // Most random bytes are not a message: the INVALID_ARGUMENT branch is what ran.
  EXPECT_GT(malformed, 10 * static_cast<int>(std::size(kMethods)));
  // The server still serves both services.
  EXPECT_TRUE(testing::RawCall(*channel, "GetStatus", "").ok());
  ListDevicesRequest list;
  EXPECT_TRUE(testing::RawCall(*channel, "/tensorflux.MasterService/ListDevices",
                               list.SerializeAsString())
                  .ok());
}

TEST(RpcFuzzTest, RequestsOverTheLimitAreResourceExhausted) {
  int port = 0;
  ServerSecurityOptions limited;
  limited.max_message_bytes = 64 << 10;
  auto server = StartServer(&port, limited);
  ASSERT_TRUE(server);
  auto channel = NewGrpcChannel("127.0.0.1:" + std::to_string(port), GrpcChannelOptions());
  ASSERT_TRUE(channel.ok()) << channel.status();
  // A well-formed request (a long session handle) of 100 KiB at every method.
  CloseSessionRequest big;
  big.set_session_handle(std::string(100 << 10, 'x'));
  for (const Method& m : kMethods) {
    grpc::Status s = testing::RawCall(*channel, m.path, big.SerializeAsString());
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << m.name << ": " << s.error_message();
  }
  EXPECT_TRUE(testing::RawCall(*channel, "GetStatus", "").ok());
}

// With a token, the token is checked first: junk without it is UNAUTHENTICATED at every RPC
// (not a parse error that tells a stranger about the service), junk with it is malformed.
TEST(RpcFuzzTest, TheTokenIsCheckedBeforeTheBytes) {
  int port = 0;
  ServerSecurityOptions with_token;
  with_token.token_file = server_test::WriteTempFile("token", "s3cret\n");
  auto server = StartServer(&port, with_token);
  ASSERT_TRUE(server);
  auto channel = NewGrpcChannel("127.0.0.1:" + std::to_string(port), GrpcChannelOptions());
  ASSERT_TRUE(channel.ok()) << channel.status();
  const std::string junk("\xff\xff\xff", 3);
  for (const Method& m : kMethods) {
    EXPECT_EQ(testing::RawCall(*channel, m.path, junk).error_code(),
              grpc::StatusCode::UNAUTHENTICATED)
        << m.name;
    grpc::Status s = testing::RawCall(*channel, m.path, junk, "s3cret");
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << m.name << ": "
                                                                   << s.error_message();
  }
}

}  // namespace
}  // namespace tensorflux
