// One graph on 1 CPU device and split over 4 (issue 6), built with the C++ API: an MLP and a
// CNN training step (cc/training layers and optimizers), their layers asking for different
// devices so the partitioner really cuts the graph, give bit-identical losses and variables
// over several steps. RunOptions.output_partition_graphs shows the cut: 4 partition graphs
// joined by _Send/_Recv pairs, each on one device (1 graph without requests on 1 device).
// The Python form of this test is tests/python/test_partition.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/ops/ops.h"
#include "tensorflux/cc/training/layers.h"
#include "tensorflux/cc/training/optimizers.h"
#include "tensorflux/cc/training/variables.h"
#include "training_test_util.h"

namespace tensorflux {
namespace {

using training::Variable;

constexpr int kSteps = 3;
constexpr int kClasses = 5;

// The device each part of a model asks for: four CPUs, or none (the 1-device run).
using Devices = std::vector<std::string>;
Devices FourCpus() {
  Devices d;
  for (int i = 0; i < 4; ++i) d.push_back("/job:localhost/replica:0/task:0/device:CPU:" + std::to_string(i));
  return d;
}

struct Model {
  Output x, y, loss;
  Operation train;
};

training::Activation Tanh() {
  return [](const Scope& s, const Output& in) { return ops::Tanh(s, in); };
}

Output MeanXent(const Scope& s, const Output& logits, const Output& labels) {
  return ops::Mean(s, ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, labels).loss, {0});
}

// 20 -> dense 32 relu (device 0) -> dense 16 tanh (1) -> dense 5 (2) -> loss, Momentum (3).
// Placeholders x [batch, dims...] and y [batch].
void Inputs(const Scope& root, const PartialTensorShape& x_shape, Model* m) {
  m->x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, ops::Placeholder::Shape(x_shape));
  m->y = ops::Placeholder(root.WithOpName("y"), DT_INT32,
                          ops::Placeholder::Shape(PartialTensorShape({x_shape.dim_size(0)})));
}

Model Mlp(const Scope& root, const Devices& d) {
  Model m;
  Inputs(root, PartialTensorShape({16, 20}), &m);
  training::DenseOptions o;
  o.activation = training::Relu();
  o.kernel_initializer = training::GlorotUniform(1);
  Output h = training::Dense(root.WithDevice(d[0]), m.x, 32, o);
  o.activation = Tanh();
  o.kernel_initializer = training::GlorotUniform(2);
  h = training::Dense(root.WithDevice(d[1]), h, 16, o);
  o.activation = nullptr;
  o.kernel_initializer = training::GlorotUniform(3);
  Output logits = training::Dense(root.WithDevice(d[2]), h, kClasses, o);
  m.loss = MeanXent(root.WithDevice(d[3]), logits, m.y);
  training::MomentumOptimizer opt(0.05, 0.9);
  Status s = opt.Minimize(root.WithDevice(d[3]), m.loss, {}, &m.train);
  EXPECT_TRUE(s.ok()) << s;
  return m;
}

// [4, 10, 10, 1] -> conv 6 3x3 SAME relu (0) -> max pool 2 (1) -> conv 8 3x3 VALID relu (2)
// -> flatten, dense 5, loss, Adam (3).
Model Cnn(const Scope& root, const Devices& d) {
  Model m;
  Inputs(root, PartialTensorShape({4, 10, 10, 1}), &m);
  training::Conv2DOptions c;
  c.padding = "SAME";
  c.activation = training::Relu();
  c.kernel_initializer = training::GlorotUniform(4);
  Output h = training::Conv2D(root.WithDevice(d[0]), m.x, 6, 3, 3, c);
  h = training::MaxPooling2D(root.WithDevice(d[1]), h, 2, 2, 2, 2);
  c.padding = "VALID";
  c.kernel_initializer = training::GlorotUniform(5);
  h = training::Conv2D(root.WithDevice(d[2]), h, 8, 3, 3, c);
  const Scope last = root.WithDevice(d[3]);
  training::DenseOptions o;
  o.kernel_initializer = training::GlorotUniform(6);
  Output logits = training::Dense(last, training::Flatten(last, h), kClasses, o);
  m.loss = MeanXent(last, logits, m.y);
  training::AdamOptimizer opt(0.01);
  Status s = opt.Minimize(last, m.loss, {}, &m.train);
  EXPECT_TRUE(s.ok()) << s;
  return m;
}

struct Result {
  std::vector<Tensor> losses;
  std::vector<Tensor> variables;
  RunMetadata last_step;  // with the partition graphs
};

// kSteps training steps on seeded random data, then every global variable.
Result Train(const std::function<Model(const Scope&, const Devices&)>& build,
             const TensorShape& x_shape, int num_devices) {
  Scope root = Scope::NewRootScope();
  const Devices devices = num_devices > 1 ? FourCpus() : Devices(4, "");
  Model m = build(root, devices);
  EXPECT_TRUE(root.ok()) << root.status();
  SessionOptions so;
  (*so.config.mutable_device_count())["CPU"] = num_devices;
  so.config.set_allow_soft_placement(false);
  ClientSession session(root, so);
  EXPECT_TRUE(test::InitVariables(root, &session).ok());
  std::mt19937 rng(11);  // the same data for every run
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int32_t> label(0, kClasses - 1);
  Result r;
  for (int step = 0; step < kSteps; ++step) {
    Tensor x(DT_FLOAT, x_shape), y(DT_INT32, TensorShape({x_shape.dim_size(0)}));
    for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<float>()[i] = normal(rng);
    for (int64_t i = 0; i < y.NumElements(); ++i) y.flat<int32_t>()[i] = label(rng);
    RunOptions ro;
    ro.set_output_partition_graphs(true);
    r.last_step.Clear();
    std::vector<Tensor> out;
    Status s = session.Run(ro, {{m.x, x}, {m.y, y}}, {m.loss}, {m.train}, &out, &r.last_step);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) return r;
    r.losses.push_back(out[0]);
  }
  std::vector<Output> reads;
  for (const Variable& v : training::GlobalVariables(root)) reads.push_back(v.Read(root));
  EXPECT_TRUE(session.Run(reads, &r.variables).ok());
  return r;
}

void ExpectBitwiseEqual(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.shape(), b.shape()) << what;
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()), 0) << what;
}

void ExpectSameBitsOnFourDevices(const std::function<Model(const Scope&, const Devices&)>& build,
                                 const TensorShape& x_shape, int min_sends) {
  const Result one = Train(build, x_shape, 1);
  const Result four = Train(build, x_shape, 4);
  ASSERT_EQ(one.losses.size(), static_cast<size_t>(kSteps));
  ASSERT_EQ(four.losses.size(), static_cast<size_t>(kSteps));
  // The graph was really cut: one partition per device, joined by as many sends as receives.
  EXPECT_EQ(one.last_step.partition_graphs_size(), 1);
  ASSERT_EQ(four.last_step.partition_graphs_size(), 4);
  int sends = 0, recvs = 0;
  std::set<std::string> partition_devices;
  for (const GraphDef& p : four.last_step.partition_graphs()) {
    std::set<std::string> devices;
    for (const NodeDef& n : p.node()) {
      devices.insert(n.device());
      sends += n.op() == "_Send";
      recvs += n.op() == "_Recv";
    }
    EXPECT_EQ(devices.size(), 1u);
    partition_devices.insert(*devices.begin());
  }
  EXPECT_EQ(partition_devices.size(), 4u);
  EXPECT_EQ(sends, recvs);
  EXPECT_GE(sends, min_sends);
  // Training moved: the losses differ from step to step (and are finite).
  const float first = one.losses.front().data<float>()[0];
  const float last = one.losses.back().data<float>()[0];
  EXPECT_TRUE(std::isfinite(first) && std::isfinite(last));
  EXPECT_NE(first, last);
  for (int i = 0; i < kSteps; ++i) {
    ExpectBitwiseEqual(one.losses[i], four.losses[i], "loss of step " + std::to_string(i));
  }
  ASSERT_EQ(one.variables.size(), four.variables.size());
  ASSERT_GT(one.variables.size(), 0u);
  for (size_t i = 0; i < one.variables.size(); ++i) {
    ExpectBitwiseEqual(one.variables[i], four.variables[i], "variable " + std::to_string(i));
  }
}

TEST(CcPartitionBitwiseTest, MlpTrainingStepOnOneAndFourDevices) {
  ExpectSameBitsOnFourDevices(Mlp, TensorShape({16, 20}), 20);
}

TEST(CcPartitionBitwiseTest, CnnTrainingStepOnOneAndFourDevices) {
  ExpectSameBitsOnFourDevices(Cnn, TensorShape({4, 10, 10, 1}), 20);
}

}  // namespace
}  // namespace tensorflux
