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

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "bench_util.h"

namespace tensorflux::bench {
namespace {

double Flops(int64_t n) { return 2.0 * static_cast<double>(n) * n * n; }

struct Buffers {
  explicit Buffers(int64_t n)
      : a(RandomFloats(TensorShape({n, n}), 1)),
        b(RandomFloats(TensorShape({n, n}), 2)),
        c(DT_FLOAT, TensorShape({n, n})) {}
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
  AddPlaceholder(&g, "a", TensorShape({n, n}));
  AddPlaceholder(&g, "b", TensorShape({n, n}));
  AddNodeAttr("T", DT_FLOAT, AddNode(&g, "m", "MatMul", {"a", "b"}));
  return g;
}

void BM_MatMulSession(benchmark::State& state) {
  const int64_t n = state.range(0);
  Buffers buf(n);
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"a", buf.a}, {"b", buf.b}};
  auto session = WarmSession(state, MatMulGraph(n), feeds, "m:0");
  if (session == nullptr) return;
  KernelLibrarySgemm(n, buf);
  CallTimes session_times, direct_times;
  if (!TimeInterleaved(state, session.get(), feeds, "m:0", &session_times,
                       {{[&] { KernelLibrarySgemm(n, buf); }, &direct_times}})) {
    return;
  }
  const double session_gflops = session_times.GigaPerSecond(Flops(n));
  const double direct_gflops = direct_times.GigaPerSecond(Flops(n));
  state.counters["GFLOPS"] = session_gflops;
  state.counters["direct_GFLOPS"] = direct_gflops;
  state.counters["ratio"] = Ratio(session_gflops, direct_gflops);
}

template <void (*kSgemm)(int64_t, Buffers&)>
void BM_Sgemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  Buffers buf(n);
  kSgemm(n, buf);
  CallTimes times;
  for (auto _ : state) times.Time([&] { kSgemm(n, buf); });
  state.counters["GFLOPS"] = times.GigaPerSecond(Flops(n));
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

// Per N: Session and direct GFLOP/s, their ratio, each library alone, fraction of peak.
class MatMulSummary : public SummaryReporter {
 public:
  void PrintSummary() const override {
#ifdef TX_HAVE_DNNL
    const char* lib = "oneDNN";
#else
    const char* lib = "OpenBLAS";
#endif
    const double peak = PeakGflopsFromEnv();
    std::printf("\nMatMul float32, GFLOP/s from median call times; the kernel uses %s\n", lib);
    std::printf("%6s %9s %9s %7s %9s %9s %8s\n", "n", "Session", "direct", "ratio", "oneDNN",
                "OpenBLAS", "of_peak");
    for (int n : {256, 512, 1024, 2048}) {
      const std::string arg = "/n:" + std::to_string(n);
      const double g = Get("BM_MatMulSession" + arg, "GFLOPS");
      if (g <= 0) continue;
      std::printf("%6d %9.1f %9.1f %7.3f %9.1f %9.1f", n, g,
                  Get("BM_MatMulSession" + arg, "direct_GFLOPS"),
                  Get("BM_MatMulSession" + arg, "ratio"), Get("BM_SgemmOneDnn" + arg, "GFLOPS"),
                  Get("BM_SgemmOpenBlas" + arg, "GFLOPS"));
      PrintOfPeak(g, peak);
    }
    if (peak <= 0) std::printf("(set TX_PEAK_GFLOPS from peak_flops_bench for of_peak)\n");
  }
};

}  // namespace
}  // namespace tensorflux::bench

int main(int argc, char** argv) {
  tensorflux::bench::MatMulSummary reporter;
  return tensorflux::bench::RunBenchmarks(argc, argv, &reporter);
}
