// GraphDef import and file reading, tensor-name parsing (graph_def_io.h).
#include "tensorflux/graph/graph_def_io.h"

#include <cctype>
#include <climits>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "tensorflux/graph/algorithm.h"

namespace tensorflux {
namespace {

// GraphDefs from producers before 22 wrote `shape {}` on Placeholders that had no shape.
constexpr int kPlaceholderScalarShapeProducer = 22;

absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }

bool IsControlInput(const std::string& in) { return !in.empty() && in[0] == '^'; }

void ApplyLegacyRules(const GraphDef& gdef, NodeDef* nd) {
  if (gdef.versions().producer() >= kPlaceholderScalarShapeProducer) return;
  if (nd->op() != "Placeholder" && nd->op() != "PlaceholderWithDefault") return;
  auto it = nd->mutable_attr()->find("shape");
  if (it == nd->mutable_attr()->end() || it->second.value_case() != AttrValue::kShape) return;
  TensorShapeProto* shape = it->second.mutable_shape();
  if (shape->dim_size() == 0 && !shape->unknown_rank()) shape->set_unknown_rank(true);
}

class ImportState {
 public:
  ImportState(const ImportGraphDefOptions& opts, const GraphDef& gdef, Graph* g)
      : opts_(opts), gdef_(gdef), g_(g), first_new_id_(g->num_node_ids()) {}

  int first_new_id() const { return first_new_id_; }

  std::string Prefixed(const std::string& name) const {
    return opts_.prefix.empty() ? name : absl::StrCat(opts_.prefix, "/", name);
  }

  // Pass 1: every node, with its attrs validated and input list checked for shape (not targets).
  Status AddNodes() {
    if (!opts_.prefix.empty()) {
      for (const NodeDef& nd : gdef_.node()) gdef_names_.insert(nd.name());
    }
    new_nodes_.reserve(gdef_.node_size());
    for (const NodeDef& src : gdef_.node()) {
      NodeDef nd = src;
      int num_data = 0;
      bool seen_control = false;
      for (int i = 0; i < nd.input_size(); ++i) {
        const std::string& in = nd.input(i);
        if (in.empty() || in == "^") {
          return errors::InvalidArgument("Node '", src.name(), "': input ", i, " is empty");
        }
        if (IsControlInput(in)) {
          seen_control = true;
        } else if (seen_control) {
          return errors::InvalidArgument(
              "Node '", src.name(), "': Control dependencies must come after regular "
              "dependencies: data input '", in, "' follows a control input");
        } else {
          ++num_data;
        }
      }
      if (!opts_.prefix.empty()) {
        nd.set_name(Prefixed(nd.name()));
        for (std::string& in : *nd.mutable_input()) {
          const bool control = IsControlInput(in);
          std::string body = control ? in.substr(1) : in;
          const size_t colon = body.rfind(':');
          const std::string node = colon == std::string::npos ? body : body.substr(0, colon);
          if (gdef_names_.contains(node)) in = absl::StrCat(control ? "^" : "", Prefixed(body));
        }
      }
      ApplyLegacyRules(gdef_, &nd);
      TX_ASSIGN_OR_RETURN(Node * node, g_->AddNode(std::move(nd)));
      if (num_data != node->num_inputs()) {
        return errors::InvalidArgument("Node '", node->name(), "' (op ", node->type_string(),
                                       ") expects ", node->num_inputs(),
                                       " data inputs but has ", num_data);
      }
      new_nodes_.push_back(node);
    }
    return OkStatus();
  }

  // Pass 2: one edge per input reference.
  Status AddEdges() {
    for (int k = 0; k < gdef_.node_size(); ++k) {
      const NodeDef& src_def = gdef_.node(k);
      Node* dst = new_nodes_[k];
      int data_index = 0;
      for (const std::string& in : src_def.input()) {
        auto id = ParseTensorName(in);
        if (!id.ok()) {
          return errors::InvalidArgument("Node '", dst->name(), "': ", id.status().message());
        }
        Node* src = Resolve(id->node);
        if (src == nullptr) {
          return errors::InvalidArgument("Node '", dst->name(), "': Unknown input node '", in,
                                         "'");
        }
        if (id->IsControl()) {
          g_->AddControlEdge(src, dst);
          continue;
        }
        auto e = g_->AddEdge(src, id->index, dst, data_index);
        if (!e.ok()) return e.status();
        ++data_index;
      }
    }
    return OkStatus();
  }

 private:
  Node* Resolve(const std::string& name) const {
    Node* n = g_->FindNode(Prefixed(name));
    if (n != nullptr && n->id() >= first_new_id_) return n;
    if (opts_.allow_existing_inputs) {
      n = g_->FindNode(name);
      if (n != nullptr && n->id() < first_new_id_) return n;
    }
    return nullptr;
  }

  const ImportGraphDefOptions& opts_;
  const GraphDef& gdef_;
  Graph* g_;
  const int first_new_id_;
  absl::flat_hash_set<std::string> gdef_names_;
  std::vector<Node*> new_nodes_;
};

}  // namespace

std::string TensorId::ToString() const {
  if (IsControl()) return absl::StrCat("^", node);
  return absl::StrCat(node, ":", index);
}

StatusOr<TensorId> ParseTensorName(std::string_view name_sv) {
  const absl::string_view name = AV(name_sv);
  if (name.empty()) return errors::InvalidArgument("Empty tensor name");
  TensorId id;
  if (name[0] == '^') {
    absl::string_view node = name.substr(1);
    if (node.empty() || node.find(':') != absl::string_view::npos) {
      return errors::InvalidArgument("Malformed control input '", name,
                                     "': expected '^node' with no output index");
    }
    id.node = std::string(node);
    id.index = kControlSlot;
    return id;
  }
  const size_t colon = name.rfind(':');
  if (colon == absl::string_view::npos) {
    id.node = std::string(name);
    return id;
  }
  absl::string_view node = name.substr(0, colon);
  absl::string_view digits = name.substr(colon + 1);
  if (node.empty() || digits.empty() || digits.size() > 10) {
    return errors::InvalidArgument("Malformed tensor name '", name,
                                   "': expected 'node' or 'node:index'");
  }
  int64_t index = 0;
  for (char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      return errors::InvalidArgument("Malformed tensor name '", name,
                                     "': the output index must be a non-negative integer");
    }
    index = index * 10 + (c - '0');
  }
  if (index > INT_MAX) {
    return errors::InvalidArgument("Malformed tensor name '", name, "': output index too large");
  }
  id.node = std::string(node);
  id.index = static_cast<int>(index);
  return id;
}

Status ImportGraphDef(const ImportGraphDefOptions& opts, const GraphDef& gdef, Graph* g) {
  const bool was_empty = g->num_nodes() == 0;
  ImportState state(opts, gdef, g);
  Status s = state.AddNodes();
  if (s.ok()) s = state.AddEdges();
  if (s.ok()) s = TopologicalOrder(*g).status();
  if (!s.ok()) {
    // Leave `g` as it was.
    for (int id = g->num_node_ids() - 1; id >= state.first_new_id(); --id) {
      if (Node* n = g->FindNodeId(id)) g->RemoveNode(n);
    }
    return s;
  }
  if (was_empty) {
    g->set_versions(gdef.versions());
  } else if (gdef.has_versions() && gdef.versions().producer() < g->versions().producer()) {
    VersionDef v = g->versions();
    v.set_producer(gdef.versions().producer());
    g->set_versions(v);
  }
  // Merge the function library by function name.
  absl::flat_hash_set<std::string> have;
  for (const FunctionDef& f : g->library().function()) have.insert(f.signature().name());
  for (const FunctionDef& f : gdef.library().function()) {
    if (have.insert(f.signature().name()).second) *g->mutable_library()->add_function() = f;
  }
  for (const GradientDef& gd : gdef.library().gradient()) {
    *g->mutable_library()->add_gradient() = gd;
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<Graph>> GraphFromGraphDef(const GraphDef& gdef) {
  auto g = std::make_unique<Graph>();
  TX_RETURN_IF_ERROR(ImportGraphDef(ImportGraphDefOptions(), gdef, g.get()));
  return g;
}

namespace {

class TextErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (first_.empty()) first_ = absl::StrCat("line ", line + 1, ":", column + 1, ": ", message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

bool ParseText(const std::string& data, GraphDef* out, std::string* error) {
  TextErrors errs;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errs);
  out->Clear();
  if (parser.ParseFromString(data, out)) return true;
  *error = errs.first();
  return false;
}

}  // namespace

StatusOr<GraphDef> ReadGraphDefFile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return errors::NotFound("Graph file not found: ", path);
  if (fs::is_directory(st)) {
    return errors::InvalidArgument("Graph file ", path, " is a directory");
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return errors::PermissionDenied("Could not open graph file ", path);
  std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) return errors::DataLoss("Could not read graph file ", path);

  std::string ext = fs::path(path).extension().string();
  absl::AsciiStrToLower(&ext);
  GraphDef gdef;
  std::string text_error;
  if (ext == ".pbtxt" || ext == ".txt") {
    if (!ParseText(data, &gdef, &text_error)) {
      return errors::InvalidArgument("Could not parse text GraphDef ", path, ": ", text_error);
    }
    return gdef;
  }
  if (gdef.ParseFromString(data)) return gdef;
  if (ParseText(data, &gdef, &text_error)) return gdef;
  return errors::DataLoss("File ", path,
                          " is neither a binary nor a text GraphDef (as text: ", text_error, ")");
}

}  // namespace tensorflux
