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
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/graph.pb.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kElements = int64_t{16} << 20;
constexpr double kTensorBytes = 4.0 * kElements;

Tensor RandomVector(uint32_t seed) {
  Tensor t(DT_FLOAT, TensorShape({kElements}));
  float* p = t.data<float>();
  uint32_t s = seed;
  for (int64_t i = 0; i < kElements; ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<float>(s >> 8) / static_cast<float>(1 << 24) - 0.5f;
  }
  return t;
}

class Samples {
 public:
  template <typename Fn>
  void Time(Fn&& fn) {
    const auto start = Clock::now();
    fn();
    seconds_.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  // GB/s (1e9 bytes) for `bytes` moved per call, from the median call time.
  double GBps(double bytes) {
    if (seconds_.empty()) return 0;
    std::nth_element(seconds_.begin(), seconds_.begin() + seconds_.size() / 2, seconds_.end());
    const double m = seconds_[seconds_.size() / 2];
    return m > 0 ? bytes / m * 1e-9 : 0;
  }

 private:
  std::vector<double> seconds_;
};

GraphDef CwiseGraph(const std::string& op, int inputs) {
  GraphDef g;
  for (int i = 0; i < inputs; ++i) {
    NodeDef* p = g.add_node();
    p->set_name(i == 0 ? "x" : "y");
    p->set_op("Placeholder");
    AddNodeAttr("dtype", DT_FLOAT, p);
    AddNodeAttr("shape", PartialTensorShape({kElements}), p);
  }
  NodeDef* n = g.add_node();
  n->set_name("z");
  n->set_op(op);
  n->add_input("x");
  if (inputs == 2) n->add_input("y");
  AddNodeAttr("T", DT_FLOAT, n);
  return g;
}

struct CopyBuffers {
  CopyBuffers() : src(RandomVector(7)), dst(DT_FLOAT, TensorShape({kElements})) {
    std::memset(dst.data<float>(), 0, static_cast<size_t>(kTensorBytes));
  }
  void Copy() {
    std::memcpy(dst.data<float>(), src.data<float>(), static_cast<size_t>(kTensorBytes));
    benchmark::DoNotOptimize(dst.data<float>());
  }
  Tensor src, dst;
};

void BM_CwiseSession(benchmark::State& state, const std::string& op, int inputs) {
  auto session = NewSession(SessionOptions());
  if (!session.ok()) {
    state.SkipWithError(session.status().ToString().c_str());
    return;
  }
  Status s = (*session)->Create(CwiseGraph(op, inputs));
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", RandomVector(1)}};
  if (inputs == 2) feeds.emplace_back("y", RandomVector(2));
  std::vector<Tensor> out;
  if (s.ok()) s = (*session)->Run(feeds, {"z:0"}, {}, &out);  // builds and caches the executor
  if (!s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  CopyBuffers copy;
  copy.Copy();
  Samples op_times, copy_times;
  for (auto _ : state) {
    op_times.Time([&] {
      out.clear();  // the previous output goes back to the allocator's cache first
      s = (*session)->Run(feeds, {"z:0"}, {}, &out);
    });
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
    copy_times.Time([&] { copy.Copy(); });
  }
  const double op_gbps = op_times.GBps((inputs + 1) * kTensorBytes);
  const double copy_gbps = copy_times.GBps(2 * kTensorBytes);
  state.counters["GBps"] = op_gbps;
  state.counters["memcpy_GBps"] = copy_gbps;
  state.counters["ratio"] = copy_gbps > 0 ? op_gbps / copy_gbps : 0;
}

void BM_Memcpy(benchmark::State& state) {
  CopyBuffers copy;
  copy.Copy();
  Samples times;
  for (auto _ : state) times.Time([&] { copy.Copy(); });
  state.counters["GBps"] = times.GBps(2 * kTensorBytes);
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

// Console output plus a summary of each benchmark's counters: the median over repetitions
// (--benchmark_repetitions=N; each repetition's figures are themselves medians of call times).
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      for (const auto& [counter, value] : r.counters) {
        samples_[r.run_name.function_name][counter].push_back(static_cast<double>(value));
      }
    }
  }
  void PrintSummary() const {
    std::printf("\nfloat32, 16M elements, GB/s (read + written) from median call times, %u "
                "hardware threads\n",
                std::thread::hardware_concurrency());
    std::printf("%-28s %9s %12s %7s\n", "benchmark", "GB/s", "memcpy GB/s", "ratio");
    for (const auto& [name, c] : samples_) {
      auto get = [&](const char* k) {
        auto it = c.find(k);
        if (it == c.end() || it->second.empty()) return 0.0;
        std::vector<double> v = it->second;
        std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
        return v[v.size() / 2];
      };
      std::printf("%-28s %9.2f %12.2f %7.3f\n", name.c_str(), get("GBps"), get("memcpy_GBps"),
                  get("ratio"));
    }
  }

 private:
  std::map<std::string, std::map<std::string, std::vector<double>>> samples_;
};

}  // namespace
}  // namespace tensorflux

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  tensorflux::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintSummary();
  benchmark::Shutdown();
  return 0;
}
