// Sessions over CPU:0 + GPU:0 (the GPU DeviceFactory of the CUDA module): a graph split between
// host and GPU gives the CPU's values, with the copies in _Send/_Recv (runtime/rendezvous.h) and
// HostMemory args in _HostRecv; an MLP training step matches the CPU-only session within 1e-5;
// and a graph with its checkpoint trained on one device type runs unchanged on the other (the
// issue's device-agnostic models). The CPU-only session is the same graph with
// device_count {"GPU": 0}. Skipped without a GPU, and in the CPU stand-in mode (sessions make
// their own devices).
#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../unit/cc/training_test_util.h"
#include "gpu_test_util.h"
#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/ops/ops.h"
#include "tensorflux/cc/training/layers.h"
#include "tensorflux/cc/training/optimizers.h"
#include "tensorflux/cc/training/variables.h"
#include "tensorflux/devices/device_mgr.h"

namespace tensorflux {
namespace {

class GpuSessionTest : public test::GpuTest {
 protected:
  void SetUp() override {
    SkipIfCpuStandIn();
    test::GpuTest::SetUp();
  }
};

// The graph passes stay off: fusion would make _FusedMatMul, which has no GPU kernel, and move
// the dense layers to the CPU.
ConfigProto Config(bool gpu) {
  ConfigProto c;
  c.mutable_graph_options()->mutable_optimizer_options()->set_opt_level(
      GraphOptions::OptimizerOptions::L0);
  if (!gpu) (*c.mutable_device_count())["GPU"] = 0;
  return c;
}

SessionOptions Options(bool gpu) {
  SessionOptions o;
  o.config = Config(gpu);
  return o;
}

// Op -> devices it ran on, over the partition graphs of one step.
std::map<std::string, std::set<std::string>> OpDevices(const RunMetadata& md) {
  std::map<std::string, std::set<std::string>> out;
  for (const GraphDef& g : md.partition_graphs()) {
    for (const NodeDef& n : g.node()) {
      out[n.op()].insert(n.device().find("GPU") != std::string::npos ? "GPU" : "CPU");
    }
  }
  return out;
}

TEST_F(GpuSessionTest, SessionsGetEveryGpuByDefault) {
  auto mgr = DeviceMgr::Create(ConfigProto());
  ASSERT_TRUE(mgr.ok()) << mgr.status();
  ASSERT_EQ(static_cast<int>((*mgr)->ListDevices().size()), 1 + CudaDeviceCount());
  EXPECT_EQ((*mgr)->ListDevices()[1]->name(), "/job:localhost/replica:0/task:0/device:GPU:0");
  EXPECT_TRUE(IsCudaDevice((*mgr)->ListDevices()[1]));
  ConfigProto no_gpu;
  (*no_gpu.mutable_device_count())["GPU"] = 0;
  auto cpu_only = DeviceMgr::Create(no_gpu);
  ASSERT_TRUE(cpu_only.ok()) << cpu_only.status();
  EXPECT_EQ((*cpu_only)->ListDevices().size(), 1u);
}

// y = MatMul(x, w) on the GPU (x fed, w a Const), s = Sum(y, axis 1): the fed x goes to the GPU
// (_Recv: one host -> GPU copy), y and s come back (_Send: GPU -> host), and the int32 axis
// from the CPU reaches Sum's HostMemory input through a _HostRecv.
TEST_F(GpuSessionTest, SendRecvRoundTripThroughTheGpu) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Tensor w_value = test::RandomTensor(DT_FLOAT, TensorShape({8, 4}), 3);
  auto w = ops::Const(root.WithOpName("w"), w_value);
  auto y = ops::MatMul(root.WithOpName("y"), x, w);
  auto s = ops::Sum(root.WithOpName("s"), y, ops::Const(root.WithOpName("axis"), 1));
  ASSERT_TRUE(root.ok()) << root.status();
  Tensor x_value = test::RandomTensor(DT_FLOAT, TensorShape({5, 8}), 4);

  ClientSession session(root, Options(true));
  RunOptions ro;
  ro.set_output_partition_graphs(true);
  RunMetadata md;
  std::vector<Tensor> out;
  Status st = session.Run(ro, {{x, x_value}}, {y, s}, {}, &out, &md);
  ASSERT_TRUE(st.ok()) << st;
  auto devices = OpDevices(md);
  EXPECT_EQ(devices["MatMul"], std::set<std::string>{"GPU"});
  EXPECT_EQ(devices["Sum"], std::set<std::string>{"GPU"});
  EXPECT_EQ(devices["_HostRecv"], std::set<std::string>{"GPU"});  // Sum's reduction_indices
  EXPECT_TRUE(devices["_Recv"].count("GPU"));                      // x
  EXPECT_TRUE(devices["_Send"].count("GPU"));                      // y, s

  // The values, computed here in float64.
  ASSERT_EQ(out.size(), 2u);
  const auto xv = x_value.flat<float>(), wv = w_value.flat<float>();
  std::vector<double> want_y(5 * 4, 0.0), want_s(5, 0.0);
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 8; ++k) want_y[i * 4 + j] += double(xv[i * 8 + k]) * wv[k * 4 + j];
      want_s[i] += want_y[i * 4 + j];
    }
  }
  EXPECT_LE(test::RelativeError(out[0], test::FromDoubles(DT_FLOAT, TensorShape({5, 4}), want_y)),
            1e-5);
  EXPECT_LE(test::RelativeError(out[1], test::FromDoubles(DT_FLOAT, TensorShape({5}), want_s)),
            1e-5);
}

// ---------------------------------------------------------------- models

struct Mlp {
  Scope root = Scope::NewRootScope();
  Output x, labels, logits, loss;
  Operation train;
  std::vector<training::Variable> vars;
};

// 20 -> 32 ReLU -> 5, softmax cross-entropy, SGD 0.5; no device requests.
void BuildMlp(Mlp* m) {
  Scope& r = m->root;
  m->x = ops::Placeholder(r.WithOpName("x"), DT_FLOAT);
  m->labels = ops::Placeholder(r.WithOpName("labels"), DT_FLOAT);
  auto h = training::Dense(r.WithOpName("dense1"), m->x, 32, test::DenseOpts(1, true));
  m->logits = training::Dense(r.WithOpName("dense2"), h, 5, test::DenseOpts(2, false));
  auto xent = ops::SoftmaxCrossEntropyWithLogits(r, m->logits, m->labels);
  m->loss = ops::Mean(r, xent.loss, {0});
  training::GradientDescentOptimizer sgd(0.5);
  Status s = sgd.Minimize(r, m->loss, {}, &m->train);
  ASSERT_TRUE(s.ok()) << s;
  m->vars = training::TrainableVariables(r);
}

struct Trained {
  std::vector<Tensor> losses;
  std::vector<Tensor> vars;
  std::map<std::string, std::set<std::string>> devices;  // of the last training step
};

Trained Train(Mlp* m, bool gpu, int steps) {
  Trained t;
  ClientSession session(m->root, Options(gpu));
  Status s = session.Run({}, {}, {training::GlobalVariablesInitializer(m->root)}, nullptr);
  EXPECT_TRUE(s.ok()) << s;
  ClientSession::FeedType feeds = {
      {m->x, test::RandomTensor(DT_FLOAT, TensorShape({16, 20}), 11)},
      {m->labels, test::OneHotLabels(16, 5)}};
  for (int i = 0; i < steps && s.ok(); ++i) {
    RunOptions ro;
    ro.set_output_partition_graphs(true);
    RunMetadata md;
    std::vector<Tensor> out;
    s = session.Run(ro, feeds, {m->loss}, {m->train}, &out, &md);
    EXPECT_TRUE(s.ok()) << s;
    if (s.ok()) t.losses.push_back(out[0]);
    t.devices = OpDevices(md);
  }
  std::vector<Output> reads;
  for (const auto& v : m->vars) reads.push_back(v.Read(m->root));
  s = session.Run(reads, &t.vars);
  EXPECT_TRUE(s.ok()) << s;
  return t;
}

TEST_F(GpuSessionTest, MlpTrainingStepsMatchTheCpuWithin1e5) {
  Mlp m;
  BuildMlp(&m);
  ASSERT_TRUE(m.root.ok()) << m.root.status();
  const Trained cpu = Train(&m, false, 2);
  const Trained gpu = Train(&m, true, 2);
  ASSERT_EQ(cpu.losses.size(), 2u);
  ASSERT_EQ(gpu.losses.size(), 2u);
  ASSERT_EQ(cpu.vars.size(), gpu.vars.size());
  for (size_t i = 0; i < cpu.losses.size(); ++i) {
    EXPECT_LE(test::RelativeError(gpu.losses[i], cpu.losses[i]), 1e-5) << "loss of step " << i;
  }
  for (size_t i = 0; i < cpu.vars.size(); ++i) {
    EXPECT_LE(test::RelativeError(gpu.vars[i], cpu.vars[i]), 1e-5) << "variable " << i;
  }
  EXPECT_NE(cpu.losses[0].scalar<float>(), cpu.losses[1].scalar<float>());  // it trained
  // The GPU session computed on the GPU: the dense layers and the variables' updates.
  EXPECT_EQ(gpu.devices.at("MatMul"), std::set<std::string>{"GPU"});
  EXPECT_EQ(gpu.devices.at("ResourceApplyGradientDescent"), std::set<std::string>{"GPU"});
  EXPECT_EQ(cpu.devices.at("MatMul"), std::set<std::string>{"CPU"});
}

// ---------------------------------------------------------------- device-agnostic checkpoints

// Saves every variable (SaveV2, tensor names = variable names) / restores them (RestoreV2 +
// AssignVariableOp): ops added to m's graph, so both sessions run one graph, unchanged.
struct Checkpointing {
  Operation save, restore;
  Output prefix;
};

Checkpointing AddCheckpointOps(Mlp* m) {
  Scope& r = m->root;
  Checkpointing c;
  c.prefix = ops::Placeholder(r.WithOpName("ckpt_prefix"), DT_STRING);
  std::vector<std::string> names;
  OutputList values;
  std::vector<DataType> dtypes;
  for (const auto& v : m->vars) {
    names.push_back(v.name());
    values.push_back(v.Read(r));
    dtypes.push_back(v.dtype());
  }
  Tensor names_t(DT_STRING, TensorShape({static_cast<int64_t>(names.size())}));
  Tensor slices_t(DT_STRING, TensorShape({static_cast<int64_t>(names.size())}));
  for (size_t i = 0; i < names.size(); ++i) {
    names_t.flat<std::string>()[i] = names[i];
    slices_t.flat<std::string>()[i] = "";
  }
  auto names_c = ops::Const(r, names_t);
  auto slices_c = ops::Const(r, slices_t);
  c.save = ops::SaveV2(r.WithOpName("save"), c.prefix, names_c, slices_c, InputList(values));
  auto restored = ops::RestoreV2(r.WithOpName("restore"), c.prefix, names_c, slices_c, dtypes);
  std::vector<Operation> assigns;
  for (size_t i = 0; i < m->vars.size(); ++i) {
    assigns.push_back(m->vars[i].Assign(r, restored[i]));
  }
  c.restore = ops::NoOp(r.WithOpName("restore_all").WithControlDependencies(assigns));
  return c;
}

// Trains 2 steps on one device type and saves; a new session on the other device type restores
// the checkpoint into the same graph and must compute the trainer's logits (within 1e-5).
void ExpectCheckpointRunsOnTheOtherDevice(bool train_on_gpu) {
  Mlp m;
  BuildMlp(&m);
  Checkpointing ckpt = AddCheckpointOps(&m);
  ASSERT_TRUE(m.root.ok()) << m.root.status();
  const std::string prefix = testing::TempDir() + "/tx_gpu_ckpt_" +
                             (train_on_gpu ? "gpu" : "cpu") + "_" + std::to_string(getpid());
  const Tensor x = test::RandomTensor(DT_FLOAT, TensorShape({7, 20}), 21);
  const Tensor prefix_t = Tensor::Scalar<std::string>(prefix);

  std::vector<Tensor> trained_logits;
  {
    ClientSession session(m.root, Options(train_on_gpu));
    Status s = session.Run({}, {}, {training::GlobalVariablesInitializer(m.root)}, nullptr);
    ASSERT_TRUE(s.ok()) << s;
    ClientSession::FeedType feeds = {
        {m.x, test::RandomTensor(DT_FLOAT, TensorShape({16, 20}), 11)},
        {m.labels, test::OneHotLabels(16, 5)}};
    for (int i = 0; i < 2; ++i) {
      s = session.Run(feeds, {}, {m.train}, nullptr);
      ASSERT_TRUE(s.ok()) << s;
    }
    s = session.Run({{ckpt.prefix, prefix_t}}, {}, {ckpt.save}, nullptr);
    ASSERT_TRUE(s.ok()) << s;
    s = session.Run({{m.x, x}}, {m.logits}, &trained_logits);
    ASSERT_TRUE(s.ok()) << s;
  }
  ClientSession other(m.root, Options(!train_on_gpu));
  Status s = other.Run({{ckpt.prefix, prefix_t}}, {}, {ckpt.restore}, nullptr);
  ASSERT_TRUE(s.ok()) << s;
  RunOptions ro;
  ro.set_output_partition_graphs(true);
  RunMetadata md;
  std::vector<Tensor> logits;
  s = other.Run(ro, {{m.x, x}}, {m.logits}, {}, &logits, &md);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(OpDevices(md).at("MatMul"),
            std::set<std::string>{train_on_gpu ? "CPU" : "GPU"});
  ASSERT_EQ(logits.size(), 1u);
  EXPECT_LE(test::RelativeError(logits[0], trained_logits[0]), 1e-5);
  std::remove((prefix + ".index").c_str());
  std::remove((prefix + ".data-00000-of-00001").c_str());
}

TEST_F(GpuSessionTest, CpuTrainedGraphAndCheckpointRunOnTheGpu) {
  ExpectCheckpointRunsOnTheOtherDevice(/*train_on_gpu=*/false);
}

TEST_F(GpuSessionTest, GpuTrainedGraphAndCheckpointRunOnTheCpu) {
  ExpectCheckpointRunsOnTheOtherDevice(/*train_on_gpu=*/true);
}

}  // namespace
}  // namespace tensorflux
