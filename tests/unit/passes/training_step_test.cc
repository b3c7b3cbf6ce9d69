// Whole training steps give the same bits with the graph passes on and off: an MLP (two dense
// layers, ReLU, softmax cross-entropy, SGD) and a CNN (Conv2D + ReLU, max pooling, dense), built
// with the C++ training API, three steps each in two sessions on one graph. With the passes on,
// the executed graph holds the fused kernels (every dense and conv layer's forward chain, and the
// CNN's MaxPoolGrad -> ReluGrad -> BiasAddGrad), so the check covers _FusedMatMul / _FusedConv2D /
// _FusedMaxPoolGrad inside real training.
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "../cc/training_test_util.h"
#include "pass_test_util.h"
#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/ops/ops.h"
#include "tensorflux/cc/training/layers.h"
#include "tensorflux/cc/training/optimizers.h"
#include "tensorflux/cc/training/variables.h"

namespace tensorflux {
namespace {

Tensor Pattern(const TensorShape& shape, int seed) {
  Tensor t(DT_FLOAT, shape);
  uint32_t s = 2246822519u * static_cast<uint32_t>(seed + 1);
  for (float& v : t.flat<float>()) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(s >> 8) / static_cast<float>(1 << 24) - 0.5f;
  }
  return t;
}

using test::DenseOpts;

struct Model {
  Scope root = Scope::NewRootScope();
  Output x, labels, loss;
  Operation train;
  std::vector<Output> reads;  // every trainable variable's value
};

void Finish(Model* m, const Output& logits, int64_t classes) {
  Scope& r = m->root;
  auto xent = ops::SoftmaxCrossEntropyWithLogits(r, logits, m->labels);
  m->loss = ops::Mean(r, xent.loss, {0});
  training::GradientDescentOptimizer sgd(0.5);
  Status s = sgd.Minimize(r, m->loss, {}, &m->train);
  ASSERT_TRUE(s.ok()) << s;
  for (const training::Variable& v : training::TrainableVariables(r)) m->reads.push_back(v.Read(r));
  (void)classes;
}

void BuildMlp(Model* m) {
  Scope& r = m->root;
  m->x = ops::Placeholder(r.WithOpName("x"), DT_FLOAT,
                          ops::Placeholder::Shape(PartialTensorShape({16, 20})));
  m->labels = ops::Placeholder(r.WithOpName("labels"), DT_FLOAT);
  auto h = training::Dense(r, m->x, 32, DenseOpts(1, true));
  auto logits = training::Dense(r, h, 5, DenseOpts(2, false));
  Finish(m, logits, 5);
}

void BuildCnn(Model* m) {
  Scope& r = m->root;
  m->x = ops::Placeholder(r.WithOpName("x"), DT_FLOAT,
                          ops::Placeholder::Shape(PartialTensorShape({4, 8, 8, 3})));
  m->labels = ops::Placeholder(r.WithOpName("labels"), DT_FLOAT);
  training::Conv2DOptions c;
  c.padding = "SAME";
  c.activation = training::Relu();
  c.kernel_initializer = training::GlorotUniform(3);
  c.bias_initializer = training::Constant(0.05);
  auto conv = training::Conv2D(r, m->x, 6, 3, 3, c);
  auto pool = training::MaxPooling2D(r, conv, 2, 2, 2, 2);
  auto logits = training::Dense(r, training::Flatten(r, pool), 5, DenseOpts(4, false));
  Finish(m, logits, 5);
}

struct Trace {
  std::vector<Tensor> values;  // losses of every step, then the final variables
  std::map<std::string, int> executed_ops;  // op counts of the last train step's graph
};

Trace Train(const Model& m, const ConfigProto& config, const Tensor& x, const Tensor& labels) {
  Trace t;
  SessionOptions opts;
  opts.config = config;
  ClientSession session(m.root, opts);
  Status s = session.Run({}, {}, {training::GlobalVariablesInitializer(m.root)}, nullptr);
  EXPECT_TRUE(s.ok()) << s;
  ClientSession::FeedType feeds = {{m.x, x}, {m.labels, labels}};
  for (int step = 0; step < 3 && s.ok(); ++step) {
    RunOptions ro;
    ro.set_output_partition_graphs(true);
    RunMetadata md;
    std::vector<Tensor> out;
    s = session.Run(ro, feeds, {m.loss}, {m.train}, &out, &md);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) break;
    t.values.push_back(out[0]);
    t.executed_ops.clear();
    for (const GraphDef& g : md.partition_graphs())
      for (const NodeDef& n : g.node()) ++t.executed_ops[n.op()];
  }
  std::vector<Tensor> vars;
  s = session.Run(m.reads, &vars);
  EXPECT_TRUE(s.ok()) << s;
  for (Tensor& v : vars) t.values.push_back(v);
  return t;
}

void ExpectSameTraining(const Model& m, const Tensor& x, const Tensor& labels,
                        const std::map<std::string, int>& fused_counts) {
  const Trace on = Train(m, ConfigProto(), x, labels);
  const Trace off = Train(m, pass_test::PassesOff(), x, labels);
  ASSERT_EQ(on.values.size(), off.values.size());
  ASSERT_EQ(on.values.size(), 3 + m.reads.size());
  for (size_t i = 0; i < on.values.size(); ++i) {
    SCOPED_TRACE(i < 3 ? "loss of step " + std::to_string(i) : "variable " + std::to_string(i - 3));
    pass_test::ExpectBitIdentical(on.values[i], off.values[i]);
  }
  // Training moved: the losses differ from step to step.
  EXPECT_NE(on.values[0].scalar<float>(), on.values[2].scalar<float>());
  auto count = [](const Trace& t, const std::string& op) {
    return t.executed_ops.count(op) ? t.executed_ops.at(op) : 0;
  };
  for (const auto& [fused_op, fused_count] : fused_counts) {
    EXPECT_EQ(count(on, fused_op), fused_count) << fused_op;
    EXPECT_EQ(count(off, fused_op), 0) << fused_op;
  }
  EXPECT_LT(count(on, "BiasAdd"), count(off, "BiasAdd"));
}

TEST(TrainingStepTest, MlpSameWithPassesOnAndOff) {
  Model m;
  BuildMlp(&m);
  ASSERT_TRUE(m.root.ok()) << m.root.status();
  ExpectSameTraining(m, Pattern(TensorShape({16, 20}), 1), test::OneHotLabels(16, 5),
                     {{"_FusedMatMul", 2}});
}

TEST(TrainingStepTest, CnnSameWithPassesOnAndOff) {
  Model m;
  BuildCnn(&m);
  ASSERT_TRUE(m.root.ok()) << m.root.status();
  ExpectSameTraining(m, Pattern(TensorShape({4, 8, 8, 3}), 2), test::OneHotLabels(4, 5),
                     {{"_FusedConv2D", 1}, {"_FusedMaxPoolGrad", 1}});
}

}  // namespace
}  // namespace tensorflux
