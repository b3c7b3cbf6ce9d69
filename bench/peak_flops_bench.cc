// The machine's fp32 fused-multiply-add peak, the yardstick for GEMM efficiency
// (docs/PERFORMANCE.md). Each thread runs kChains independent FMA dependency chains on full
// vector registers (AVX-512 when compiled with __AVX512F__, else AVX2/FMA): more chains than FMA
// latency x FMA pipes, so the loop is bound by FMA throughput, not latency. Reported as GFLOP/s
// (2 flops per FMA lane) on 1 thread and on every hardware thread (one std::thread each), over
// wall time: the best call (the peak) and the median call.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"

namespace {

constexpr int kChains = 24;               // independent accumulators per thread
constexpr int64_t kInnerIters = 1 << 20;  // rounds of kChains FMAs per call

#if defined(__AVX512F__)
using Vec = __m512;
constexpr int kLanes = 16;
inline Vec Set1(float x) { return _mm512_set1_ps(x); }
inline Vec Fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
inline Vec Add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
inline float Sum(Vec v) {  // (_mm512_reduce_add_ps draws a false GCC 12 warning)
  alignas(64) float f[16];
  _mm512_store_ps(f, v);
  float s = 0;
  for (float x : f) s += x;
  return s;
}
constexpr const char* kIsa = "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
using Vec = __m256;
constexpr int kLanes = 8;
inline Vec Set1(float x) { return _mm256_set1_ps(x); }
inline Vec Fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline Vec Add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
inline float Sum(Vec v) {
  alignas(32) float f[8];
  _mm256_store_ps(f, v);
  float s = 0;
  for (float x : f) s += x;
  return s;
}
constexpr const char* kIsa = "avx2";
#else
#error "peak_flops_bench needs AVX2+FMA or AVX-512 (build with -march=native)"
#endif

constexpr double kFlopsPerCall = 2.0 * kLanes * kChains * static_cast<double>(kInnerIters);

// kInnerIters rounds of kChains independent FMAs. Returns a value that depends on all of them so
// the compiler keeps the work. acc = acc * 0.9999999 + 1e-7 stays bounded and never denormal.
__attribute__((noinline)) float FmaKernel(float seed) {
  Vec acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = Set1(seed + static_cast<float>(i));
  const Vec mul = Set1(0.9999999f);
  const Vec add = Set1(1e-7f);
  for (int64_t it = 0; it < kInnerIters; ++it) {
#pragma GCC unroll 24
    for (int i = 0; i < kChains; ++i) acc[i] = Fma(acc[i], mul, add);
  }
  Vec total = acc[0];
  for (int i = 1; i < kChains; ++i) total = Add(total, acc[i]);
  return Sum(total);
}

int HardwareThreads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// state.range(0) threads, each running FmaKernel once per iteration (about 4 ms of work, so
// starting the threads costs under 1%).
void BM_PeakFmaFp32(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  std::vector<float> sink(threads);
  std::vector<double> seconds;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) {
      pool.emplace_back([&sink, t] { sink[t] = FmaKernel(static_cast<float>(t)); });
    }
    sink[0] = FmaKernel(0.0f);
    for (auto& th : pool) th.join();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    benchmark::DoNotOptimize(sink.data());
  }
  // The best call is the peak (other processes only ever slow a call down); the median shows how
  // steady the machine was.
  std::sort(seconds.begin(), seconds.end());
  const double flops = kFlopsPerCall * threads;
  state.counters["threads"] = threads;
  state.counters["GFLOPS"] = flops / seconds.front() * 1e-9;
  state.counters["median_GFLOPS"] = flops / seconds[seconds.size() / 2] * 1e-9;
  state.SetLabel(kIsa);
}
BENCHMARK(BM_PeakFmaFp32)->Arg(1)->Arg(HardwareThreads())->ArgNames({"threads"})->UseRealTime()->Unit(
    benchmark::kMillisecond)->MinTime(0.5);

}  // namespace

BENCHMARK_MAIN();
