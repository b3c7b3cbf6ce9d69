// Pooling and batch norm on the CPU, float32, x = [64, 28, 28, 32] NHWC (6.4 MB):
//   BM_MaxPool          MaxPool 2x2, stride 2, VALID, through Session::Run (x fed);
//   BM_FusedBatchNorm   FusedBatchNormV3, is_training, through Session::Run (x fed; scale and
//                       offset constants; the y output fetched);
// each interleaved call by call with a memcpy of x's bytes into a preallocated buffer. Figures:
// GB/s of x's bytes per median call time, and the ratio to memcpy's GB/s for the same bytes (the
// memory-traffic yardstick: MaxPool reads x once and writes a quarter of it; batch norm training
// reads x at least twice and writes y). Median times of interleaved calls keep the comparison
// fair on a shared machine.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/graph.pb.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kN = 64, kH = 28, kW = 28, kC = 32;
constexpr double kBytes = 4.0 * kN * kH * kW * kC;

class Samples {
 public:
  template <typename Fn>
  void Time(Fn&& fn) {
    const auto start = Clock::now();
    fn();
    seconds_.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  double GBps() {
    if (seconds_.empty()) return 0;
    std::nth_element(seconds_.begin(), seconds_.begin() + seconds_.size() / 2, seconds_.end());
    const double m = seconds_[seconds_.size() / 2];
    return m > 0 ? kBytes / m * 1e-9 : 0;
  }

 private:
  std::vector<double> seconds_;
};

Tensor RandomX() {
  Tensor t(DT_FLOAT, TensorShape({kN, kH, kW, kC}));
  float* p = t.data<float>();
  uint32_t s = 1;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<float>(s >> 8) / static_cast<float>(1 << 24) - 0.5f;
  }
  return t;
}

NodeDef* AddNode(GraphDef* g, const char* name, const char* op) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  return n;
}

void AddVectorConst(GraphDef* g, const char* name, float value, int64_t size) {
  NodeDef* n = AddNode(g, name, "Const");
  Tensor t(DT_FLOAT, TensorShape({size}));
  std::fill_n(t.data<float>(), size, value);
  AddNodeAttr("dtype", DT_FLOAT, n);
  AddNodeAttr("value", t, n);
}

GraphDef Graph(bool batch_norm) {
  GraphDef g;
  NodeDef* x = AddNode(&g, "x", "Placeholder");
  AddNodeAttr("dtype", DT_FLOAT, x);
  AddNodeAttr("shape", PartialTensorShape({kN, kH, kW, kC}), x);
  if (!batch_norm) {
    NodeDef* p = AddNode(&g, "out", "MaxPool");
    p->add_input("x");
    AddNodeAttr("T", DT_FLOAT, p);
    AddNodeAttr("ksize", std::vector<int64_t>{1, 2, 2, 1}, p);
    AddNodeAttr("strides", std::vector<int64_t>{1, 2, 2, 1}, p);
    AddNodeAttr("padding", std::string("VALID"), p);
    return g;
  }
  AddVectorConst(&g, "scale", 1.5f, kC);
  AddVectorConst(&g, "offset", 0.25f, kC);
  AddVectorConst(&g, "empty", 0.0f, 0);
  NodeDef* bn = AddNode(&g, "out", "FusedBatchNormV3");
  for (const char* in : {"x", "scale", "offset", "empty", "empty"}) bn->add_input(in);
  AddNodeAttr("T", DT_FLOAT, bn);
  AddNodeAttr("U", DT_FLOAT, bn);
  AddNodeAttr("epsilon", 0.001f, bn);
  AddNodeAttr("is_training", true, bn);
  return g;
}

void Run(benchmark::State& state, bool batch_norm) {
  auto session = NewSession(SessionOptions());
  if (!session.ok()) {
    state.SkipWithError(session.status().ToString().c_str());
    return;
  }
  Status s = (*session)->Create(Graph(batch_norm));
  Tensor x = RandomX();
  Tensor copy(DT_FLOAT, x.shape());
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", x}};
  std::vector<Tensor> out;
  if (s.ok()) s = (*session)->Run(feeds, {"out:0"}, {}, &out);
  if (!s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  Samples op, memcpy_times;
  for (auto _ : state) {
    op.Time([&] {
      out.clear();
      s = (*session)->Run(feeds, {"out:0"}, {}, &out);
    });
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
    memcpy_times.Time([&] {
      std::memcpy(copy.data<float>(), x.data<float>(), static_cast<size_t>(kBytes));
      benchmark::DoNotOptimize(copy.data<float>());
    });
  }
  const double gbps = op.GBps(), memcpy_gbps = memcpy_times.GBps();
  state.counters["GBps"] = gbps;
  state.counters["memcpy_GBps"] = memcpy_gbps;
  state.counters["ratio"] = memcpy_gbps > 0 ? gbps / memcpy_gbps : 0;
}

void BM_MaxPool(benchmark::State& state) { Run(state, false); }
void BM_FusedBatchNorm(benchmark::State& state) { Run(state, true); }
BENCHMARK(BM_MaxPool)->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK(BM_FusedBatchNorm)->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0);

}  // namespace
}  // namespace tensorflux

BENCHMARK_MAIN();
