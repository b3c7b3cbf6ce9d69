#include "tensorflux/cc/scope.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux {

// State shared by every Scope derived from one root.
struct Scope::Shared {
  std::shared_ptr<Graph> graph;
  Status status;
  // Full names handed out (nodes and name scopes) -> the last numeric suffix tried.
  absl::flat_hash_map<std::string, int> names;
  // Shapes inferred when the scope built a node, by node id.
  absl::flat_hash_map<int, std::vector<PartialTensorShape>> shapes;
  absl::flat_hash_map<std::string, std::vector<Operation>> collections;

  // `base` if unused in the graph and by earlier names, else base_1, base_2, ...
  std::string Unique(const std::string& base) {
    auto taken = [&](const std::string& n) {
      return names.contains(n) || graph->FindNode(n) != nullptr;
    };
    if (!taken(base)) {
      names[base] = 0;
      return base;
    }
    int& k = names[base];
    std::string candidate;
    do {
      candidate = absl::StrCat(base, "_", ++k);
    } while (taken(candidate));
    names[candidate] = 0;
    return candidate;
  }
};

struct Scope::Impl {
  std::shared_ptr<Shared> shared;
  std::string name_prefix;  // "" or "a/b"
  std::string op_name;      // set by WithOpName
  std::string exact_name;   // set by WithExactName
  std::vector<Operation> control_deps;
  std::string device;

  std::string Qualify(const std::string& name) const {
    return name_prefix.empty() ? name : absl::StrCat(name_prefix, "/", name);
  }
};

Scope::Scope(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Scope::Scope(const Scope& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
Scope& Scope::operator=(const Scope& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
Scope::~Scope() = default;

Scope Scope::NewRootScope() {
  auto impl = std::make_unique<Impl>();
  impl->shared = std::make_shared<Shared>();
  impl->shared->graph = std::make_shared<Graph>();
  VersionDef versions;
  versions.set_producer(kScopeGraphProducer);
  impl->shared->graph->set_versions(versions);
  return Scope(std::move(impl));
}

Scope Scope::NewSubScope(const std::string& child_scope_name) const {
  auto impl = std::make_unique<Impl>(*impl_);
  impl->op_name.clear();
  impl->exact_name.clear();
  if (!child_scope_name.empty())
    impl->name_prefix = impl_->shared->Unique(impl_->Qualify(child_scope_name));
  return Scope(std::move(impl));
}

Scope Scope::NewSubScopeExact(const std::string& full_prefix) const {
  auto impl = std::make_unique<Impl>(*impl_);
  impl->op_name.clear();
  impl->exact_name.clear();
  impl->name_prefix = full_prefix;
  return Scope(std::move(impl));
}

Scope Scope::WithOpNameImpl(const std::string& op_name) const {
  auto impl = std::make_unique<Impl>(*impl_);
  impl->op_name = op_name;
  impl->exact_name.clear();
  return Scope(std::move(impl));
}

Scope Scope::WithExactName(const std::string& full_name) const {
  auto impl = std::make_unique<Impl>(*impl_);
  impl->exact_name = full_name;
  return Scope(std::move(impl));
}

Scope Scope::WithControlDependencies(absl::Span<const Operation> control_deps) const {
  auto impl = std::make_unique<Impl>(*impl_);
  impl->control_deps.insert(impl->control_deps.end(), control_deps.begin(), control_deps.end());
  return Scope(std::move(impl));
}

Scope Scope::WithControlDependencies(const Output& control_dep) const {
  Operation op = control_dep.op();
  return WithControlDependencies(absl::Span<const Operation>(&op, 1));
}

Scope Scope::WithNoControlDependencies() const {
  auto impl = std::make_unique<Impl>(*impl_);
  impl->control_deps.clear();
  return Scope(std::move(impl));
}

Scope Scope::WithDevice(const std::string& device) const {
  auto impl = std::make_unique<Impl>(*impl_);
  impl->device = device;
  return Scope(std::move(impl));
}

std::string Scope::GetUniqueNameForOp(const std::string& default_name) const {
  if (!impl_->exact_name.empty()) return impl_->exact_name;
  const std::string& base = impl_->op_name.empty() ? default_name : impl_->op_name;
  return impl_->shared->Unique(impl_->Qualify(base));
}

void Scope::UpdateStatus(const Status& s) const {
  if (impl_->shared->status.ok() && !s.ok()) impl_->shared->status = s;
}
Status Scope::status() const { return impl_->shared->status; }
bool Scope::ok() const { return impl_->shared->status.ok(); }

Graph* Scope::graph() const { return impl_->shared->graph.get(); }
std::shared_ptr<Graph> Scope::graph_as_shared_ptr() const { return impl_->shared->graph; }

Status Scope::ToGraphDef(GraphDef* gdef) const {
  if (!ok()) return status();
  graph()->ToGraphDef(gdef);
  return OkStatus();
}

void Scope::AddToCollection(const std::string& name, const Operation& op) const {
  impl_->shared->collections[name].push_back(op);
}
std::vector<Operation> Scope::GetCollection(const std::string& name) const {
  auto it = impl_->shared->collections.find(name);
  return it == impl_->shared->collections.end() ? std::vector<Operation>() : it->second;
}

const std::string& Scope::name_prefix() const { return impl_->name_prefix; }
const std::vector<Operation>& Scope::control_deps() const { return impl_->control_deps; }
const std::string& Scope::device() const { return impl_->device; }

PartialTensorShape Scope::GetInferredShape(const Output& o) const {
  if (o.node() == nullptr) return PartialTensorShape();
  auto it = impl_->shared->shapes.find(o.node()->id());
  if (it == impl_->shared->shapes.end() || o.index() < 0 ||
      o.index() >= static_cast<int>(it->second.size()))
    return PartialTensorShape();
  return it->second[o.index()];
}

void Scope::RefineInferredShape(const Output& o, const PartialTensorShape& shape) const {
  if (o.node() == nullptr || o.index() < 0 || o.index() >= o.node()->num_outputs()) return;
  std::vector<PartialTensorShape>& shapes = impl_->shared->shapes[o.node()->id()];
  if (static_cast<int>(shapes.size()) < o.node()->num_outputs()) {
    shapes.resize(o.node()->num_outputs());
  }
  shapes[o.index()] = shape;
}

void Scope::RecordShapes(const Node* n, std::vector<PartialTensorShape> shapes) const {
  impl_->shared->shapes[n->id()] = std::move(shapes);
}

}  // namespace tensorflux
