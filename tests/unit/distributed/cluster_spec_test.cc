// ClusterSpec from the --cluster flag, a ClusterDef and TF_CONFIG (valid forms and every kind of
// bad input), task/device name -> address, the channel options' checks and the channel cache,
// and the worker protos' TF field numbers.
#include "tensorflux/distributed/cluster_spec.h"

#include <cstdlib>

#include "gtest/gtest.h"
#include "tensorflux/distributed/grpc_channel.h"
#include "tensorflux/worker.pb.h"

namespace tensorflux {
namespace {

void ExpectInvalid(const Status& s, const std::string& substr) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find(substr), std::string::npos) << s;
}

TEST(ClusterSpecTest, FromFlag) {
  auto c = ClusterSpec::FromFlag("ps=127.0.0.1:2222;worker=localhost:2223,[::1]:2224");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->jobs(), (std::vector<std::string>{"ps", "worker"}));
  EXPECT_EQ(c->num_tasks("worker"), 2);
  EXPECT_EQ(c->num_tasks("chief"), 0);
  EXPECT_EQ(*c->TaskAddress("worker", 1), "[::1]:2224");
  EXPECT_EQ(*c->AddressOf("/job:ps/replica:0/task:0/device:CPU:0"), "127.0.0.1:2222");
  EXPECT_EQ(*c->AddressOf("/job:worker/task:0"), "localhost:2223");
  EXPECT_EQ(c->TaskNames(), (std::vector<std::string>{"/job:ps/replica:0/task:0",
                                                      "/job:worker/replica:0/task:0",
                                                      "/job:worker/replica:0/task:1"}));
  EXPECT_EQ(*c->ToFlag(), "ps=127.0.0.1:2222;worker=localhost:2223,[::1]:2224");
  EXPECT_EQ(c->AddressOf("/job:worker/task:2").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(c->AddressOf("/job:chief/task:0").status().code(), absl::StatusCode::kNotFound);
  ExpectInvalid(c->AddressOf("/device:CPU:0").status(), "does not name a task");
  ExpectInvalid(c->AddressOf("/job:ps/task:x").status(), "");
}

TEST(ClusterSpecTest, FromFlagRejectsBadInput) {
  ExpectInvalid(ClusterSpec::FromFlag("").status(), "Empty cluster");
  ExpectInvalid(ClusterSpec::FromFlag("ps").status(), "expected \"job=host:port");
  ExpectInvalid(ClusterSpec::FromFlag("ps=").status(), "has no tasks");
  ExpectInvalid(ClusterSpec::FromFlag("ps=h:1;ps=h:2").status(), "given twice");
  ExpectInvalid(ClusterSpec::FromFlag("1ps=h:1").status(), "Bad job name '1ps'");
  ExpectInvalid(ClusterSpec::FromFlag("p-s=h:1").status(), "Bad job name");
  ExpectInvalid(ClusterSpec::FromFlag("ps=host").status(), "no port");
  ExpectInvalid(ClusterSpec::FromFlag("ps=:22").status(), "empty host");
  ExpectInvalid(ClusterSpec::FromFlag("ps=h:0").status(), "1 to 65535");
  ExpectInvalid(ClusterSpec::FromFlag("ps=h:65536").status(), "1 to 65535");
  ExpectInvalid(ClusterSpec::FromFlag("ps=h:-1").status(), "1 to 65535");
  ExpectInvalid(ClusterSpec::FromFlag("ps=h:12x").status(), "1 to 65535");
  ExpectInvalid(ClusterSpec::FromFlag("ps=h/x:1").status(), "bad character");
  ExpectInvalid(ClusterSpec::FromFlag("ps=[::1:1").status(), "brackets");
  ExpectInvalid(ClusterSpec::FromFlag("ps=h:1,,h:2").status(), "/job:ps/task:1");
  ExpectInvalid(ClusterSpec::FromFlag("ps=h:1;").status(), "Bad job ''");
}

TEST(ClusterSpecTest, ClusterDefRoundTrip) {
  ClusterDef def;
  JobDef* job = def.add_job();
  job->set_name("worker");
  (*job->mutable_tasks())[0] = "h0:1000";
  (*job->mutable_tasks())[3] = "h3:1003";  // sparse indices are allowed
  auto c = ClusterSpec::FromClusterDef(def);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->task_indices("worker"), (std::vector<int>{0, 3}));
  EXPECT_TRUE(c->HasTask("worker", 3));
  EXPECT_FALSE(c->HasTask("worker", 1));
  const ClusterDef back = c->ToClusterDef();
  ASSERT_EQ(back.job_size(), 1);
  EXPECT_EQ(back.job(0).name(), "worker");
  EXPECT_EQ(back.job(0).tasks().size(), 2u);
  EXPECT_EQ(back.job(0).tasks().at(3), "h3:1003");
  EXPECT_TRUE(*ClusterSpec::FromClusterDef(back) == *c);
  ExpectInvalid(c->ToFlag().status(), "sparse");

  ClusterDef dup = def;
  dup.add_job()->set_name("worker");
  ExpectInvalid(ClusterSpec::FromClusterDef(dup).status(), "given twice");
  ClusterDef empty_job;
  empty_job.add_job()->set_name("ps");
  ExpectInvalid(ClusterSpec::FromClusterDef(empty_job).status(), "no tasks");
  ClusterDef negative;
  JobDef* n = negative.add_job();
  n->set_name("ps");
  (*n->mutable_tasks())[-1] = "h:1";
  ExpectInvalid(ClusterSpec::FromClusterDef(negative).status(), "Bad task index -1");
}

TEST(ClusterSpecTest, TfConfig) {
  auto c = ParseTfConfig(R"({"cluster": {"ps": ["h0:1"], "worker": ["h1:2", "h2:3"]},
                            "task": {"type": "worker", "index": 1}, "environment": "cloud"})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c->cluster.ToFlag(), "ps=h0:1;worker=h1:2,h2:3");
  EXPECT_EQ(c->task_type, "worker");
  EXPECT_EQ(c->task_index, 1);

  // A client's TF_CONFIG has no task; a job may map indices to addresses.
  auto client = ParseTfConfig(R"({"cluster": {"worker": {"0": "h:1", "5": "h:6"}}})");
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_FALSE(client->task_type.has_value());
  EXPECT_EQ(client->cluster.task_indices("worker"), (std::vector<int>{0, 5}));
  // "index" defaults to 0.
  auto chief = ParseTfConfig(R"({"cluster": {"chief": ["h:1"]}, "task": {"type": "chief"}})");
  ASSERT_TRUE(chief.ok()) << chief.status();
  EXPECT_EQ(chief->task_index, 0);

  EXPECT_TRUE(chief->in_cluster);
  // TF's evaluator may be outside the cluster (operators leave it out); no other task may.
  auto evaluator = ParseTfConfig(R"({"cluster": {"chief": ["h:1"], "worker": ["h:2"]},
                                     "task": {"type": "evaluator", "index": 0}})");
  ASSERT_TRUE(evaluator.ok()) << evaluator.status();
  EXPECT_EQ(evaluator->task_type, "evaluator");
  EXPECT_FALSE(evaluator->in_cluster);
  EXPECT_EQ(evaluator->cluster.jobs(), (std::vector<std::string>{"chief", "worker"}));
  auto listed = ParseTfConfig(R"({"cluster": {"evaluator": ["h:1"]}, "task": {"type": "evaluator"}})");
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_TRUE(listed->in_cluster);
  ExpectInvalid(ParseTfConfig(R"({"cluster": {"evaluator": ["h:1"]},
                                 "task": {"type": "evaluator", "index": 1}})").status(),
                "/job:evaluator/task:1 is not in its cluster");

  auto cluster_only = ClusterSpec::FromJson(R"({"ps": ["h0:1"]})");
  ASSERT_TRUE(cluster_only.ok()) << cluster_only.status();
  EXPECT_EQ(*cluster_only->TaskAddress("ps", 0), "h0:1");
}

TEST(ClusterSpecTest, TfConfigRejectsBadInput) {
  ExpectInvalid(ParseTfConfig("{").status(), "not valid JSON");
  ExpectInvalid(ParseTfConfig("[1]").status(), "must be a JSON object");
  ExpectInvalid(ParseTfConfig(R"({"task": {}})").status(), "no \"cluster\"");
  ExpectInvalid(ParseTfConfig(R"({"cluster": []})").status(), "must be an object of jobs");
  ExpectInvalid(ParseTfConfig(R"({"cluster": {}})").status(), "has no jobs");
  ExpectInvalid(ParseTfConfig(R"({"cluster": {"ps": "h:1"}})").status(), "must be a list");
  ExpectInvalid(ParseTfConfig(R"({"cluster": {"ps": []}})").status(), "has no tasks");
  ExpectInvalid(ParseTfConfig(R"({"cluster": {"ps": [1]}})").status(), "\"host:port\" string");
  ExpectInvalid(ParseTfConfig(R"({"cluster": {"ps": ["h"]}})").status(), "no port");
  ExpectInvalid(ParseTfConfig(R"({"cluster": {"ps": {"x": "h:1"}}})").status(),
                "not a non-negative integer");
  ExpectInvalid(ParseTfConfig(R"({"cluster": {"ps": {"-1": "h:1"}}})").status(),
                "not a non-negative integer");
  ExpectInvalid(ParseTfConfig(R"({"cluster": {"p s": ["h:1"]}})").status(), "Bad job name");
  const std::string cluster = R"("cluster": {"worker": ["h:1"]})";
  ExpectInvalid(ParseTfConfig("{" + cluster + R"(, "task": 3})").status(), "must be an object");
  ExpectInvalid(ParseTfConfig("{" + cluster + R"(, "task": {"index": 0}})").status(),
                "needs a \"type\"");
  ExpectInvalid(ParseTfConfig("{" + cluster + R"(, "task": {"type": "worker", "index": -1}})")
                    .status(),
                "non-negative integer");
  ExpectInvalid(ParseTfConfig("{" + cluster + R"(, "task": {"type": "worker", "index": "0"}})")
                    .status(),
                "non-negative integer");
  ExpectInvalid(ParseTfConfig("{" + cluster + R"(, "task": {"type": "worker", "index": 1}})")
                    .status(),
                "/job:worker/task:1 is not in its cluster");
  ExpectInvalid(ParseTfConfig("{" + cluster + R"(, "task": {"type": "ps"}})").status(),
                "not in its cluster");
}

TEST(ClusterSpecTest, TfConfigFromEnvironment) {
  ::unsetenv("TF_CONFIG");
  auto none = TfConfigFromEnvironment();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  ::setenv("TF_CONFIG", R"({"cluster": {"ps": ["h:1"]}, "task": {"type": "ps", "index": 0}})", 1);
  auto some = TfConfigFromEnvironment();
  ASSERT_TRUE(some.ok()) << some.status();
  ASSERT_TRUE(some->has_value());
  EXPECT_EQ((*some)->task_type, "ps");
  ::setenv("TF_CONFIG", "not json", 1);
  ExpectInvalid(TfConfigFromEnvironment().status(), "TF_CONFIG is not valid JSON");
  ::unsetenv("TF_CONFIG");
}

TEST(GrpcChannelTest, OptionsAreChecked) {
  GrpcChannelOptions o;
  EXPECT_TRUE(ValidateChannelOptions(o).ok());
  o.client_cert_pem = "cert";
  ExpectInvalid(ValidateChannelOptions(o), "both a client certificate and its key");
  o.client_key_pem = "key";
  ExpectInvalid(ValidateChannelOptions(o), "without enabling TLS");
  o.use_tls = true;
  EXPECT_TRUE(ValidateChannelOptions(o).ok());
  o.auth_token = "line\nbreak";
  ExpectInvalid(ValidateChannelOptions(o), "printable ASCII");
  o.auth_token = "s3cret";
  o.max_message_size = 0;
  ExpectInvalid(ValidateChannelOptions(o), "max_message_size");
  o.max_message_size = int64_t{1} << 31;
  ExpectInvalid(ValidateChannelOptions(o), "max_message_size");
  o.max_message_size = (int64_t{1} << 31) - 1;
  EXPECT_TRUE(ValidateChannelOptions(o).ok());
  EXPECT_EQ(BearerAuthorization("s3cret"), "Bearer s3cret");
}

TEST(GrpcChannelTest, CacheFindsOneChannelPerTask) {
  auto spec = ClusterSpec::FromFlag("ps=127.0.0.1:1;worker=127.0.0.1:2,127.0.0.1:3");
  ASSERT_TRUE(spec.ok());
  auto cache = GrpcChannelCache::Create(*spec, GrpcChannelOptions());
  ASSERT_TRUE(cache.ok()) << cache.status();
  auto a = (*cache)->FindChannel("/job:worker/replica:0/task:1");
  auto b = (*cache)->FindChannel("/job:worker/replica:0/task:1/device:CPU:0");
  auto c = (*cache)->FindChannel("/job:worker/replica:0/task:0");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_NE(a->get(), c->get());
  EXPECT_EQ(*(*cache)->TargetAddress("/job:ps/task:0/device:CPU:0"), "127.0.0.1:1");
  EXPECT_EQ((*cache)->FindChannel("/job:worker/task:2").status().code(),
            absl::StatusCode::kNotFound);
  ExpectInvalid((*cache)->FindChannel("/device:CPU:0").status(), "does not name a task");
  EXPECT_EQ((*cache)->ListWorkers().size(), 3u);

  GrpcChannelOptions bad;
  bad.max_message_size = -2;
  ExpectInvalid(GrpcChannelCache::Create(*spec, bad).status(), "max_message_size");
}

TEST(GrpcChannelTest, StatusConversionKeepsCodeAndMessage) {
  Status s = errors::Unavailable("task gone");
  Status back = FromGrpcStatus(ToGrpcStatus(s));
  EXPECT_EQ(back.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(back.message(), "task gone");
  EXPECT_TRUE(FromGrpcStatus(ToGrpcStatus(OkStatus())).ok());
}

// The field numbers are TensorFlow's (worker.proto), so the wire bytes are: a hand-encoded
// message parses into the expected fields.
TEST(WorkerProtoTest, TensorFlowFieldNumbers) {
  // RunGraphRequest: graph_handle = 1 "g", step_id = 2 (7), session_handle = 8 "s",
  // create_worker_session_called = 10 (true), recv_key = 4 "k".
  const std::string wire("\x0a\x01g\x10\x07\x42\x01s\x50\x01\x22\x01k", 13);
  RunGraphRequest r;
  ASSERT_TRUE(r.ParseFromString(wire));
  EXPECT_EQ(r.graph_handle(), "g");
  EXPECT_EQ(r.step_id(), 7);
  EXPECT_EQ(r.session_handle(), "s");
  EXPECT_TRUE(r.create_worker_session_called());
  ASSERT_EQ(r.recv_key_size(), 1);
  EXPECT_EQ(r.recv_key(0), "k");
  // RecvTensorRequest: step_id = 1 (3), rendezvous_key = 2 "x", request_id = 7 (9).
  RecvTensorRequest q;
  ASSERT_TRUE(q.ParseFromString(std::string("\x08\x03\x12\x01x\x38\x09", 7)));
  EXPECT_EQ(q.step_id(), 3);
  EXPECT_EQ(q.rendezvous_key(), "x");
  EXPECT_EQ(q.request_id(), 9);
  // RegisterGraphRequest: session_handle = 1, create_worker_session_called = 6.
  RegisterGraphRequest g;
  ASSERT_TRUE(g.ParseFromString(std::string("\x0a\x01s\x30\x01", 5)));
  EXPECT_EQ(g.session_handle(), "s");
  EXPECT_TRUE(g.create_worker_session_called());
}

}  // namespace
}  // namespace tensorflux
