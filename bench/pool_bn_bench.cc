// Pooling and batch norm on the CPU, float32, x = [64, 28, 28, 32] NHWC (6.4 MB):
//   BM_MaxPool          MaxPool 2x2, stride 2, VALID, through Session::Run (x fed);
//   BM_FusedBatchNorm   FusedBatchNormV3, is_training, through Session::Run (x fed; scale and
//                       offset constants; the y output fetched);
// each interleaved call by call with a memcpy of x's bytes into a preallocated buffer. Figures:
// GB/s of x's bytes per median call time, and the ratio to memcpy's GB/s for the same bytes (the
// memory-traffic yardstick: MaxPool reads x once and writes a quarter of it; batch norm training
// reads x at least twice and writes y). Median times of interleaved calls keep the comparison
// fair on a shared machine.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"

namespace tensorflux::bench {
namespace {

constexpr int64_t kN = 64, kH = 28, kW = 28, kC = 32;
constexpr double kBytes = 4.0 * kN * kH * kW * kC;

Tensor FilledVector(float value, int64_t size) {
  Tensor t(DT_FLOAT, TensorShape({size}));
  std::fill_n(t.data<float>(), size, value);
  return t;
}

GraphDef Graph(bool batch_norm) {
  GraphDef g;
  AddPlaceholder(&g, "x", TensorShape({kN, kH, kW, kC}));
  if (!batch_norm) {
    NodeDef* p = AddNode(&g, "out", "MaxPool", {"x"});
    AddNodeAttr("T", DT_FLOAT, p);
    AddNodeAttr("ksize", std::vector<int64_t>{1, 2, 2, 1}, p);
    AddNodeAttr("strides", std::vector<int64_t>{1, 2, 2, 1}, p);
    AddNodeAttr("padding", std::string("VALID"), p);
    return g;
  }
  AddConst(&g, "scale", FilledVector(1.5f, kC));
  AddConst(&g, "offset", FilledVector(0.25f, kC));
  AddConst(&g, "empty", FilledVector(0.0f, 0));
  NodeDef* bn = AddNode(&g, "out", "FusedBatchNormV3", {"x", "scale", "offset", "empty", "empty"});
  AddNodeAttr("T", DT_FLOAT, bn);
  AddNodeAttr("U", DT_FLOAT, bn);
  AddNodeAttr("epsilon", 0.001f, bn);
  AddNodeAttr("is_training", true, bn);
  return g;
}

void Run(benchmark::State& state, bool batch_norm) {
  Tensor x = RandomFloats(TensorShape({kN, kH, kW, kC}), 1);
  Tensor copy(DT_FLOAT, x.shape());
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", x}};
  auto session = WarmSession(state, Graph(batch_norm), feeds, "out:0");
  if (session == nullptr) return;
  CallTimes op, memcpy_times;
  auto memcpy_x = [&] {
    std::memcpy(copy.data<float>(), x.data<float>(), static_cast<size_t>(kBytes));
    benchmark::DoNotOptimize(copy.data<float>());
  };
  if (!TimeInterleaved(state, session.get(), feeds, "out:0", &op, {{memcpy_x, &memcpy_times}})) {
    return;
  }
  const double gbps = op.GigaPerSecond(kBytes), memcpy_gbps = memcpy_times.GigaPerSecond(kBytes);
  state.counters["GBps"] = gbps;
  state.counters["memcpy_GBps"] = memcpy_gbps;
  state.counters["ratio"] = Ratio(gbps, memcpy_gbps);
}

void BM_MaxPool(benchmark::State& state) { Run(state, false); }
void BM_FusedBatchNorm(benchmark::State& state) { Run(state, true); }
BENCHMARK(BM_MaxPool)->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK(BM_FusedBatchNorm)->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0);

class PoolBnSummary : public SummaryReporter {
 public:
  void PrintSummary() const override {
    std::printf("\nfloat32 x = [64, 28, 28, 32] NHWC; GB/s of x's bytes from median call times\n");
    std::printf("%-20s %9s %12s %7s\n", "benchmark", "GB/s", "memcpy GB/s", "ratio");
    for (const std::string& key : Keys()) {
      std::printf("%-20s %9.2f %12.2f %7.3f\n", key.c_str(), Get(key, "GBps"),
                  Get(key, "memcpy_GBps"), Get(key, "ratio"));
    }
  }
};

}  // namespace
}  // namespace tensorflux::bench

int main(int argc, char** argv) {
  tensorflux::bench::PoolBnSummary reporter;
  return tensorflux::bench::RunBenchmarks(argc, argv, &reporter);
}
