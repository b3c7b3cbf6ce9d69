// DOT output of a Graph (graph_dot.h).
#include "tensorflux/graph/graph_dot.h"

#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tensorflux {
namespace {

// `s` with DOT's string escapes.
std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string Quote(const std::string& s) { return absl::StrCat("\"", Escape(s), "\""); }

// A node's box, by device: (name, op) in the order given.
using Clusters = std::map<std::string, std::vector<std::pair<std::string, std::string>>>;

std::string Header(const std::string& title) {
  return absl::StrCat("digraph ", Quote(title), " {\n",
                      "  node [shape=box, style=rounded, fontsize=10];\n");
}

// One cluster per non-empty device; the nodes of "" outside any. Boxes: name over op (DOT's
// "\n" line break).
void AppendClusters(const Clusters& by_device, std::string* out) {
  int cluster = 0;
  for (const auto& [device, nodes] : by_device) {
    const std::string indent = device.empty() ? "  " : "    ";
    if (!device.empty()) {
      absl::StrAppend(out, "  subgraph ", Quote(absl::StrCat("cluster_", cluster++)), " {\n",
                      "    label=", Quote(device), ";\n    style=dashed;\n");
    }
    for (const auto& [name, op] : nodes) {
      absl::StrAppend(out, indent, Quote(name), " [label=\"", Escape(name), "\\n", Escape(op),
                      "\"];\n");
    }
    if (!device.empty()) *out += "  }\n";
  }
}

void AppendEdge(const std::string& src, int src_output, const std::string& dst, bool control,
                std::string* out) {
  absl::StrAppend(out, "  ", Quote(src), " -> ", Quote(dst));
  if (control) {
    *out += " [style=dashed]";
  } else if (src_output > 0) {
    absl::StrAppend(out, " [label=", Quote(absl::StrCat(src_output)), "]");
  }
  *out += ";\n";
}

}  // namespace

std::string GraphToDot(const Graph& g, const std::string& title) {
  std::string out = Header(title);
  Clusters by_device;
  for (const Node* n : g.nodes()) {
    const std::string& device =
        n->assigned_device_name().empty() ? n->requested_device() : n->assigned_device_name();
    by_device[device].emplace_back(n->name(), n->type_string());
  }
  AppendClusters(by_device, &out);
  for (const Node* n : g.nodes()) {
    for (const Edge* e : n->out_edges()) {
      AppendEdge(e->src()->name(), e->src_output(), e->dst()->name(), e->IsControlEdge(), &out);
    }
  }
  return out + "}\n";
}

std::string PartitionsToDot(const std::map<std::string, GraphDef>& partitions,
                            const std::string& title) {
  std::string out = Header(title);
  Clusters by_device;
  std::map<std::string, std::string> send_of;  // tensor_name -> _Send node
  for (const auto& [device, def] : partitions) {
    auto& nodes = by_device[device];
    for (const NodeDef& n : def.node()) {
      nodes.emplace_back(n.name(), n.op());
      auto it = n.attr().find("tensor_name");
      if ((n.op() == "_Send" || n.op() == "_HostSend") && it != n.attr().end()) {
        send_of[it->second.s()] = n.name();
      }
    }
  }
  AppendClusters(by_device, &out);
  for (const auto& [device, def] : partitions) {
    for (const NodeDef& n : def.node()) {
      for (const std::string& in : n.input()) {
        const bool control = !in.empty() && in[0] == '^';
        std::string src = control ? in.substr(1) : in;
        int output = 0;
        const size_t colon = src.rfind(':');
        if (colon != std::string::npos && absl::SimpleAtoi(src.substr(colon + 1), &output)) {
          src.resize(colon);
        }
        AppendEdge(src, output, n.name(), control, &out);
      }
    }
  }
  for (const auto& [device, def] : partitions) {
    for (const NodeDef& n : def.node()) {
      auto it = n.attr().find("tensor_name");
      if ((n.op() != "_Recv" && n.op() != "_HostRecv") || it == n.attr().end()) continue;
      auto send = send_of.find(it->second.s());
      if (send == send_of.end()) continue;
      absl::StrAppend(&out, "  ", Quote(send->second), " -> ", Quote(n.name()),
                      " [style=dotted, color=blue];\n");
    }
  }
  return out + "}\n";
}

}  // namespace tensorflux
