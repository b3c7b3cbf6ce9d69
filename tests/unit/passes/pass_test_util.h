// Helpers shared by the graph-pass tests: a GraphDef builder, running the optimizer on the
// graph a session would build for a signature, and running a graph in sessions with the passes
// on and off.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/passes/graph_optimizer.h"
#include "tensorflux/runtime/local_session.h"
#include "tensorflux/runtime/subgraph.h"

namespace tensorflux::pass_test {

// Builds a GraphDef node by node; every op with a "T" attr gets `dtype` (float by default).
class GraphBuilder {
 public:
  NodeDef* Op(const std::string& name, const std::string& op,
              const std::vector<std::string>& inputs = {}, DataType dtype = DT_FLOAT) {
    NodeDef* n = def_.add_node();
    n->set_name(name);
    n->set_op(op);
    for (const std::string& in : inputs) n->add_input(in);
    auto reg = OpRegistry::Global()->LookUp(op);
    if (reg.ok()) {
      for (const auto& attr : (*reg)->op_def.attr())
        if (attr.name() == "T") AddNodeAttr("T", dtype, n);
    }
    return n;
  }
  NodeDef* Const(const std::string& name, const Tensor& value) {
    NodeDef* n = Op(name, "Const");
    AddNodeAttr("dtype", value.dtype(), n);
    AddNodeAttr("value", value, n);
    return n;
  }
  NodeDef* Scalar(const std::string& name, float v) { return Const(name, Tensor::Scalar<float>(v)); }
  NodeDef* Placeholder(const std::string& name, const PartialTensorShape& shape,
                       DataType dtype = DT_FLOAT) {
    NodeDef* n = Op(name, "Placeholder");
    AddNodeAttr("dtype", dtype, n);
    AddNodeAttr("shape", shape, n);
    return n;
  }
  const GraphDef& def() const { return def_; }

 private:
  GraphDef def_;
};

// Switches with only the named passes on.
inline PassSwitches Only(std::initializer_list<const char*> names) {
  PassSwitches s;
  s.constant_folding = s.common_subgraph_elimination = s.arithmetic_optimization = false;
  s.model_pruning = s.remapping = false;
  for (const char* n : names) {
    const std::string name = n;
    if (name == "constant_folding") s.constant_folding = true;
    if (name == "common_subgraph_elimination") s.common_subgraph_elimination = true;
    if (name == "arithmetic_optimization") s.arithmetic_optimization = true;
    if (name == "model_pruning") s.model_pruning = true;
    if (name == "remapping") s.remapping = true;
  }
  return s;
}

struct Optimized {
  std::unique_ptr<Graph> graph;
  std::vector<PassStats> stats;
  const Node* Find(const std::string& name) const { return graph->FindNode(name); }
  // Live nodes by op.
  std::map<std::string, int> OpCounts() const {
    std::map<std::string, int> counts;
    for (const Node* n : graph->nodes()) ++counts[n->type_string()];
    return counts;
  }
  int Count(const std::string& op) const {
    auto c = OpCounts();
    return c.count(op) ? c.at(op) : 0;
  }
};

// The graph a session runs for (feeds, fetches, targets): rewritten, pruned, then optimized.
inline Optimized Optimize(const GraphDef& def, const std::vector<std::string>& feeds,
                          const std::vector<std::string>& fetches,
                          const std::vector<std::string>& targets, const PassSwitches& switches,
                          OptimizerContext* ctx_override = nullptr) {
  Optimized out;
  auto g = GraphFromGraphDef(def);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return out;
  out.graph = std::move(*g);
  Status s = RewriteGraphForExecution(out.graph.get(), feeds, fetches, targets);
  EXPECT_TRUE(s.ok()) << s;
  OptimizerContext ctx = ctx_override != nullptr
                             ? *ctx_override
                             : OptimizerContext::ForSignature(feeds, fetches, targets);
  s = OptimizeGraph(switches, ctx, &out.graph, &out.stats);
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

// ConfigProto with every pass off (opt_level L0).
inline ConfigProto PassesOff() {
  ConfigProto c;
  c.mutable_graph_options()->mutable_optimizer_options()->set_opt_level(
      GraphOptions::OptimizerOptions::L0);
  return c;
}

inline StatusOr<std::vector<Tensor>> RunGraph(const GraphDef& def, const ConfigProto& config,
                                              const std::vector<std::pair<std::string, Tensor>>& feeds,
                                              const std::vector<std::string>& fetches) {
  SessionOptions opts;
  opts.config = config;
  LocalSession session(opts);
  TX_RETURN_IF_ERROR(session.Create(def));
  std::vector<Tensor> out;
  TX_RETURN_IF_ERROR(session.Run(feeds, fetches, {}, &out));
  return out;
}

inline void ExpectBitIdentical(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  if (a.dtype() == DT_STRING) {
    EXPECT_TRUE(std::equal(a.flat<std::string>().begin(), a.flat<std::string>().end(),
                           b.flat<std::string>().begin()));
    return;
  }
  EXPECT_EQ(0, std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()))
      << a.DebugString() << " vs " << b.DebugString();
}

// Runs `def` with the passes on (defaults) and off, and expects the same bits.
inline void ExpectSameWithPassesOnAndOff(
    const GraphDef& def, const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches) {
  auto on = RunGraph(def, ConfigProto(), feeds, fetches);
  auto off = RunGraph(def, PassesOff(), feeds, fetches);
  ASSERT_TRUE(on.ok()) << on.status();
  ASSERT_TRUE(off.ok()) << off.status();
  ASSERT_EQ(on->size(), off->size());
  for (size_t i = 0; i < on->size(); ++i) {
    SCOPED_TRACE(fetches[i]);
    ExpectBitIdentical((*on)[i], (*off)[i]);
  }
}

}  // namespace tensorflux::pass_test
