// float32 MatMul, N x N x N for N in 256/512/1024/2048, in one binary:
//   BM_MatMulSession  a graph Placeholder a, Placeholder b -> MatMul run by Session::Run with a and
//                     b fed (executor, allocation of the product, the kernel), interleaved call by
//                     call with the same GEMM called directly on the library the kernel uses
//                     (oneDNN when built with it, else OpenBLAS) on preallocated buffers;
//   BM_SgemmOneDnn    dnnl_sgemm alone (when built with oneDNN);
//   BM_SgemmOpenBlas  cblas_sgemm alone (OPENBLAS_CORETYPE as the environment sets it).
// Figures are GFLOP/s (2*N^3 flops per product) from the MEDIAN wall time per call, and the
// Session/direct ratio is the ratio of the interleaved medians: interleaving and medians keep the
// comparison fair when other processes share the machine. The libraries use every core.
// After the runs a summary prints, per N, Session and direct GFLOP/s, their ratio (goal >= 0.95
// at 1024 and above), each library alone, and, when TX_PEAK_GFLOPS is set (the all-core figure
// of peak_flops_bench), Session's fraction of peak (goal >= 0.75 at 1024 and above).
#include <cblas.h>
#ifdef TX_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
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

double Flops(int64_t n) { return 2.0 * static_cast<double>(n) * n * n; }

Tensor RandomMatrix(int64_t n, uint32_t seed) {
  Tensor t(DT_FLOAT, TensorShape({n, n}));
  float* p = t.data<float>();
  uint32_t s = seed;
  for (int64_t i = 0; i < n * n; ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<float>(s >> 8) / static_cast<float>(1 << 24) - 0.5f;
  }
  return t;
}

// Per-call wall times; Gflops() from their median.
class Samples {
 public:
  template <typename Fn>
  void Time(Fn&& fn) {
    const auto start = Clock::now();
    fn();
    seconds_.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  double Median() {
    if (seconds_.empty()) return 0;
    std::nth_element(seconds_.begin(), seconds_.begin() + seconds_.size() / 2, seconds_.end());
    return seconds_[seconds_.size() / 2];
  }
  double Gflops(int64_t n) {
    const double m = Median();
    return m > 0 ? Flops(n) / m * 1e-9 : 0;
  }

 private:
  std::vector<double> seconds_;
};

struct Buffers {
  explicit Buffers(int64_t n) : a(RandomMatrix(n, 1)), b(RandomMatrix(n, 2)), c(DT_FLOAT, {n, n}) {}
  Tensor a, b, c;
};

#ifdef TX_HAVE_DNNL
void OneDnnSgemm(int64_t n, Buffers& buf) {
  dnnl_sgemm('N', 'N', n, n, n, 1.0f, buf.a.data<float>(), n, buf.b.data<float>(), n, 0.0f,
             buf.c.data<float>(), n);
}
#endif
void OpenBlasSgemm(int64_t n, Buffers& buf) {
  const int m = static_cast<int>(n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f, buf.a.data<float>(), m,
              buf.b.data<float>(), m, 0.0f, buf.c.data<float>(), m);
}
// The library the MatMul kernel uses for float32 (kernels/cpu/matmul_op.cc).
void KernelLibrarySgemm(int64_t n, Buffers& buf) {
#ifdef TX_HAVE_DNNL
  OneDnnSgemm(n, buf);
#else
  OpenBlasSgemm(n, buf);
#endif
}

GraphDef MatMulGraph(int64_t n) {
  GraphDef g;
  for (const char* name : {"a", "b"}) {
    NodeDef* p = g.add_node();
    p->set_name(name);
    p->set_op("Placeholder");
    AddNodeAttr("dtype", DT_FLOAT, p);
    AddNodeAttr("shape", PartialTensorShape({n, n}), p);
  }
  NodeDef* m = g.add_node();
  m->set_name("m");
  m->set_op("MatMul");
  m->add_input("a");
  m->add_input("b");
  AddNodeAttr("T", DT_FLOAT, m);
  return g;
}

void BM_MatMulSession(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto session = NewSession(SessionOptions());
  if (!session.ok()) {
    state.SkipWithError(session.status().ToString().c_str());
    return;
  }
  Status s = (*session)->Create(MatMulGraph(n));
  Buffers buf(n);
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"a", buf.a}, {"b", buf.b}};
  std::vector<Tensor> out;
  if (s.ok()) s = (*session)->Run(feeds, {"m:0"}, {}, &out);  // builds and caches the executor
  if (!s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  KernelLibrarySgemm(n, buf);
  Samples session_times, direct_times;
  for (auto _ : state) {
    session_times.Time([&] { s = (*session)->Run(feeds, {"m:0"}, {}, &out); });
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
    direct_times.Time([&] { KernelLibrarySgemm(n, buf); });
  }
  const double session_gflops = session_times.Gflops(n);
  const double direct_gflops = direct_times.Gflops(n);
  state.counters["GFLOPS"] = session_gflops;
  state.counters["direct_GFLOPS"] = direct_gflops;
  state.counters["ratio"] = direct_gflops > 0 ? session_gflops / direct_gflops : 0;
}

template <void (*kSgemm)(int64_t, Buffers&)>
void BM_Sgemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  Buffers buf(n);
  kSgemm(n, buf);
  Samples times;
  for (auto _ : state) times.Time([&] { kSgemm(n, buf); });
  state.counters["GFLOPS"] = times.Gflops(n);
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int n : {256, 512, 1024, 2048}) b->Arg(n);
  b->ArgNames({"n"})->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
}
BENCHMARK(BM_MatMulSession)->Apply(Sizes);
#ifdef TX_HAVE_DNNL
BENCHMARK_TEMPLATE(BM_Sgemm, OneDnnSgemm)->Name("BM_SgemmOneDnn")->Apply(Sizes);
#endif
BENCHMARK_TEMPLATE(BM_Sgemm, OpenBlasSgemm)->Name("BM_SgemmOpenBlas")->Apply(Sizes);

// Prints the usual console output and keeps each run's counters (the best over repetitions) for
// the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      const std::string name = r.run_name.function_name;
      const std::string& args = r.run_name.args;
      const int64_t n = std::atoll(args.substr(args.find(':') + 1).c_str());
      for (const auto& [counter, value] : r.counters) {
        double& best = values_[name + "/" + counter][n];
        best = std::max(best, static_cast<double>(value));
      }
    }
  }

  void PrintSummary() const {
#ifdef TX_HAVE_DNNL
    const char* lib = "oneDNN";
#else
    const char* lib = "OpenBLAS";
#endif
    const char* peak_env = std::getenv("TX_PEAK_GFLOPS");
    const double peak = peak_env != nullptr ? std::atof(peak_env) : 0.0;
    auto get = [&](const std::string& key, int64_t n) {
      auto k = values_.find(key);
      if (k == values_.end()) return 0.0;
      auto v = k->second.find(n);
      return v == k->second.end() ? 0.0 : v->second;
    };
    auto sess = values_.find("BM_MatMulSession/GFLOPS");
    if (sess == values_.end()) return;
    std::printf("\nMatMul float32, GFLOP/s from median call times; the kernel uses %s\n", lib);
    std::printf("%6s %9s %9s %7s %9s %9s %8s\n", "n", "Session", "direct", "ratio", "oneDNN",
                "OpenBLAS", "of_peak");
    for (const auto& [n, g] : sess->second) {
      std::printf("%6lld %9.1f %9.1f %7.3f %9.1f %9.1f", static_cast<long long>(n), g,
                  get("BM_MatMulSession/direct_GFLOPS", n), get("BM_MatMulSession/ratio", n),
                  get("BM_SgemmOneDnn/GFLOPS", n), get("BM_SgemmOpenBlas/GFLOPS", n));
      if (peak > 0) {
        std::printf(" %8.3f\n", g / peak);
      } else {
        std::printf(" %8s\n", "-");
      }
    }
    if (peak <= 0) std::printf("(set TX_PEAK_GFLOPS from peak_flops_bench for of_peak)\n");
  }

 private:
  std::map<std::string, std::map<int64_t, double>> values_;
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
