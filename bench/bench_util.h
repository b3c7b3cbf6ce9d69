// What the benchmarks in bench/ share: deterministic inputs, one-op graphs, a Session run timed
// call by call against reference calls in the same process (interleaved, so every side sees the
// same machine load), medians of per-call wall times, and a console reporter that keeps every
// run's counters for a summary table printed after all runs.
//
// Figures are computed from the MEDIAN call time: on a machine shared with other processes the
// median of interleaved calls is the fair comparison (a mean absorbs the other processes' bursts).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <sys/resource.h>

#include "benchmark/benchmark.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/graph.pb.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux::bench {

// float32 values uniform in [-0.5, 0.5) from a 32-bit LCG: the same tensor for the same seed.
inline Tensor RandomFloats(const TensorShape& shape, uint32_t seed) {
  Tensor t(DT_FLOAT, shape);
  float* p = t.data<float>();
  uint32_t s = seed;
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<float>(s >> 8) / static_cast<float>(1 << 24) - 0.5f;
  }
  return t;
}

inline NodeDef* AddNode(GraphDef* g, const std::string& name, const std::string& op,
                        const std::vector<std::string>& inputs = {}) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  for (const std::string& in : inputs) n->add_input(in);
  return n;
}

// A float32 Placeholder of a fixed shape.
inline void AddPlaceholder(GraphDef* g, const std::string& name, const TensorShape& shape) {
  NodeDef* p = AddNode(g, name, "Placeholder");
  AddNodeAttr("dtype", DT_FLOAT, p);
  AddNodeAttr("shape", PartialTensorShape(shape), p);
}

inline void AddConst(GraphDef* g, const std::string& name, const Tensor& value) {
  NodeDef* c = AddNode(g, name, "Const");
  AddNodeAttr("dtype", value.dtype(), c);
  AddNodeAttr("value", value, c);
}

// Per-call wall times.
class CallTimes {
 public:
  template <typename Fn>
  void Time(Fn&& fn) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    seconds_.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  double MedianSeconds() {
    if (seconds_.empty()) return 0;
    std::nth_element(seconds_.begin(), seconds_.begin() + seconds_.size() / 2, seconds_.end());
    return seconds_[seconds_.size() / 2];
  }
  // The `q` quantile (0.1: the 10th percentile) of the call times; 0 without samples.
  double PercentileSeconds(double q) {
    if (seconds_.empty()) return 0;
    const size_t i = std::min(seconds_.size() - 1, static_cast<size_t>(q * seconds_.size()));
    std::nth_element(seconds_.begin(), seconds_.begin() + i, seconds_.end());
    return seconds_[i];
  }
  // `amount` per call (flops, bytes) over the median call time, in units of 1e9 per second
  // (GFLOP/s, GB/s); 0 without samples.
  double GigaPerSecond(double amount) {
    const double m = MedianSeconds();
    return m > 0 ? amount / m * 1e-9 : 0;
  }

 private:
  std::vector<double> seconds_;
};

// User + system CPU time of `r`, in microseconds.
inline double CpuMicros(const rusage& r) {
  return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + r.ru_utime.tv_usec + r.ru_stime.tv_usec;
}

// Counters "cpu_us" (CPU microseconds), "switches" (voluntary + involuntary context
// switches) and "faults" (page faults) of this process per benchmark iteration between two
// getrusage(RUSAGE_SELF) samples: what a call costs, which the load on a shared machine
// changes less than the wall time.
inline void SetProcessCounters(benchmark::State& state, const rusage& before,
                               const rusage& after) {
  const double iters = static_cast<double>(state.iterations());
  state.counters["cpu_us"] = (CpuMicros(after) - CpuMicros(before)) / iters;
  state.counters["switches"] = static_cast<double>(after.ru_nvcsw + after.ru_nivcsw -
                                                   before.ru_nvcsw - before.ru_nivcsw) /
                               iters;
  state.counters["faults"] = static_cast<double>(after.ru_minflt + after.ru_majflt -
                                                 before.ru_minflt - before.ru_majflt) /
                             iters;
}

inline double Ratio(double a, double b) { return b > 0 ? a / b : 0; }

// A session (`options`: in process by default) on `graph`, run once with `feeds` -> `fetch` so
// that the executor (and any kernel cache) is built before timing. nullptr after
// state.SkipWithError on any error.
inline std::unique_ptr<Session> WarmSession(benchmark::State& state, const GraphDef& graph,
                                            const std::vector<std::pair<std::string, Tensor>>& feeds,
                                            const std::string& fetch,
                                            const SessionOptions& options = SessionOptions()) {
  auto session = NewSession(options);
  Status s = session.ok() ? (*session)->Create(graph) : session.status();
  std::vector<Tensor> out;
  if (s.ok()) s = (*session)->Run(feeds, {fetch}, {}, &out);
  if (!s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return nullptr;
  }
  return std::move(*session);
}

// The benchmark loop: each iteration times session->Run(feeds -> fetch) (the previous output is
// released first, so its buffer goes back to the allocator's cache) and then each reference
// call in order. false after state.SkipWithError when a Run fails.
inline bool TimeInterleaved(benchmark::State& state, Session* session,
                            const std::vector<std::pair<std::string, Tensor>>& feeds,
                            const std::string& fetch, CallTimes* session_times,
                            const std::vector<std::pair<std::function<void()>, CallTimes*>>& refs) {
  std::vector<Tensor> out;
  Status s;
  for (auto _ : state) {
    session_times->Time([&] {
      out.clear();
      s = session->Run(feeds, {fetch}, {}, &out);
    });
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return false;
    }
    for (const auto& [fn, times] : refs) times->Time(fn);
  }
  return true;
}

// TX_PEAK_GFLOPS (peak_flops_bench's all-core figure), or 0 when unset.
inline double PeakGflopsFromEnv() {
  const char* v = std::getenv("TX_PEAK_GFLOPS");
  return v != nullptr ? std::atof(v) : 0.0;
}

// Console output plus every run's counters, keyed by "function/first_arg" (e.g.
// "BM_ConvSession/op:0", "BM_Memcpy") and counter name, for PrintSummary().
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      std::string key = r.run_name.function_name;
      const std::string& args = r.run_name.args;
      if (!args.empty()) key += "/" + args.substr(0, args.find('/'));
      for (const auto& [counter, value] : r.counters) {
        values_[key][counter].push_back(static_cast<double>(value));
      }
    }
  }
  // The median over repetitions (--benchmark_repetitions) of `counter` for `key`; 0 if absent.
  double Get(const std::string& key, const std::string& counter) const {
    auto k = values_.find(key);
    if (k == values_.end()) return 0;
    auto c = k->second.find(counter);
    if (c == k->second.end() || c->second.empty()) return 0;
    std::vector<double> v = c->second;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  }
  std::vector<std::string> Keys() const {
    std::vector<std::string> keys;
    for (const auto& [k, _] : values_) keys.push_back(k);
    return keys;
  }
  virtual void PrintSummary() const = 0;

 private:
  std::map<std::string, std::map<std::string, std::vector<double>>> values_;
};

// main(): runs the benchmarks selected by the command line, then the summary.
inline int RunBenchmarks(int argc, char** argv, SummaryReporter* reporter) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks(reporter);
  reporter->PrintSummary();
  benchmark::Shutdown();
  return 0;
}

// Prints " %8.3f" of g / peak, or " -" when peak is unknown.
inline void PrintOfPeak(double g, double peak) {
  if (peak > 0) {
    std::printf(" %8.3f\n", g / peak);
  } else {
    std::printf(" %8s\n", "-");
  }
}

}  // namespace tensorflux::bench
