// The remapper's fusion (passes/remapper.cc) in a real model: the Fashion-MNIST MLP of
// examples/fashion_mnist/mlp.py (784-256-ReLU-10, softmax cross-entropy, batch 128), built with
// the C++ training API, run by two sessions on the same graph: one with every pass on (the
// default: MatMul+BiasAdd+Relu -> _FusedMatMul), one with RewriterConfig.remapping = OFF (the
// other passes still on). Each iteration times one step of each, interleaved, so both see the
// same machine load; figures are medians.
//
//   BM_MlpTrainStep: forward, gradients and an SGD update (target: the train op)
//   BM_MlpInference: forward only (fetch the logits)
//
// Counters: ms_fused, ms_unfused (median step times) and fused_over_unfused (< 1: fusion is
// faster). The summary prints the ratios.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/ops/ops.h"
#include "tensorflux/cc/training/layers.h"
#include "tensorflux/cc/training/optimizers.h"
#include "tensorflux/cc/training/variables.h"

namespace tensorflux {
namespace {

constexpr int64_t kBatch = 128, kIn = 784, kHidden = 256, kClasses = 10;

struct Mlp {
  Scope root = Scope::NewRootScope();
  Output x, labels, logits;
  Operation train;
  Status status;
};

std::unique_ptr<Mlp> BuildMlp() {
  auto m = std::make_unique<Mlp>();
  Scope& r = m->root;
  m->x = ops::Placeholder(r.WithOpName("x"), DT_FLOAT,
                          ops::Placeholder::Shape(PartialTensorShape({kBatch, kIn})));
  m->labels = ops::Placeholder(r.WithOpName("labels"), DT_FLOAT);
  training::DenseOptions hidden;
  hidden.activation = training::Relu();
  hidden.kernel_initializer = training::GlorotUniform(1);
  auto h = training::Dense(r, m->x, kHidden, hidden);
  training::DenseOptions out;
  out.kernel_initializer = training::GlorotUniform(2);
  m->logits = training::Dense(r, h, kClasses, out);
  auto loss = ops::Mean(r, ops::SoftmaxCrossEntropyWithLogits(r, m->logits, m->labels).loss, {0});
  training::GradientDescentOptimizer sgd(0.01);
  m->status = sgd.Minimize(r, loss, {}, &m->train);
  if (m->status.ok()) m->status = r.status();
  return m;
}

std::unique_ptr<ClientSession> NewMlpSession(const Mlp& m, bool fusion) {
  SessionOptions opts;
  if (!fusion) {
    opts.config.mutable_graph_options()->mutable_rewrite_options()->set_remapping(
        RewriterConfig::OFF);
  }
  auto s = std::make_unique<ClientSession>(m.root, opts);
  Status st = s->Run({}, {}, {training::GlobalVariablesInitializer(m.root)}, nullptr);
  return st.ok() ? std::move(s) : nullptr;
}

void RunMlp(benchmark::State& state, bool train) {
  std::unique_ptr<Mlp> m = BuildMlp();
  if (!m->status.ok()) {
    state.SkipWithError(m->status.ToString().c_str());
    return;
  }
  Tensor labels(DT_FLOAT, TensorShape({kBatch, kClasses}));
  for (int64_t i = 0; i < kBatch * kClasses; ++i)
    labels.flat<float>()[i] = (i % kClasses == (i / kClasses) % kClasses) ? 1.f : 0.f;
  const ClientSession::FeedType feeds = {
      {m->x, bench::RandomFloats(TensorShape({kBatch, kIn}), 7)}, {m->labels, labels}};
  std::unique_ptr<ClientSession> sessions[2] = {NewMlpSession(*m, true),
                                                NewMlpSession(*m, false)};
  bench::CallTimes times[2];
  std::vector<Tensor> out;
  auto step = [&](ClientSession* s) {
    return train ? s->Run(feeds, {}, {m->train}, nullptr) : s->Run(feeds, {m->logits}, &out);
  };
  for (auto& s : sessions) {
    Status st = s == nullptr ? errors::Internal("session creation failed") : step(s.get());
    if (!st.ok()) {  // the first step builds the executors
      state.SkipWithError(st.ToString().c_str());
      return;
    }
  }
  Status st;
  for (auto _ : state) {
    for (int i = 0; i < 2 && st.ok(); ++i) times[i].Time([&] { st = step(sessions[i].get()); });
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
  }
  const double fused = times[0].MedianSeconds(), unfused = times[1].MedianSeconds();
  state.counters["ms_fused"] = fused * 1e3;
  state.counters["ms_unfused"] = unfused * 1e3;
  state.counters["fused_over_unfused"] = bench::Ratio(fused, unfused);
}

void BM_MlpTrainStep(benchmark::State& state) { RunMlp(state, true); }
void BM_MlpInference(benchmark::State& state) { RunMlp(state, false); }
BENCHMARK(BM_MlpTrainStep)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MlpInference)->Unit(benchmark::kMillisecond)->UseRealTime();

class Summary : public bench::SummaryReporter {
 public:
  void PrintSummary() const override {
    std::printf("\nMLP 784-256-ReLU-10, batch 128: fusion on vs off (median step times)\n");
    std::printf("%-18s %10s %10s %10s\n", "step", "fused ms", "unfused ms", "ratio");
    for (const char* key : {"BM_MlpTrainStep", "BM_MlpInference"}) {
      std::printf("%-18s %10.3f %10.3f %10.3f\n", key + 3, Get(key, "ms_fused"),
                  Get(key, "ms_unfused"), Get(key, "fused_over_unfused"));
    }
  }
};

}  // namespace
}  // namespace tensorflux

int main(int argc, char** argv) {
  tensorflux::Summary reporter;
  return tensorflux::bench::RunBenchmarks(argc, argv, &reporter);
}
