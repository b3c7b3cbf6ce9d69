// Common-subexpression elimination (graph_optimizer.h; TF's OptimizeCSE and grappler's
// common_subgraph_elimination): in topological order, two nodes with the same op, attrs
// (including Const values), data inputs (same source output, same order), control inputs and
// requested and assigned device compute the same values, so the later one's consumers move to
// the earlier one and it is removed. Because inputs are compared after earlier merges, whole
// equal subgraphs collapse in one pass.
//
// Never merged: stateful ops (two RandomUniform draws differ), nodes with a reference endpoint
// or reading a reference output (two reads of a TF 1.x variable may see different values),
// Placeholder /
// PlaceholderWithDefault (distinct feeds), _Arg / _Retval. A preserved node is never the one
// removed: when the later of two equal nodes is preserved and the earlier is not, the earlier
// one goes; two preserved nodes both stay.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "tensorflux/graph/algorithm.h"
#include "tensorflux/passes/graph_optimizer.h"
#include "tensorflux/passes/pass_util.h"

namespace tensorflux {
namespace {

bool Mergeable(const Node* n) {
  if (n->IsStateful() || passes::HasRefEndpoint(n) || n->IsArg() || n->IsRetval()) return false;
  if (n->IsPlaceholder() || n->type_string() == "PlaceholderWithDefault") return false;
  for (const Edge* e : n->in_edges()) {  // a read of a variable's value (ref -> value edge)
    if (!e->IsControlEdge() && IsRefType(e->src()->output_type(e->src_output()))) return false;
  }
  return true;
}

void AppendDeterministic(const google::protobuf::MessageLite& m, std::string* out) {
  google::protobuf::io::StringOutputStream stream(out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&coded);
}

// Everything that decides a node's outputs, as one string.
std::string Key(const Node* n) {
  std::string key = absl::StrCat(n->type_string(), "\n", n->requested_device(), "\n",
                                 n->assigned_device_name(), "\n");
  std::vector<std::string> attr_names;
  for (const auto& [name, value] : n->def().attr()) attr_names.push_back(name);
  std::sort(attr_names.begin(), attr_names.end());
  for (const std::string& name : attr_names) {
    absl::StrAppend(&key, name, "=");
    std::string value;
    AppendDeterministic(n->def().attr().at(name), &value);
    absl::StrAppend(&key, value.size(), ":", value, ";");
  }
  std::vector<std::pair<int, int>> data(n->num_inputs(), {-1, 0});
  std::vector<int> controls;
  for (const Edge* e : n->in_edges()) {
    if (e->IsControlEdge()) {
      controls.push_back(e->src()->id());
    } else {
      data[e->dst_input()] = {e->src()->id(), e->src_output()};
    }
  }
  std::sort(controls.begin(), controls.end());
  for (const auto& [id, slot] : data) absl::StrAppend(&key, "\n", id, ":", slot);
  for (int id : controls) absl::StrAppend(&key, "\n^", id);
  return key;
}

// Moves every consumer of `from` to the same output of `to`, then removes `from`.
Status Merge(Graph* g, Node* from, Node* to) {
  std::vector<std::pair<Node*, int>> outputs;
  for (int i = 0; i < from->num_outputs(); ++i) outputs.emplace_back(to, i);
  if (from->num_outputs() == 0) outputs.emplace_back(to, kControlSlot);
  // Equal control inputs: the consumers need no extra ordering edges.
  return passes::ReplaceNode(g, from, outputs, /*move_control_inputs=*/false);
}

class CommonSubgraphElimination : public GraphPass {
 public:
  const char* name() const override { return "common_subgraph_elimination"; }

  StatusOr<int> Run(const OptimizerContext& ctx, Graph* g) const override {
    TX_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*g));
    absl::flat_hash_map<std::string, Node*> seen;
    int merged = 0;
    for (Node* n : order) {
      if (!Mergeable(n)) continue;
      auto [it, inserted] = seen.emplace(Key(n), n);
      if (inserted) continue;
      Node* rep = it->second;
      if (!ctx.IsPreserved(n)) {
        TX_RETURN_IF_ERROR(Merge(g, n, rep));
      } else if (!ctx.IsPreserved(rep)) {
        TX_RETURN_IF_ERROR(Merge(g, rep, n));
        it->second = n;
      } else {
        continue;
      }
      ++merged;
    }
    return merged;
  }
};

}  // namespace

std::unique_ptr<GraphPass> NewCommonSubgraphEliminationPass() {
  return std::make_unique<CommonSubgraphElimination>();
}

}  // namespace tensorflux
