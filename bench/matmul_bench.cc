// float32 MatMul, N x N x N for N in 256/512/1024/2048, three ways in one binary:
//   Session    a graph Placeholder a, Placeholder b -> MatMul run by LocalSession::Run with a and b
//              fed (what a user gets: executor, allocation of the product, the kernel);
//   oneDNN     dnnl_sgemm called directly on preallocated buffers (when built with oneDNN);
//   OpenBLAS   cblas_sgemm called directly (OPENBLAS_CORETYPE as the environment sets it).
// Each reports GFLOP/s (2*N^3 flops per product, wall time; the libraries use every core).
// After the runs a summary prints, per N, Session GFLOP/s, the direct GFLOP/s of the library the
// kernel uses (oneDNN when present), their ratio (goal >= 0.95 at 1024 and above), and, when
// TX_PEAK_GFLOPS is set (the all-core figure from peak_flops_bench), the fraction of peak
// (goal >= 0.75 at 1024 and above).
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

// Wall-clock timer over the benchmark loop; sets the GFLOPS counter at the end.
class GflopsTimer {
 public:
  GflopsTimer(benchmark::State& state, int64_t n)
      : state_(state), n_(n), start_(std::chrono::steady_clock::now()) {}
  ~GflopsTimer() {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (state_.iterations() > 0 && s > 0) {
      state_.counters["GFLOPS"] = Flops(n_) * static_cast<double>(state_.iterations()) / s * 1e-9;
    }
  }

 private:
  benchmark::State& state_;
  int64_t n_;
  std::chrono::steady_clock::time_point start_;
};

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
  if (!s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"a", RandomMatrix(n, 1)},
                                                             {"b", RandomMatrix(n, 2)}};
  std::vector<Tensor> out;
  s = (*session)->Run(feeds, {"m:0"}, {}, &out);  // builds and caches the executor
  if (!s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  GflopsTimer timer(state, n);
  for (auto _ : state) {
    s = (*session)->Run(feeds, {"m:0"}, {}, &out);
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
  }
}

struct Buffers {
  explicit Buffers(int64_t n) : a(RandomMatrix(n, 1)), b(RandomMatrix(n, 2)), c(DT_FLOAT, {n, n}) {}
  Tensor a, b, c;
};

#ifdef TX_HAVE_DNNL
void BM_SgemmOneDnn(benchmark::State& state) {
  const int64_t n = state.range(0);
  Buffers buf(n);
  GflopsTimer timer(state, n);
  for (auto _ : state) {
    dnnl_sgemm('N', 'N', n, n, n, 1.0f, buf.a.data<float>(), n, buf.b.data<float>(), n, 0.0f,
               buf.c.data<float>(), n);
  }
}
#endif

void BM_SgemmOpenBlas(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Buffers buf(n);
  GflopsTimer timer(state, n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, buf.a.data<float>(), n,
                buf.b.data<float>(), n, 0.0f, buf.c.data<float>(), n);
  }
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int n : {256, 512, 1024, 2048}) b->Arg(n);
  b->ArgNames({"n"})->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
}
BENCHMARK(BM_MatMulSession)->Apply(Sizes);
#ifdef TX_HAVE_DNNL
BENCHMARK(BM_SgemmOneDnn)->Apply(Sizes);
#endif
BENCHMARK(BM_SgemmOpenBlas)->Apply(Sizes);

// Prints the usual console output and keeps each run's GFLOPS (best over repetitions) for the
// summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      auto it = r.counters.find("GFLOPS");
      if (it == r.counters.end()) continue;
      const std::string name = r.run_name.function_name;
      const int64_t n = std::atoll(r.run_name.args.substr(r.run_name.args.find(':') + 1).c_str());
      double& best = gflops_[name][n];
      best = std::max(best, static_cast<double>(it->second));
    }
  }

  void PrintSummary() const {
#ifdef TX_HAVE_DNNL
    const std::string lib = "BM_SgemmOneDnn", lib_name = "oneDNN";
#else
    const std::string lib = "BM_SgemmOpenBlas", lib_name = "OpenBLAS";
#endif
    const char* peak_env = std::getenv("TX_PEAK_GFLOPS");
    const double peak = peak_env != nullptr ? std::atof(peak_env) : 0.0;
    std::printf("\nMatMul float32 summary (GFLOP/s; the kernel uses %s)\n", lib_name.c_str());
    std::printf("%6s %10s %10s %10s %8s %10s\n", "n", "Session", lib_name.c_str(), "OpenBLAS",
                "ratio", "of peak");
    auto get = [&](const std::string& f, int64_t n) {
      auto fi = gflops_.find(f);
      if (fi == gflops_.end()) return 0.0;
      auto ni = fi->second.find(n);
      return ni == fi->second.end() ? 0.0 : ni->second;
    };
    auto sess = gflops_.find("BM_MatMulSession");
    if (sess == gflops_.end()) return;
    for (const auto& [n, g] : sess->second) {
      const double direct = get(lib, n);
      std::printf("%6lld %10.1f %10.1f %10.1f %8.3f", static_cast<long long>(n), g, direct,
                  get("BM_SgemmOpenBlas", n), direct > 0 ? g / direct : 0.0);
      if (peak > 0) {
        std::printf(" %10.3f\n", g / peak);
      } else {
        std::printf(" %10s\n", "(set TX_PEAK_GFLOPS)");
      }
    }
  }

 private:
  std::map<std::string, std::map<int64_t, double>> gflops_;
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
