// Executor overhead: graphs of 10,000 scalar float AddV2 nodes run by Session::Run.
//
//   BM_ChainAddV2: x_{i+1} = AddV2(x_i, one), fetch x_10000 (each node waits for the previous one)
//   BM_WideAddV2:  y_i = AddV2(x0, one) for 10,000 i, all run as control inputs of a NoOp target
//
// Arguments: node count, inter-op threads (0 = one per core, -1 = no pool).
// Reports us_per_node: wall time of one Session::Run divided by the number of AddV2 nodes.
// Goal (issue 2): under 0.3 us per node for the chain. Peers on this machine (shared/PEERS.md):
// PyTorch 1.13 eager about 1 us per scalar add, TorchScript 0.64 us.
#include <chrono>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace {

NodeDef* AddNode(GraphDef* g, const std::string& name, const std::string& op) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  return n;
}

void AddScalarConst(GraphDef* g, const std::string& name, float v) {
  NodeDef* n = AddNode(g, name, "Const");
  AddNodeAttr("dtype", DT_FLOAT, n);
  AddNodeAttr("value", Tensor::Scalar<float>(v), n);
}

NodeDef* AddAdd(GraphDef* g, const std::string& name, const std::string& a,
                const std::string& b) {
  NodeDef* n = AddNode(g, name, "AddV2");
  n->add_input(a);
  n->add_input(b);
  AddNodeAttr("T", DT_FLOAT, n);
  return n;
}

GraphDef ChainGraph(int n) {
  GraphDef g;
  AddScalarConst(&g, "x0", 0.0f);
  AddScalarConst(&g, "one", 1.0f);
  for (int i = 0; i < n; ++i) {
    AddAdd(&g, "x" + std::to_string(i + 1), "x" + std::to_string(i), "one");
  }
  return g;
}

GraphDef WideGraph(int n) {
  GraphDef g;
  AddScalarConst(&g, "x0", 0.0f);
  AddScalarConst(&g, "one", 1.0f);
  NodeDef* sink = nullptr;
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    names.push_back("y" + std::to_string(i));
    AddAdd(&g, names.back(), "x0", "one");
  }
  sink = AddNode(&g, "sink", "NoOp");
  for (const auto& name : names) sink->add_input("^" + name);
  return g;
}

void RunGraph(benchmark::State& state, const GraphDef& g, int nodes,
              const std::vector<std::string>& fetches,
              const std::vector<std::string>& targets) {
  SessionOptions opts;
  // Second argument: inter-op threads (0 = one per core, -1 = no pool, all on the caller).
  opts.config.set_inter_op_parallelism_threads(static_cast<int>(state.range(1)));
  // The graph passes off: constant folding would turn the all-Const graphs into one Const,
  // and CSE would merge the wide graph's equal adds; this measures the executor.
  opts.config.mutable_graph_options()->mutable_optimizer_options()->set_opt_level(
      GraphOptions::OptimizerOptions::L0);
  auto session = NewSession(opts);
  if (!session.ok()) {
    state.SkipWithError(std::string(session.status().message()).c_str());
    return;
  }
  Status s = (*session)->Create(g);
  std::vector<Tensor> out;
  if (s.ok()) s = (*session)->Run({}, fetches, targets, &out);  // builds and caches the executor
  if (!s.ok()) {
    state.SkipWithError(StatusToString(s).c_str());
    return;
  }
  double total_us = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    s = (*session)->Run({}, fetches, targets, &out);
    total_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                    .count();
    if (!s.ok()) {
      state.SkipWithError(StatusToString(s).c_str());
      return;
    }
  }
  if (!fetches.empty() && out[0].scalar<float>() != static_cast<float>(nodes)) {
    state.SkipWithError("wrong result");
    return;
  }
  state.counters["us_per_node"] = total_us / (static_cast<double>(state.iterations()) * nodes);
  state.counters["nodes"] = nodes;
}

void BM_ChainAddV2(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  RunGraph(state, ChainGraph(n), n, {"x" + std::to_string(n)}, {});
}
BENCHMARK(BM_ChainAddV2)->Args({10000, 0})->Args({10000, -1})->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_WideAddV2(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  RunGraph(state, WideGraph(n), n, {}, {"sink"});
}
BENCHMARK(BM_WideAddV2)->Args({10000, 0})->Args({10000, -1})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tensorflux

BENCHMARK_MAIN();
