// tensorflux inspect GRAPH --optimize / --dot: the graph a session would run for a signature,
// through the master's passes (passes/graph_optimizer.h), reported pass by pass, and as DOT.
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "cli.h"
#include "tensorflux/devices/cpu_device.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/graph/graph_dot.h"
#include "tensorflux/passes/graph_optimizer.h"
#include "tensorflux/runtime/subgraph.h"

namespace tensorflux {
namespace cli {
namespace {

std::string Names(const std::vector<std::string>& v) {
  return v.empty() ? "(none)" : absl::StrJoin(v, ", ");
}

void PrintStats(const std::vector<PassStats>& stats) {
  std::printf("  %-30s %8s %8s %8s\n", "pass", "before", "after", "changes");
  for (const PassStats& s : stats) {
    if (!s.enabled) {
      std::printf("  %-30s %8s\n", s.name.c_str(), "off");
    } else if (!s.status.ok()) {
      std::printf("  %-30s %8d %8s  failed, graph left unchanged: %s\n", s.name.c_str(),
                  s.nodes_before, "-", s.status.ToString().c_str());
    } else {
      std::printf("  %-30s %8d %8d %8d\n", s.name.c_str(), s.nodes_before, s.nodes_after,
                  s.changes);
    }
  }
}

}  // namespace

int OptimizeAndReport(const LoadedGraph& loaded, const OptimizeArgs& args) {
  auto imported = GraphFromGraphDef(loaded.graph_def);
  if (!imported.ok()) return ReportError(imported.status());
  std::unique_ptr<Graph> g = std::move(*imported);
  std::vector<std::string> targets = args.targets;
  if (args.feeds.empty() && args.fetches.empty() && targets.empty()) {
    for (const Node* n : g->nodes())
      if (n->out_edges().empty()) targets.push_back(n->name());
  }
  Status s = RewriteGraphForExecution(g.get(), args.feeds, args.fetches, targets);
  if (!s.ok()) return ReportError(s);
  if (args.optimize) {
    std::printf("graph: %s (%d nodes after pruning to the signature)\n", loaded.path.c_str(),
                g->num_nodes());
    std::printf("feeds: %s\nfetches: %s\ntargets: %s\n", Names(args.feeds).c_str(),
                Names(args.fetches).c_str(),
                args.targets.empty() && args.feeds.empty() && args.fetches.empty()
                    ? "(every unconsumed node)"
                    : Names(args.targets).c_str());
    OptimizerContext ctx = OptimizerContext::ForSignature(args.feeds, args.fetches, targets);
    CpuDevice device("/job:localhost/replica:0/task:0/device:CPU:0", 1);
    ctx.cpu_device = &device;
    std::vector<PassStats> stats;
    s = OptimizeGraph(PassSwitches(), ctx, &g, &stats);
    if (!s.ok()) return ReportError(s);
    std::printf("passes:\n");
    PrintStats(stats);
    std::map<std::string, int> by_op;
    for (const Node* n : g->nodes()) ++by_op[n->type_string()];
    std::printf("ops after the passes (%d nodes):\n", g->num_nodes());
    for (const auto& [op, count] : by_op) std::printf("  %-28s %d\n", op.c_str(), count);
  }
  if (!args.dot_file.empty()) {
    const std::string dot = GraphToDot(*g, loaded.path);
    if (args.dot_file == "-") {
      std::fputs(dot.c_str(), stdout);
    } else {
      std::ofstream f(args.dot_file, std::ios::binary | std::ios::trunc);
      f << dot;
      f.close();
      if (!f) {
        return ReportError(errors::PermissionDenied("cannot write DOT file '", args.dot_file, "'"));
      }
      if (args.optimize) std::printf("wrote %s\n", args.dot_file.c_str());
    }
  }
  return 0;
}

}  // namespace cli
}  // namespace tensorflux
