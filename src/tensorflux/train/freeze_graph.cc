#include "tensorflux/train/freeze_graph.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/graph/graph_def_io.h"

namespace tensorflux {
namespace {

bool IsRefVariable(const NodeDef& n) { return n.op() == "VariableV2" || n.op() == "Variable"; }
bool IsVariable(const NodeDef& n) { return n.op() == "VarHandleOp" || IsRefVariable(n); }

// name -> index in graph_def.node().
StatusOr<absl::flat_hash_map<std::string, int>> IndexNodes(const GraphDef& g) {
  absl::flat_hash_map<std::string, int> index;
  for (int i = 0; i < g.node_size(); ++i) {
    if (!index.emplace(g.node(i).name(), i).second)
      return errors::InvalidArgument("GraphDef has two nodes named '", g.node(i).name(), "'");
  }
  return index;
}

std::string InputNode(const std::string& input) {
  auto id = ParseTensorName(input);
  return id.ok() ? id->node : input;
}

}  // namespace

StatusOr<GraphDef> ExtractSubGraph(const GraphDef& graph_def,
                                   const std::vector<std::string>& dest_nodes) {
  TX_ASSIGN_OR_RETURN(auto index, IndexNodes(graph_def));
  std::vector<bool> keep(graph_def.node_size(), false);
  std::vector<int> stack;
  for (const std::string& d : dest_nodes) {
    auto it = index.find(d);
    if (it == index.end())
      return errors::NotFound("ExtractSubGraph: '", d, "' is not a node of the graph");
    stack.push_back(it->second);
  }
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (keep[i]) continue;
    keep[i] = true;
    for (const std::string& in : graph_def.node(i).input()) {
      TX_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(in));
      auto it = index.find(id.node);
      if (it == index.end())
        return errors::InvalidArgument("ExtractSubGraph: node '", graph_def.node(i).name(),
                                       "' has input '", in, "', which is not in the graph");
      stack.push_back(it->second);
    }
  }
  GraphDef out;
  *out.mutable_versions() = graph_def.versions();
  *out.mutable_library() = graph_def.library();
  for (int i = 0; i < graph_def.node_size(); ++i)
    if (keep[i]) *out.add_node() = graph_def.node(i);
  return out;
}

StatusOr<GraphDef> RemoveTrainingNodes(const GraphDef& graph_def,
                                       const std::vector<std::string>& protected_nodes) {
  const absl::flat_hash_set<std::string> keep(protected_nodes.begin(), protected_nodes.end());
  // Removed node -> the input that replaces references to its output 0.
  absl::flat_hash_map<std::string, std::string> replacement;
  for (const NodeDef& n : graph_def.node()) {
    if (keep.contains(n.name())) continue;
    const bool splice = (n.op() == "Identity" || n.op() == "CheckNumerics") &&
                        n.input_size() == 1;  // a control input keeps the node
    if (splice) replacement[n.name()] = n.input(0);
  }
  // Follows chains (Identity of Identity ...).
  auto resolve = [&](std::string input) {
    for (int guard = 0; guard <= graph_def.node_size(); ++guard) {
      auto id = ParseTensorName(input);
      if (!id.ok() || id->IsControl() || id->index != 0) return input;
      auto it = replacement.find(id->node);
      if (it == replacement.end()) return input;
      input = it->second;
    }
    return input;
  };
  GraphDef out;
  *out.mutable_versions() = graph_def.versions();
  *out.mutable_library() = graph_def.library();
  for (const NodeDef& n : graph_def.node()) {
    if (replacement.contains(n.name())) continue;
    NodeDef* copy = out.add_node();
    *copy = n;
    for (std::string& in : *copy->mutable_input()) {
      if (!in.empty() && in[0] == '^') {
        // A control edge on a removed node moves to that node's producer.
        const auto it = replacement.find(in.substr(1));
        if (it != replacement.end()) in = "^" + InputNode(resolve(it->second));
      } else {
        in = resolve(in);
      }
    }
  }
  return out;
}

StatusOr<GraphDef> ConvertVariablesToConstants(Session* session, const GraphDef& graph_def,
                                               const std::vector<std::string>& output_node_names,
                                               const FreezeOptions& options) {
  if (session == nullptr) return errors::InvalidArgument("ConvertVariablesToConstants: no session");
  TX_ASSIGN_OR_RETURN(GraphDef sub, ExtractSubGraph(graph_def, output_node_names));
  const absl::flat_hash_set<std::string> allow(options.variable_names_allowlist.begin(),
                                               options.variable_names_allowlist.end());
  const absl::flat_hash_set<std::string> deny(options.variable_names_denylist.begin(),
                                              options.variable_names_denylist.end());
  std::vector<std::string> variables;
  for (const NodeDef& n : sub.node()) {
    if (!IsVariable(n) || deny.contains(n.name())) continue;
    if (!allow.empty() && !allow.contains(n.name())) continue;
    variables.push_back(n.name());
  }
  const absl::flat_hash_set<std::string> frozen(variables.begin(), variables.end());

  // The tensor to fetch for each variable: a ref variable's output, or a ReadVariableOp of the
  // handle (one in the full graph, else one added to the session's graph).
  absl::flat_hash_map<std::string, std::string> reader;
  for (const NodeDef& n : graph_def.node()) {
    if (n.op() != "ReadVariableOp" || n.input_size() < 1) continue;
    const std::string var = InputNode(n.input(0));
    if (frozen.contains(var) && !reader.contains(var)) reader[var] = n.name() + ":0";
  }
  TX_ASSIGN_OR_RETURN(auto index, IndexNodes(graph_def));
  GraphDef extra;
  std::vector<std::string> fetches;
  for (const std::string& v : variables) {
    const NodeDef& n = graph_def.node(index.at(v));
    if (IsRefVariable(n)) {
      fetches.push_back(v + ":0");
    } else if (auto it = reader.find(v); it != reader.end()) {
      fetches.push_back(it->second);
    } else {
      DataType dtype;
      TX_RETURN_IF_ERROR(GetNodeAttr(n, "dtype", &dtype));
      NodeDef* read = extra.add_node();
      read->set_name(v + "/_freeze_read");
      read->set_op("ReadVariableOp");
      read->add_input(v);
      (*read->mutable_attr())["dtype"].set_type(dtype);
      if (!n.device().empty()) read->set_device(n.device());
      fetches.push_back(read->name() + ":0");
    }
  }
  if (extra.node_size() > 0) TX_RETURN_IF_ERROR(session->Extend(extra));
  std::vector<Tensor> values;
  if (!fetches.empty()) TX_RETURN_IF_ERROR(session->Run({}, fetches, {}, &values));
  absl::flat_hash_map<std::string, const Tensor*> value_of;
  for (size_t i = 0; i < variables.size(); ++i) value_of[variables[i]] = &values[i];

  GraphDef out;
  *out.mutable_versions() = sub.versions();
  *out.mutable_library() = sub.library();
  for (const NodeDef& n : sub.node()) {
    NodeDef* copy = out.add_node();
    if (frozen.contains(n.name())) {
      const Tensor& t = *value_of.at(n.name());
      copy->set_name(n.name());
      copy->set_op("Const");
      copy->set_device(n.device());
      (*copy->mutable_attr())["dtype"].set_type(t.dtype());
      t.AsProtoTensorContent((*copy->mutable_attr())["value"].mutable_tensor());
      continue;
    }
    *copy = n;
    // Consumers of a frozen resource handle.
    bool reads_frozen = false;
    for (const std::string& in : n.input()) {
      auto id = ParseTensorName(in);
      if (id.ok() && !id->IsControl() && frozen.contains(id->node) &&
          graph_def.node(index.at(id->node)).op() == "VarHandleOp")
        reads_frozen = true;
    }
    if (!reads_frozen) continue;
    if (n.op() != "ReadVariableOp")
      return errors::InvalidArgument("ConvertVariablesToConstants: node '", n.name(), "' (",
                                     n.op(), ") uses variable '", InputNode(n.input(0)),
                                     "' other than by ReadVariableOp; it cannot be frozen (keep "
                                     "it out of the outputs' subgraph or deny-list the variable)");
    DataType dtype;
    TX_RETURN_IF_ERROR(GetNodeAttr(n, "dtype", &dtype));
    copy->set_op("Identity");
    copy->mutable_attr()->clear();
    (*copy->mutable_attr())["T"].set_type(dtype);
  }
  return out;
}

}  // namespace tensorflux
