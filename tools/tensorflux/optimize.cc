// tensorflux inspect GRAPH --optimize / --place / --partition / --dot: the graph a session would
// run for a signature, through the master's passes (passes/graph_optimizer.h), reported pass by
// pass, placed (passes/placer.h) and partitioned (passes/graph_partition.h) over the devices of
// --devices, and as DOT.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli.h"
#include "tensorflux/devices/device_mgr.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/graph/graph_dot.h"
#include "tensorflux/passes/graph_optimizer.h"
#include "tensorflux/passes/graph_partition.h"
#include "tensorflux/passes/placer.h"
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

// --devices "CPU=4,GPU=1" -> ConfigProto.device_count.
StatusOr<ConfigProto> DeviceConfig(const std::string& spec) {
  ConfigProto config;
  for (const std::string& part : std::vector<std::string>(absl::StrSplit(spec, ','))) {
    std::vector<std::string> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    int count = 0;
    if (kv.size() != 2 || kv[0].empty() || !absl::SimpleAtoi(kv[1], &count) || count < 0) {
      return errors::InvalidArgument("bad --devices '", spec,
                                     "': expected TYPE=COUNT[,TYPE=COUNT...], e.g. CPU=4");
    }
    (*config.mutable_device_count())[kv[0]] = count;
  }
  return config;
}

// Places `g` as a session's first step would: stateful nodes where the whole graph puts them,
// then the step graph (soft placement; notes to stderr). Prints the node count per device when
// `print`.
Status PlaceAndReport(const Graph& whole, const std::vector<Device*>& devices, bool print,
                      Graph* g) {
  PlacerOptions opts;
  absl::flat_hash_map<std::string, std::string> pins;
  PlaceStatefulNodes(whole, devices, opts, &pins).IgnoreError();  // as LocalSession
  for (Node* n : g->nodes()) {
    auto it = pins.find(n->name());
    if (it != pins.end()) n->set_assigned_device_name(it->second);
  }
  std::vector<std::string> notes;
  TX_RETURN_IF_ERROR(PlaceGraph(g, devices, opts, &notes));
  for (const std::string& note : notes) std::fprintf(stderr, "%s\n", note.c_str());
  if (!print) return OkStatus();
  std::map<std::string, int> per_device;
  for (const Node* n : g->nodes()) ++per_device[n->assigned_device_name()];
  std::printf("placement (%zu devices):\n", devices.size());
  for (const Device* d : devices) {
    std::printf("  %-48s %d nodes\n", d->name().c_str(), per_device[d->name()]);
  }
  return OkStatus();
}

void PrintPartitions(const std::map<std::string, GraphDef>& parts) {
  std::printf("partitions (%zu):\n", parts.size());
  for (const auto& [device, def] : parts) {
    int sends = 0, recvs = 0;
    for (const NodeDef& n : def.node()) {
      sends += n.op() == "_Send";
      recvs += n.op() == "_Recv";
    }
    std::printf("  %-48s %d nodes, %d _Send, %d _Recv\n", device.c_str(), def.node_size(), sends,
                recvs);
  }
}

}  // namespace

int OptimizeAndReport(const LoadedGraph& loaded, const OptimizeArgs& args) {
  auto imported = GraphFromGraphDef(loaded.graph_def);
  if (!imported.ok()) return ReportError(imported.status());
  const std::unique_ptr<Graph> whole = std::move(*imported);
  std::unique_ptr<Graph> g = whole->Clone();
  std::vector<std::string> targets = args.targets;
  if (args.feeds.empty() && args.fetches.empty() && targets.empty()) {
    for (const Node* n : g->nodes())
      if (n->out_edges().empty()) targets.push_back(n->name());
  }
  Status s = RewriteGraphForExecution(g.get(), args.feeds, args.fetches, targets);
  if (!s.ok()) return ReportError(s);
  std::unique_ptr<DeviceMgr> mgr;
  if (args.place) {
    auto config = DeviceConfig(args.devices);
    if (!config.ok()) return ReportError(config.status());
    auto created = DeviceMgr::Create(*config);
    if (!created.ok()) return ReportError(created.status());
    mgr = std::move(*created);
  }
  if (args.optimize) {
    std::printf("graph: %s (%d nodes after pruning to the signature)\n", loaded.path.c_str(),
                g->num_nodes());
    std::printf("feeds: %s\nfetches: %s\ntargets: %s\n", Names(args.feeds).c_str(),
                Names(args.fetches).c_str(),
                args.targets.empty() && args.feeds.empty() && args.fetches.empty()
                    ? "(every unconsumed node)"
                    : Names(args.targets).c_str());
  }
  if (args.optimize || args.place) {
    OptimizerContext ctx = OptimizerContext::ForSignature(args.feeds, args.fetches, targets);
    std::unique_ptr<DeviceMgr> host;
    if (mgr == nullptr) {
      auto created = DeviceMgr::Create(ConfigProto());
      if (!created.ok()) return ReportError(created.status());
      host = std::move(*created);
    }
    const DeviceMgr& devices = mgr != nullptr ? *mgr : *host;
    ctx.cpu_device = devices.HostCPU();
    ctx.device_types.clear();
    for (const Device* d : devices.ListDevices()) {
      if (std::find(ctx.device_types.begin(), ctx.device_types.end(), d->device_type()) ==
          ctx.device_types.end()) {
        ctx.device_types.push_back(d->device_type());
      }
    }
    std::vector<PassStats> stats;
    s = OptimizeGraph(PassSwitches(), ctx, &g, &stats);
    if (!s.ok()) return ReportError(s);
    if (args.optimize) {
      std::printf("passes:\n");
      PrintStats(stats);
      std::map<std::string, int> by_op;
      for (const Node* n : g->nodes()) ++by_op[n->type_string()];
      std::printf("ops after the passes (%d nodes):\n", g->num_nodes());
      for (const auto& [op, count] : by_op) std::printf("  %-28s %d\n", op.c_str(), count);
    }
  }
  std::map<std::string, GraphDef> parts;
  if (args.place) {
    // DOT on stdout stays parseable: no summaries there.
    s = PlaceAndReport(*whole, mgr->ListDevices(), args.dot_file != "-", g.get());
    if (!s.ok()) return ReportError(s);
  }
  if (args.partition) {
    s = Partition(PartitionOptions(), *g, &parts);
    if (!s.ok()) return ReportError(s);
    if (args.dot_file != "-") PrintPartitions(parts);
  }
  if (!args.dot_file.empty()) {
    const std::string dot =
        args.partition ? PartitionsToDot(parts, loaded.path) : GraphToDot(*g, loaded.path);
    if (args.dot_file == "-") {
      std::fputs(dot.c_str(), stdout);
    } else {
      std::ofstream f(args.dot_file, std::ios::binary | std::ios::trunc);
      f << dot;
      f.close();
      if (!f) {
        return ReportError(errors::PermissionDenied("cannot write DOT file '", args.dot_file, "'"));
      }
      if (args.optimize || args.place) std::printf("wrote %s\n", args.dot_file.c_str());
    }
  }
  return 0;
}

}  // namespace cli
}  // namespace tensorflux
