// Graph, Node and Edge (graph.h). Nodes and edges live in id-indexed vectors; removed ids are
// left as nullptr so ids stay stable while a graph is rewritten.
#include "tensorflux/graph/graph.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/node_def_util.h"

namespace tensorflux {
namespace {

// How many data inputs `def` needs under `op_def`, reading number and type-list attrs leniently
// (an absent or ill-typed attr counts 0; ValidateNodeDef reports it).
int ExpectedInputCount(const NodeDef& def, const OpDef& op_def) {
  int n = 0;
  for (const auto& arg : op_def.input_arg()) {
    if (!arg.number_attr().empty()) {
      const AttrValue* v = FindAttr(def, arg.number_attr());
      if (v != nullptr && v->value_case() == AttrValue::kI && v->i() > 0 && v->i() < (1 << 20)) {
        n += static_cast<int>(v->i());
      }
    } else if (!arg.type_list_attr().empty()) {
      const AttrValue* v = FindAttr(def, arg.type_list_attr());
      if (v != nullptr && v->value_case() == AttrValue::kList) n += v->list().type_size();
    } else {
      ++n;
    }
  }
  return n;
}

// The graph keeps no edge for an unconnected input; its name in ToGraphDef is the source's.
std::string InputName(const Edge* e) {
  if (e->IsControlEdge()) return absl::StrCat("^", e->src()->name());
  if (e->src_output() == 0) return e->src()->name();
  return absl::StrCat(e->src()->name(), ":", e->src_output());
}

void EraseEdge(std::vector<const Edge*>* v, const Edge* e) {
  auto it = std::find(v->begin(), v->end(), e);
  if (it != v->end()) v->erase(it);
}

}  // namespace

std::string Edge::DebugString() const {
  if (IsControlEdge()) return absl::StrCat("^", src_->name(), " -> ", dst_->name());
  return absl::StrCat(src_->name(), ":", src_output_, " -> ", dst_->name(), ":", dst_input_);
}

StatusOr<const Edge*> Node::input_edge(int idx) const {
  for (const Edge* e : in_edges_) {
    if (!e->IsControlEdge() && e->dst_input() == idx) return e;
  }
  return errors::NotFound("Input ", idx, " of node '", name(), "' (op ", type_string(),
                          ") is not connected");
}

std::string Node::DebugString() const {
  return absl::StrCat("{name:'", name(), "' id:", id_, " op:", type_string(), " inputs:[",
                      DataTypeVectorString(input_types_), "] outputs:[",
                      DataTypeVectorString(output_types_), "]}");
}

Graph::Graph(const OpRegistry* registry) : registry_(registry) {}
Graph::~Graph() = default;

StatusOr<Node*> Graph::AddNode(NodeDef def) {
  const std::string& name = def.name();
  if (name.empty()) {
    return errors::InvalidArgument("A node of op '", def.op(), "' has an empty name");
  }
  if (name.find(':') != std::string::npos || name[0] == '^') {
    return errors::InvalidArgument("Node name '", name, "' (op ", def.op(),
                                   ") may not contain ':' or start with '^'");
  }
  if (by_name_.contains(name)) {
    return errors::InvalidArgument("Duplicate node name in graph: '", name, "' (op ", def.op(),
                                   ")");
  }
  auto reg = registry_->LookUp(std::string_view(def.op()));
  if (!reg.ok()) {
    return errors::NotFound("Op type not registered '", def.op(), "' in node '", name, "'");
  }
  const OpDef& op_def = (*reg)->op_def;
  AddDefaultsToNodeDef(op_def, &def);

  // Inputs are edges here, so attrs are validated with data inputs that match the count the attrs
  // imply (control inputs dropped); the given inputs are put back afterwards.
  {
    google::protobuf::RepeatedPtrField<std::string> given;
    given.Swap(def.mutable_input());
    const int n = ExpectedInputCount(def, op_def);
    int data = 0;
    for (const std::string& in : given) {
      if (!in.empty() && in[0] != '^') ++data;
    }
    if (data == n) {
      for (const std::string& in : given) {
        if (!in.empty() && in[0] != '^') def.add_input(in);
      }
    } else {
      for (int i = 0; i < n; ++i) def.add_input(absl::StrCat("input", i));
    }
    Status s = ValidateNodeDef(def, op_def);
    def.mutable_input()->Swap(&given);
    if (!s.ok()) return errors::AttachNodeContext(s, name, def.op());
  }
  DataTypeVector in_types, out_types;
  Status s = InOutTypesForNode(def, op_def, &in_types, &out_types);
  if (!s.ok()) {
    return errors::AttachNodeContext(errors::InvalidArgument(s.message()), name, def.op());
  }

  auto node = std::make_unique<Node>();
  node->id_ = static_cast<int>(nodes_.size());
  node->def_ = std::move(def);
  node->op_def_ = &op_def;
  node->input_types_ = std::move(in_types);
  node->output_types_ = std::move(out_types);
  Node* raw = node.get();
  nodes_.push_back(raw);
  node_storage_.push_back(std::move(node));
  by_name_.emplace(raw->name(), raw);
  ++num_nodes_;
  return raw;
}

void Graph::RemoveNode(Node* node) {
  if (node == nullptr || node->id_ < 0 || node->id_ >= num_node_ids() ||
      nodes_[node->id_] != node) {
    return;
  }
  // Copies: RemoveEdge edits the lists.
  std::vector<const Edge*> edges = node->in_edges_;
  edges.insert(edges.end(), node->out_edges_.begin(), node->out_edges_.end());
  for (const Edge* e : edges) RemoveEdge(e);
  by_name_.erase(node->name());
  const int id = node->id_;
  nodes_[id] = nullptr;
  node_storage_[id].reset();
  --num_nodes_;
}

StatusOr<const Edge*> Graph::AddEdge(Node* src, int src_output, Node* dst, int dst_input) {
  if (src == nullptr || dst == nullptr) {
    return errors::InvalidArgument("AddEdge: null node");
  }
  if (src_output < 0 || src_output >= src->num_outputs()) {
    return errors::InvalidArgument("Node '", dst->name(), "': Connecting to invalid output ",
                                   src_output, " of source node ", src->name(), " which has ",
                                   src->num_outputs(), " outputs");
  }
  if (dst_input < 0 || dst_input >= dst->num_inputs()) {
    return errors::InvalidArgument("Node '", dst->name(), "' (op ", dst->type_string(),
                                   "): Connecting to invalid input ", dst_input, "; it has ",
                                   dst->num_inputs(), " inputs");
  }
  for (const Edge* e : dst->in_edges_) {
    if (!e->IsControlEdge() && e->dst_input() == dst_input) {
      return errors::InvalidArgument("Node '", dst->name(), "': input ", dst_input,
                                     " is already connected to ", e->src()->name(), ":",
                                     e->src_output());
    }
  }
  const DataType out = src->output_type(src_output);
  const DataType in = dst->input_type(dst_input);
  const bool ok = out == in || (IsRefType(out) && !IsRefType(in) && BaseType(out) == in);
  if (!ok) {
    return errors::InvalidArgument("Input ", dst_input, " of node '", dst->name(), "' (op ",
                                   dst->type_string(), ") expects ", DataTypeString(in), " but ",
                                   src->name(), ":", src_output, " is ", DataTypeString(out));
  }
  auto edge = std::make_unique<Edge>();
  edge->src_ = src;
  edge->dst_ = dst;
  edge->id_ = static_cast<int>(edges_.size());
  edge->src_output_ = src_output;
  edge->dst_input_ = dst_input;
  Edge* raw = edge.get();
  edges_.push_back(raw);
  edge_storage_.push_back(std::move(edge));
  src->out_edges_.push_back(raw);
  dst->in_edges_.push_back(raw);
  ++num_edges_;
  return raw;
}

const Edge* Graph::AddControlEdge(Node* src, Node* dst) {
  for (const Edge* e : dst->in_edges_) {
    if (e->IsControlEdge() && e->src() == src) return e;
  }
  auto edge = std::make_unique<Edge>();
  edge->src_ = src;
  edge->dst_ = dst;
  edge->id_ = static_cast<int>(edges_.size());
  edge->src_output_ = kControlSlot;
  edge->dst_input_ = kControlSlot;
  Edge* raw = edge.get();
  edges_.push_back(raw);
  edge_storage_.push_back(std::move(edge));
  src->out_edges_.push_back(raw);
  dst->in_edges_.push_back(raw);
  ++num_edges_;
  return raw;
}

void Graph::RemoveEdge(const Edge* e) {
  if (e == nullptr || e->id() < 0 || e->id() >= static_cast<int>(edges_.size()) ||
      edges_[e->id()] != e) {
    return;
  }
  EraseEdge(&e->src()->out_edges_, e);
  EraseEdge(&e->dst()->in_edges_, e);
  const int id = e->id();
  edges_[id] = nullptr;
  edge_storage_[id].reset();
  --num_edges_;
}

Status Graph::UpdateEdge(Node* new_src, int new_src_output, Node* dst, int dst_input) {
  const Edge* old = nullptr;
  for (const Edge* e : dst->in_edges_) {
    if (!e->IsControlEdge() && e->dst_input() == dst_input) {
      old = e;
      break;
    }
  }
  if (old != nullptr) {
    if (old->src() == new_src && old->src_output() == new_src_output) return OkStatus();
    const int old_output = old->src_output();
    Node* old_src = old->src();
    RemoveEdge(old);
    auto added = AddEdge(new_src, new_src_output, dst, dst_input);
    if (!added.ok()) {
      // Restore the previous connection; it was valid before, so this succeeds.
      (void)AddEdge(old_src, old_output, dst, dst_input);
      return added.status();
    }
    return OkStatus();
  }
  return AddEdge(new_src, new_src_output, dst, dst_input).status();
}

Node* Graph::FindNode(std::string_view name) const {
  auto it = by_name_.find(absl::string_view(name.data(), name.size()));
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(num_nodes_);
  for (Node* n : nodes_) {
    if (n != nullptr) out.push_back(n);
  }
  return out;
}

std::string Graph::NewName(std::string_view prefix_sv) {
  const absl::string_view prefix(prefix_sv.data(), prefix_sv.size());
  std::string name(prefix);
  if (!by_name_.contains(name)) return name;
  for (int i = 1;; ++i) {
    name = absl::StrCat(prefix, "_", i);
    if (!by_name_.contains(name)) return name;
  }
}

void Graph::ToGraphDef(GraphDef* out) const {
  out->Clear();
  *out->mutable_versions() = versions_;
  *out->mutable_library() = library_;
  out->mutable_node()->Reserve(num_nodes_);
  std::vector<const Edge*> data;
  for (const Node* n : nodes_) {
    if (n == nullptr) continue;
    NodeDef* nd = out->add_node();
    *nd = n->def_;
    nd->clear_input();
    data.assign(n->num_inputs(), nullptr);
    for (const Edge* e : n->in_edges_) {
      if (!e->IsControlEdge()) data[e->dst_input()] = e;
    }
    for (const Edge* e : data) {
      if (e != nullptr) nd->add_input(InputName(e));
    }
    for (const Edge* e : n->in_edges_) {
      if (e->IsControlEdge()) nd->add_input(InputName(e));
    }
  }
}

std::unique_ptr<Graph> Graph::Clone() const {
  auto g = std::make_unique<Graph>(registry_);
  g->versions_ = versions_;
  g->library_ = library_;
  std::vector<Node*> map(nodes_.size(), nullptr);
  g->nodes_.reserve(num_nodes_);
  g->node_storage_.reserve(num_nodes_);
  g->by_name_.reserve(num_nodes_);
  for (const Node* n : nodes_) {
    if (n == nullptr) continue;
    auto copy = std::make_unique<Node>();
    copy->id_ = static_cast<int>(g->nodes_.size());
    copy->def_ = n->def_;
    copy->op_def_ = n->op_def_;
    copy->input_types_ = n->input_types_;
    copy->output_types_ = n->output_types_;
    copy->assigned_device_ = n->assigned_device_;
    Node* raw = copy.get();
    map[n->id_] = raw;
    g->nodes_.push_back(raw);
    g->node_storage_.push_back(std::move(copy));
    g->by_name_.emplace(raw->name(), raw);
  }
  g->num_nodes_ = num_nodes_;
  // Edges in id order rebuild every node's in/out lists in the same order (lists are always in
  // edge-id order: edges are appended on creation and erased in place).
  g->edges_.reserve(num_edges_);
  g->edge_storage_.reserve(num_edges_);
  for (const Edge* e : edges_) {
    if (e == nullptr) continue;
    auto copy = std::make_unique<Edge>();
    copy->src_ = map[e->src()->id()];
    copy->dst_ = map[e->dst()->id()];
    copy->id_ = static_cast<int>(g->edges_.size());
    copy->src_output_ = e->src_output_;
    copy->dst_input_ = e->dst_input_;
    Edge* raw = copy.get();
    g->edges_.push_back(raw);
    g->edge_storage_.push_back(std::move(copy));
    raw->src_->out_edges_.push_back(raw);
    raw->dst_->in_edges_.push_back(raw);
  }
  g->num_edges_ = num_edges_;
  return g;
}

}  // namespace tensorflux
