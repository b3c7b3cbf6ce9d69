// Helpers of the cluster tests (cluster_test.cc, cluster_fault_test.cc): a ps + 2 workers cluster
// of tensorflux-server processes on free loopback ports, a client session on one of them, a
// small training graph over the three tasks and a long step to interrupt.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "google/protobuf/text_format.h"
#include "server_process.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace cluster_test {

using server_test::FreePort;
using server_test::ServerProcess;

inline GraphDef ParseGraph(const std::string& text) {
  GraphDef g;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &g)) << text;
  return g;
}

inline Tensor Floats(std::vector<float> v) {
  Tensor t(DT_FLOAT, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.flat<float>()[i] = v[i];
  return t;
}

inline std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.flat<float>().data(), t.flat<float>().data() + t.NumElements());
}

// w (on ps) -= lr * (w * x0 [worker 0] + w * x1 [worker 1]); "w_read" reads it.
inline constexpr char kTrainGraph[] = R"pb(
  node {
    name: "w" op: "VarHandleOp" device: "/job:ps/task:0"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "shape" value { shape { dim { size: 3 } } } }
    attr { key: "shared_name" value { s: "w" } }
  }
  node {
    name: "w_init_value" op: "Const"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } }
                                         float_val: 1 float_val: 2 float_val: 3 } } }
  }
  node {
    name: "w_init" op: "AssignVariableOp" input: "w" input: "w_init_value"
    attr { key: "dtype" value { type: DT_FLOAT } }
  }
  node { name: "w_read" op: "ReadVariableOp" input: "w" attr { key: "dtype" value { type: DT_FLOAT } } }
  node {
    name: "x0" op: "Placeholder" device: "/job:worker/task:0"
    attr { key: "dtype" value { type: DT_FLOAT } }
  }
  node {
    name: "x1" op: "Placeholder" device: "/job:worker/task:1"
    attr { key: "dtype" value { type: DT_FLOAT } }
  }
  node {
    name: "g0" op: "Mul" input: "w_read" input: "x0" device: "/job:worker/task:0"
    attr { key: "T" value { type: DT_FLOAT } }
  }
  node {
    name: "g1" op: "Mul" input: "w_read" input: "x1" device: "/job:worker/task:1"
    attr { key: "T" value { type: DT_FLOAT } }
  }
  node {
    name: "g" op: "AddN" input: "g0" input: "g1" device: "/job:ps/task:0"
    attr { key: "N" value { i: 2 } }
    attr { key: "T" value { type: DT_FLOAT } }
  }
  node {
    name: "lr" op: "Const"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0.125 } } }
  }
  node {
    name: "delta" op: "Mul" input: "lr" input: "g" device: "/job:ps/task:0"
    attr { key: "T" value { type: DT_FLOAT } }
  }
  node {
    name: "train" op: "AssignSubVariableOp" input: "w" input: "delta"
    attr { key: "dtype" value { type: DT_FLOAT } }
  }
)pb";

struct Cluster {
  int ps_port, w0_port, w1_port;
  std::string spec;
  ServerProcess ps, w0, w1;

  Cluster() : ps_port(FreePort()), w0_port(FreePort()), w1_port(FreePort()) {
    spec = "ps=127.0.0.1:" + std::to_string(ps_port) + ";worker=127.0.0.1:" +
           std::to_string(w0_port) + ",127.0.0.1:" + std::to_string(w1_port);
  }
  void Start(ServerProcess* p, const std::string& job, int task) {
    p->Start({"--cluster", spec, "--job", job, "--task", std::to_string(task)});
  }
  bool StartAll() {
    Start(&ps, "ps", 0);
    Start(&w0, "worker", 0);
    Start(&w1, "worker", 1);
    return ps.WaitListening() && w0.WaitListening() && w1.WaitListening();
  }
};

inline std::unique_ptr<Session> Connect(int port, int64_t timeout_ms = 10000) {
  SessionOptions opts;
  if (port > 0) opts.target = "grpc://127.0.0.1:" + std::to_string(port);
  opts.config.set_operation_timeout_in_ms(timeout_ms);
  auto s = NewSession(opts);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

// A step that keeps `busy_task` working for seconds (a chain of `depth` 1536x1536 MatMuls from
// a seeded RandomUniform) and whose result `sink_task` sums into "total": a step to kill or
// stop a task in the middle of. Tasks are "/job:worker/task:1" and so on.
inline std::string BusyStepGraph(const std::string& busy_task, const std::string& sink_task,
                                 int depth = 60) {
  std::string graph =
      "node { name: 'shape' op: 'Const' device: '" + busy_task +
      "' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { "
      "dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 1536 int_val: 1536 } } } }\n"
      "node { name: 'm0' op: 'RandomUniform' input: 'shape' device: '" + busy_task +
      "' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'T' value { type: DT_INT32 } }"
      " attr { key: 'seed' value { i: 1 } } attr { key: 'seed2' value { i: 2 } } }\n";
  for (int i = 1; i <= depth; ++i) {
    graph += "node { name: 'm" + std::to_string(i) + "' op: 'MatMul' input: 'm" +
             std::to_string(i - 1) + "' input: 'm0' device: '" + busy_task +
             "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  }
  graph += "node { name: 'axes' op: 'Const' device: '" + sink_task +
           "' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor {"
           " dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 0 int_val: 1 } } } }\n"
           "node { name: 'total' op: 'Sum' input: 'm" + std::to_string(depth) +
           "' input: 'axes' device: '" + sink_task + "' attr { key: 'T' value { type: DT_FLOAT }"
           " } attr { key: 'Tidx' value { type: DT_INT32 } } }\n";
  return graph;
}

}  // namespace cluster_test
}  // namespace tensorflux
