// tensorflux-server as a process: flags, clean shutdown on SIGTERM/SIGINT, the bind rule, the
// token, mutual TLS (a CA and certificates made with openssl at test time) and the message size
// limit; and a client session ("grpc://") round trip: Create, Extend, Run with feeds and
// fetches, ListDevices, Close.
#include <cstdlib>
#include <filesystem>

#include "gtest/gtest.h"
#include "google/protobuf/text_format.h"
#include "server_process.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace {

using server_test::FreePort;
using server_test::ServerProcess;
using server_test::TempPath;
using server_test::WriteTempFile;

GraphDef ParseGraph(const std::string& text) {
  GraphDef g;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &g)) << text;
  return g;
}

// y = x * 2 (float placeholder x of any shape).
const char kDoubleGraph[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node {
    name: "two" op: "Const"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } }
  }
  node { name: "y" op: "Mul" input: "x" input: "two" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

std::vector<std::string> SingleTaskFlags(int port) {
  return {"--cluster", "worker=127.0.0.1:" + std::to_string(port), "--job", "worker", "--task",
          "0"};
}

std::unique_ptr<Session> Connect(int port, ConfigProto config = ConfigProto()) {
  SessionOptions opts;
  opts.target = "grpc://127.0.0.1:" + std::to_string(port);
  if (config.operation_timeout_in_ms() == 0) config.set_operation_timeout_in_ms(10000);
  opts.config = config;
  auto s = NewSession(opts);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

Tensor Floats(std::vector<float> v) {
  Tensor t(DT_FLOAT, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.flat<float>()[i] = v[i];
  return t;
}

// Runs y = 2x through `session`; the status, and the values when OK.
Status RunDouble(Session* session, std::vector<float> x, std::vector<float>* y) {
  std::vector<Tensor> out;
  TX_RETURN_IF_ERROR(session->Run({{"x", Floats(x)}}, {"y"}, {}, &out));
  y->assign(out[0].flat<float>().data(), out[0].flat<float>().data() + out[0].NumElements());
  return OkStatus();
}

TEST(ServerTest, SigtermAndSigintStopCleanly) {
  for (int sig : {SIGTERM, SIGINT}) {
    const int port = FreePort();
    ServerProcess server;
    server.Start(SingleTaskFlags(port));
    ASSERT_TRUE(server.WaitListening()) << server.log();
    EXPECT_NE(server.log().find("/job:worker/replica:0/task:0 listening on grpc://127.0.0.1:" +
                                std::to_string(port)),
              std::string::npos)
        << server.log();
    server.Signal(sig);
    EXPECT_EQ(server.Wait(), 0) << server.log();
    EXPECT_NE(server.log().find("stopped"), std::string::npos) << server.log();
  }
}

TEST(ServerTest, BadFlagsAndRefusedBind) {
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  const int port = FreePort();
  const std::string cluster = "worker=127.0.0.1:" + std::to_string(port);
  const std::vector<Case> cases = {
      {{"--cluster", cluster}, "--cluster needs --job"},
      {{"--cluster", cluster, "--job", "ps"}, "NOT_FOUND"},
      {{"--cluster", cluster, "--job", "worker", "--task", "x"}, "--task wants an integer"},
      {{"--cluster", cluster, "--job", "worker", "--tls_cert", "/nonexistent"},
       "--tls_cert and --tls_key go together"},
      {{"--cluster", cluster, "--job", "worker", "--token_file", "/nonexistent/token"},
       "--token_file: cannot read"},
      {{"--cluster", cluster, "--job", "worker", "--intra_op_threads", "-1"},
       "--intra_op_threads out of range: -1"},
      {{"--cluster", cluster, "--job", "worker", "--inter_op_threads", "two"},
       "--inter_op_threads wants an integer"},
      {{"--cluster", cluster, "--job", "worker", "--inter_op_threads", "-2"},
       "--inter_op_threads out of range: -2"},
      // Anyone on the network could run code: refused without TLS and a token.
      {{"--cluster", cluster, "--job", "worker", "--bind", "0.0.0.0"},
       "FAILED_PRECONDITION: refusing to serve on non-loopback address '0.0.0.0'"},
  };
  for (const Case& c : cases) {
    ServerProcess server;
    server.Start(c.args, {"TF_CONFIG="});
    EXPECT_EQ(server.Wait(), 1) << server.log();
    EXPECT_NE(server.log().find(c.expect), std::string::npos)
        << "want '" << c.expect << "' in: " << server.log();
  }
  // With --insecure the same bind is allowed.
  ServerProcess server;
  server.Start({"--cluster", cluster, "--job", "worker", "--bind", "0.0.0.0", "--insecure"});
  ASSERT_TRUE(server.WaitListening()) << server.log();
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(), 0);
}

// --intra_op_threads / --inter_op_threads size the task's pools: 8 + 8 threads against 1 + 1 (an
// intra-op pool of one thread is none: kernels run on the calling thread).
TEST(ServerTest, ThreadFlagsSizeThePools) {
  auto count_threads = [](const std::vector<std::string>& flags) {
    std::vector<std::string> args = SingleTaskFlags(FreePort());
    args.insert(args.end(), flags.begin(), flags.end());
    ServerProcess server;
    server.Start(args, {"TF_CONFIG="});
    EXPECT_TRUE(server.WaitListening()) << server.log();
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(
             "/proc/" + std::to_string(server.pid()) + "/task")) {
      (void)e;
      ++n;
    }
    server.Signal(SIGTERM);
    EXPECT_EQ(server.Wait(), 0) << server.log();
    return n;
  };
  const int few = count_threads({"--intra_op_threads", "1", "--inter_op_threads", "1"});
  const int many = count_threads({"--intra_op_threads", "8", "--inter_op_threads", "8"});
  // 15 more pool threads; gRPC's own threads come and go, hence the margin.
  EXPECT_GE(many - few, 12) << few << " threads with 1 + 1, " << many << " with 8 + 8";
}

TEST(ServerTest, TfConfigGivesTheTask) {
  const int port = FreePort();
  const std::string tf_config =
      "TF_CONFIG={\"cluster\": {\"worker\": [\"127.0.0.1:" + std::to_string(port) +
      "\"]}, \"task\": {\"type\": \"worker\", \"index\": 0}}";
  ServerProcess server;
  server.Start({}, {tf_config});
  ASSERT_TRUE(server.WaitListening()) << server.log();
  auto session = Connect(port);
  ASSERT_TRUE(session->Create(ParseGraph(kDoubleGraph)).ok());
  std::vector<float> y;
  ASSERT_TRUE(RunDouble(session.get(), {1.5f}, &y).ok());
  EXPECT_EQ(y, std::vector<float>({3.0f}));
}

// TF_CONFIG as TF's operators write it for the other task types: a "chief" job next to the
// workers (its task serves as /job:chief), and an "evaluator" that the cluster does not list
// (it serves alone on --port, and without --port says why it cannot start).
TEST(ServerTest, TfConfigChiefAndEvaluatorTasks) {
  const int chief_port = FreePort(), worker_port = FreePort(), eval_port = FreePort();
  const std::string cluster = "\"cluster\": {\"chief\": [\"127.0.0.1:" +
                              std::to_string(chief_port) + "\"], \"worker\": [\"127.0.0.1:" +
                              std::to_string(worker_port) + "\"]}";
  auto tf_config = [&](const std::string& type) {
    return "TF_CONFIG={" + cluster + ", \"task\": {\"type\": \"" + type +
           "\", \"index\": 0}, \"environment\": \"cloud\"}";
  };
  ServerProcess chief, worker, evaluator, no_port;
  chief.Start({}, {tf_config("chief")});
  worker.Start({}, {tf_config("worker")});
  evaluator.Start({"--port", std::to_string(eval_port)}, {tf_config("evaluator")});
  no_port.Start({}, {tf_config("evaluator")});
  ASSERT_TRUE(chief.WaitListening()) << chief.log();
  ASSERT_TRUE(worker.WaitListening()) << worker.log();
  ASSERT_TRUE(evaluator.WaitListening()) << evaluator.log();
  EXPECT_EQ(no_port.Wait(), 1);
  EXPECT_NE(no_port.log().find("evaluator, which is not in its cluster"), std::string::npos)
      << no_port.log();

  // The chief's master places over both tasks; y = 2x runs on the worker.
  auto session = Connect(chief_port);
  GraphDef on_worker = ParseGraph(kDoubleGraph);
  for (NodeDef& n : *on_worker.mutable_node()) n.set_device("/job:worker/task:0");
  ASSERT_TRUE(session->Create(on_worker).ok());
  std::vector<float> y;
  Status s = RunDouble(session.get(), {1.5f}, &y);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(y, std::vector<float>({3.0f}));
  std::vector<DeviceAttributes> devices;
  ASSERT_TRUE(session->ListDevices(&devices).ok());
  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d.name());
  EXPECT_EQ(names, (std::vector<std::string>{"/job:chief/replica:0/task:0/device:CPU:0",
                                             "/job:worker/replica:0/task:0/device:CPU:0"}));
  // The evaluator is a cluster of its own.
  auto alone = Connect(eval_port);
  ASSERT_TRUE(alone->Create(ParseGraph(kDoubleGraph)).ok());
  ASSERT_TRUE(alone->ListDevices(&devices).ok());
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name(), "/job:evaluator/replica:0/task:0/device:CPU:0");
  s = RunDouble(alone.get(), {-2.0f}, &y);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(y, std::vector<float>({-4.0f}));
}

TEST(ServerTest, SessionRoundTrip) {
  const int port = FreePort();
  ServerProcess server;
  server.Start(SingleTaskFlags(port));
  ASSERT_TRUE(server.WaitListening()) << server.log();
  auto session = Connect(port);
  ASSERT_NE(session, nullptr);
  ASSERT_TRUE(session->Create(ParseGraph(kDoubleGraph)).ok());
  std::vector<float> y;
  Status s = RunDouble(session.get(), {1, -2.5f, 4}, &y);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(y, std::vector<float>({2, -5, 8}));

  // Extend: z = y * y; fetch z twice and the fed x once, in that order.
  ASSERT_TRUE(session->Extend(ParseGraph(R"pb(
    node { name: "z" op: "Mul" input: "y" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
  )pb")).ok());
  std::vector<Tensor> out;
  s = session->Run({{"x", Floats({3})}}, {"z", "x:0", "z:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].flat<float>()[0], 36.0f);
  EXPECT_EQ(out[1].flat<float>()[0], 3.0f);
  EXPECT_EQ(out[2].flat<float>()[0], 36.0f);

  // The master's errors come back with their codes.
  s = session->Run({{"x", Floats({3})}}, {"nope:0"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  Tensor ints(DT_INT32, TensorShape({1}));
  ints.flat<int32_t>()[0] = 1;
  s = session->Run({{"x", ints}}, {"y"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find("must be a float tensor"), std::string::npos) << s;
  s = session->Extend(ParseGraph(R"pb(node { name: "y" op: "NoOp" })pb"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;

  std::vector<DeviceAttributes> devices;
  ASSERT_TRUE(session->ListDevices(&devices).ok());
  ASSERT_FALSE(devices.empty());
  EXPECT_EQ(devices[0].name(), "/job:worker/replica:0/task:0/device:CPU:0");

  ASSERT_TRUE(session->Close().ok());
  s = RunDouble(session.get(), {1}, &y);
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
}

TEST(ServerTest, TokenCheckedOnEveryCall) {
  const int port = FreePort();
  const std::string token = WriteTempFile("token", "s3cret-token\n");
  const std::string wrong = WriteTempFile("token", "other-token\n");
  std::vector<std::string> flags = SingleTaskFlags(port);
  flags.insert(flags.end(), {"--token_file", token});
  ServerProcess server;
  server.Start(flags);
  ASSERT_TRUE(server.WaitListening()) << server.log();

  unsetenv("TENSORFLUX_TOKEN_FILE");
  auto anonymous = Connect(port);
  Status s = anonymous->Create(ParseGraph(kDoubleGraph));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  setenv("TENSORFLUX_TOKEN_FILE", wrong.c_str(), 1);
  auto impostor = Connect(port);
  s = impostor->Create(ParseGraph(kDoubleGraph));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  EXPECT_EQ(std::string(s.message()).find("s3cret"), std::string::npos) << s;

  setenv("TENSORFLUX_TOKEN_FILE", token.c_str(), 1);
  auto client = Connect(port);
  unsetenv("TENSORFLUX_TOKEN_FILE");
  ASSERT_TRUE(client->Create(ParseGraph(kDoubleGraph)).ok());
  std::vector<float> y;
  s = RunDouble(client.get(), {21}, &y);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(y, std::vector<float>({42}));
}

TEST(ServerTest, MessageSizeLimit) {
  const int port = FreePort();
  std::vector<std::string> flags = SingleTaskFlags(port);
  flags.insert(flags.end(), {"--max_message_bytes", "4096"});
  ServerProcess server;
  server.Start(flags);
  ASSERT_TRUE(server.WaitListening()) << server.log();
  auto session = Connect(port);
  ASSERT_TRUE(session->Create(ParseGraph(kDoubleGraph)).ok());
  std::vector<float> y;
  ASSERT_TRUE(RunDouble(session.get(), std::vector<float>(100, 1.0f), &y).ok());
  // 40 KB of feed in one RunStep request: refused by the server, the server lives on.
  Status s = RunDouble(session.get(), std::vector<float>(10000, 1.0f), &y);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(std::string(s.message()).find("larger than max"), std::string::npos) << s;
  ASSERT_TRUE(RunDouble(session.get(), {5}, &y).ok());
  EXPECT_EQ(y, std::vector<float>({10}));
}

// openssl at test time: a CA, a server certificate for 127.0.0.1 and a client certificate.
struct Pki {
  std::string dir, ca, server_cert, server_key, client_cert, client_key, other_cert, other_key;
};

bool MakePki(Pki* p) {
  p->dir = TempPath("pki");
  std::filesystem::create_directories(p->dir);
  const std::string d = p->dir;
  const std::string script =
      "set -e; cd " + d + "\n"
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem -days 2 "
      "  -subj /CN=tx-test-ca 2>/dev/null\n"
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout other_ca.key -out other_ca.pem -days 2 "
      "  -subj /CN=tx-other-ca 2>/dev/null\n"
      "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext\n"
      "for who in server client; do\n"
      "  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout $who.key -out $who.csr -subj /CN=$who "
      "    2>/dev/null\n"
      "  openssl x509 -req -in $who.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
      "    -extfile san.ext -out $who.pem 2>/dev/null\n"
      "done\n"
      "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout other.key -out other.csr -subj /CN=other "
      "  2>/dev/null\n"
      "openssl x509 -req -in other.csr -CA other_ca.pem -CAkey other_ca.key -CAcreateserial "
      "  -days 2 -extfile san.ext -out other.pem 2>/dev/null\n";
  const std::string script_path = WriteTempFile("pki.sh", script);
  if (std::system(("bash " + script_path).c_str()) != 0) return false;
  p->ca = d + "/ca.pem";
  p->server_cert = d + "/server.pem";
  p->server_key = d + "/server.key";
  p->client_cert = d + "/client.pem";
  p->client_key = d + "/client.key";
  p->other_cert = d + "/other.pem";
  p->other_key = d + "/other.key";
  return true;
}

TEST(ServerTest, MutualTls) {
  if (std::system("command -v openssl >/dev/null") != 0) GTEST_SKIP() << "no openssl";
  Pki pki;
  ASSERT_TRUE(MakePki(&pki));
  const int port = FreePort();
  std::vector<std::string> flags = SingleTaskFlags(port);
  flags.insert(flags.end(), {"--tls_cert", pki.server_cert, "--tls_key", pki.server_key,
                             "--tls_ca", pki.ca});
  ServerProcess server;
  server.Start(flags);
  ASSERT_TRUE(server.WaitListening()) << server.log();

  // timeout_ms: a refused client retries until then, so the refused cases keep it short; the
  // served one gets room for a loaded machine (TLS handshakes, Create, a step).
  auto try_client = [&](const std::string& ca, const std::string& cert, const std::string& key,
                        int64_t timeout_ms = 3000) {
    auto set = [](const char* name, const std::string& v) {
      if (v.empty()) {
        unsetenv(name);
      } else {
        setenv(name, v.c_str(), 1);
      }
    };
    set("TENSORFLUX_TLS_CA", ca);
    set("TENSORFLUX_TLS_CERT", cert);
    set("TENSORFLUX_TLS_KEY", key);
    ConfigProto config;
    config.set_operation_timeout_in_ms(timeout_ms);
    auto session = Connect(port, config);
    set("TENSORFLUX_TLS_CA", "");
    set("TENSORFLUX_TLS_CERT", "");
    set("TENSORFLUX_TLS_KEY", "");
    Status s = session->Create(ParseGraph(kDoubleGraph));
    if (!s.ok()) return s;
    std::vector<float> y;
    TX_RETURN_IF_ERROR(RunDouble(session.get(), {7}, &y));
    if (y != std::vector<float>({14})) return errors::Internal("wrong value");
    return OkStatus();
  };
  // A client certificate signed by the server's CA: served.
  Status s = try_client(pki.ca, pki.client_cert, pki.client_key, /*timeout_ms=*/60000);
  EXPECT_TRUE(s.ok()) << s;
  // Plain text, TLS without a client certificate, a certificate of another CA: refused.
  EXPECT_EQ(try_client("", "", "").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(try_client(pki.ca, "", "").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(try_client(pki.ca, pki.other_cert, pki.other_key).code(),
            absl::StatusCode::kUnavailable);
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(), 0) << server.log();
}

TEST(ServerTest, UnknownTargetAndUnreachableMaster) {
  SessionOptions opts;
  opts.target = "grpcx://127.0.0.1:1";
  auto s = NewSession(opts);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.status().message()).find("\"grpc://...\""), std::string::npos)
      << s.status();
  opts.target = "grpc://127.0.0.1";
  EXPECT_EQ(NewSession(opts).status().code(), absl::StatusCode::kInvalidArgument);
  // Nobody listens there: UNAVAILABLE naming the master, within the deadline.
  auto session = Connect(FreePort());
  Status c = session->Create(ParseGraph(kDoubleGraph));
  EXPECT_EQ(c.code(), absl::StatusCode::kUnavailable) << c;
  EXPECT_NE(std::string(c.message()).find("master 127.0.0.1:"), std::string::npos) << c;
}

}  // namespace
}  // namespace tensorflux
