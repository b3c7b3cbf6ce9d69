// DOT output of a Graph (graph_dot.h).
#include "tensorflux/graph/graph_dot.h"

#include <map>
#include <vector>

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

// The node's box: name over op (DOT's "\n" line break).
std::string NodeLine(const Node* n) {
  return absl::StrCat(Quote(n->name()), " [label=\"", Escape(n->name()), "\\n",
                      Escape(n->type_string()), "\"];\n");
}

}  // namespace

std::string GraphToDot(const Graph& g, const std::string& title) {
  std::string out = absl::StrCat("digraph ", Quote(title), " {\n",
                                 "  node [shape=box, style=rounded, fontsize=10];\n");
  std::map<std::string, std::vector<const Node*>> by_device;
  for (const Node* n : g.nodes()) {
    const std::string& device =
        n->assigned_device_name().empty() ? n->requested_device() : n->assigned_device_name();
    by_device[device].push_back(n);
  }
  int cluster = 0;
  for (const auto& [device, nodes] : by_device) {
    const std::string indent = device.empty() ? "  " : "    ";
    if (!device.empty()) {
      absl::StrAppend(&out, "  subgraph ", Quote(absl::StrCat("cluster_", cluster++)), " {\n",
                      "    label=", Quote(device), ";\n    style=dashed;\n");
    }
    for (const Node* n : nodes) absl::StrAppend(&out, indent, NodeLine(n));
    if (!device.empty()) out += "  }\n";
  }
  for (const Node* n : g.nodes()) {
    for (const Edge* e : n->out_edges()) {
      absl::StrAppend(&out, "  ", Quote(e->src()->name()), " -> ", Quote(e->dst()->name()));
      if (e->IsControlEdge()) {
        out += " [style=dashed]";
      } else if (e->src_output() > 0) {
        absl::StrAppend(&out, " [label=", Quote(absl::StrCat(e->src_output())), "]");
      }
      out += ";\n";
    }
  }
  return out + "}\n";
}

}  // namespace tensorflux
