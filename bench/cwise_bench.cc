// Elementwise float32 throughput on 16M elements (64 MiB per tensor), in one binary:
//   BM_CwiseSession/op   a graph Placeholder(s) -> AddV2 (x + y) or Relu (x) run by Session::Run
//                        with the inputs fed (executor, output allocation from the caching
//                        allocator, the multi-threaded kernel), interleaved call by call with
//                        memcpy of 16M floats between preallocated buffers in this process;
//   BM_Memcpy            memcpy alone.
// Bandwidth counts bytes read + written by the op: AddV2 3 x 64 MiB, Relu 2 x 64 MiB, memcpy
// 2 x 64 MiB. Figures come from the MEDIAN wall time per call (interleaving and medians keep the
// comparison fair when other processes share the machine); the summary prints GB/s for the op
// and memcpy and their ratio (goal >= 0.7). The fed inputs are held by the caller, so the
// kernels cannot forward an input buffer here: the output is a fresh (cached) allocation.
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"

namespace tensorflux::bench {
namespace {

constexpr int64_t kElements = int64_t{16} << 20;
constexpr double kTensorBytes = 4.0 * kElements;

GraphDef CwiseGraph(const std::string& op, int inputs) {
  GraphDef g;
  AddPlaceholder(&g, "x", TensorShape({kElements}));
  if (inputs == 2) AddPlaceholder(&g, "y", TensorShape({kElements}));
  NodeDef* n = AddNode(&g, "z", op, inputs == 2 ? std::vector<std::string>{"x", "y"}
                                                : std::vector<std::string>{"x"});
  AddNodeAttr("T", DT_FLOAT, n);
  return g;
}

struct CopyBuffers {
  CopyBuffers()
      : src(RandomFloats(TensorShape({kElements}), 7)), dst(DT_FLOAT, TensorShape({kElements})) {
    std::memset(dst.data<float>(), 0, static_cast<size_t>(kTensorBytes));
  }
  void Copy() {
    std::memcpy(dst.data<float>(), src.data<float>(), static_cast<size_t>(kTensorBytes));
    benchmark::DoNotOptimize(dst.data<float>());
  }
  Tensor src, dst;
};

void BM_CwiseSession(benchmark::State& state, const std::string& op, int inputs) {
  std::vector<std::pair<std::string, Tensor>> feeds = {
      {"x", RandomFloats(TensorShape({kElements}), 1)}};
  if (inputs == 2) feeds.emplace_back("y", RandomFloats(TensorShape({kElements}), 2));
  auto session = WarmSession(state, CwiseGraph(op, inputs), feeds, "z:0");
  if (session == nullptr) return;
  CopyBuffers copy;
  copy.Copy();
  CallTimes op_times, copy_times;
  if (!TimeInterleaved(state, session.get(), feeds, "z:0", &op_times,
                       {{[&] { copy.Copy(); }, &copy_times}})) {
    return;
  }
  const double op_gbps = op_times.GigaPerSecond((inputs + 1) * kTensorBytes);
  const double copy_gbps = copy_times.GigaPerSecond(2 * kTensorBytes);
  state.counters["GBps"] = op_gbps;
  state.counters["memcpy_GBps"] = copy_gbps;
  state.counters["ratio"] = Ratio(op_gbps, copy_gbps);
}

void BM_Memcpy(benchmark::State& state) {
  CopyBuffers copy;
  copy.Copy();
  CallTimes times;
  for (auto _ : state) times.Time([&] { copy.Copy(); });
  state.counters["GBps"] = times.GigaPerSecond(2 * kTensorBytes);
}

BENCHMARK_CAPTURE(BM_CwiseSession, AddV2, std::string("AddV2"), 2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);
BENCHMARK_CAPTURE(BM_CwiseSession, Relu, std::string("Relu"), 1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);
BENCHMARK(BM_Memcpy)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);

class CwiseSummary : public SummaryReporter {
 public:
  void PrintSummary() const override {
    std::printf("\nfloat32, 16M elements, GB/s (read + written) from median call times, %u "
                "hardware threads\n",
                std::thread::hardware_concurrency());
    std::printf("%-28s %9s %12s %7s\n", "benchmark", "GB/s", "memcpy GB/s", "ratio");
    for (const std::string& key : Keys()) {
      std::printf("%-28s %9.2f %12.2f %7.3f\n", key.c_str(), Get(key, "GBps"),
                  Get(key, "memcpy_GBps"), Get(key, "ratio"));
    }
  }
};

}  // namespace
}  // namespace tensorflux::bench

int main(int argc, char** argv) {
  tensorflux::bench::CwiseSummary reporter;
  return tensorflux::bench::RunBenchmarks(argc, argv, &reporter);
}
