#include "tensorflux/passes/placer.h"

#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "tensorflux/devices/device_factory.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/graph/algorithm.h"

namespace tensorflux {
namespace {

using ParsedName = DeviceNameUtils::ParsedName;

std::string NodeRef(const Node* n) {
  return absl::StrCat("{{node ", n->name(), "}} (op ", n->type_string(), ")");
}

std::string Names(const std::vector<const Device*>& devices) {
  if (devices.empty()) return "none";
  return absl::StrJoin(devices, ", ",
                       [](std::string* out, const Device* d) { *out += d->name(); });
}

// Union-find over node ids.
class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<int> parent_;
};

// Shape arithmetic: only int32 in and out (TF's GPU kernels keep these in host memory).
bool IsInt32Only(const Node* n) {
  if (n->num_outputs() == 0) return false;
  auto int32 = [](DataType t) { return BaseType(t) == DT_INT32; };
  return std::all_of(n->input_types().begin(), n->input_types().end(), int32) &&
         std::all_of(n->output_types().begin(), n->output_types().end(), int32);
}

struct Group {
  std::vector<Node*> members;
  ParsedName request;
  const Node* requester = nullptr;  // the member whose request the group took first
  const Device* pinned = nullptr;   // a member's existing assignment
  const Node* pinned_by = nullptr;  // that member
  std::vector<std::string> types;   // device types with kernels for every member
};

class Placement {
 public:
  Placement(Graph* g, const std::vector<Device*>& devices, const PlacerOptions& options,
            std::vector<std::string>* notes, std::vector<std::string>* ignored)
      : g_(g), options_(options), notes_(notes), ignored_notes_(ignored),
        uf_(g->num_node_ids()) {
    for (const Device* d : devices) devices_.push_back(d);
    // Highest-priority type first; the given order within a type.
    std::stable_sort(devices_.begin(), devices_.end(), [](const Device* a, const Device* b) {
      return DeviceFactory::DevicePriority(a->device_type()) >
             DeviceFactory::DevicePriority(b->device_type());
    });
    for (const Device* d : devices_) {
      if (std::find(types_.begin(), types_.end(), d->device_type()) == types_.end()) {
        types_.push_back(d->device_type());
      }
    }
  }

  Status Run() {
    if (devices_.empty()) return errors::InvalidArgument("The Placer was given no devices");
    BuildColocation();
    TX_ASSIGN_OR_RETURN(std::vector<Node*> topo, TopologicalOrder(*g_));
    absl::flat_hash_map<int, Group> groups;
    std::vector<int> order;  // group roots by their first member in topological order
    for (Node* n : topo) {
      const int root = uf_.Find(n->id());
      if (!groups.contains(root)) order.push_back(root);
      groups[root].members.push_back(n);
    }
    // Generators go last, so that their consumers are placed first (heuristic A below).
    std::vector<Group*> second_pass;
    for (int root : order) {
      Group& grp = groups[root];
      TX_RETURN_IF_ERROR(MergeRequests(&grp));
      TX_RETURN_IF_ERROR(IntersectTypes(&grp));
      if (IsFree(grp) && IsGenerator(grp.members[0])) {
        second_pass.push_back(&grp);
        continue;
      }
      TX_RETURN_IF_ERROR(Assign(grp, InputHint(grp)));
    }
    for (Group* grp : second_pass) TX_RETURN_IF_ERROR(Assign(*grp, ConsumerHint(*grp)));
    return OkStatus();
  }

 private:
  void BuildColocation() {
    absl::flat_hash_map<std::string, int> class_owner;  // "NAME" of loc:@NAME -> a node id
    for (Node* n : g_->nodes()) class_owner.emplace(n->name(), n->id());
    for (Node* n : g_->nodes()) {
      for (const Edge* e : n->in_edges()) {
        if (e->IsControlEdge()) continue;
        const DataType t = n->input_type(e->dst_input());
        if (t == DT_RESOURCE || IsRefType(t)) {
          uf_.Union(e->src()->id(), n->id());
          IgnoreConflictingRequest(e->src(), n);
        }
      }
      std::vector<std::string> classes;
      if (n->attr("_class") == nullptr || !GetNodeAttr(n->def(), "_class", &classes).ok()) {
        continue;
      }
      for (const std::string& c : classes) {
        if (c.rfind("loc:@", 0) != 0) continue;
        auto [it, inserted] = class_owner.emplace(c.substr(5), n->id());
        if (!inserted) uf_.Union(it->second, n->id());
      }
    }
  }

  // TF's ColocationGraph: a node that takes a resource or reference variable from `src` keeps
  // src's request when its own does not agree with it (a variable read or updated under
  // another device scope stays where it was created). Well-formed requests only: a malformed
  // one is reported by MergeRequests.
  void IgnoreConflictingRequest(const Node* src, const Node* dst) {
    if (src->requested_device().empty() || dst->requested_device().empty() ||
        ignored_.contains(dst->id())) {
      return;
    }
    auto s = DeviceNameUtils::Parse(src->requested_device());
    auto d = DeviceNameUtils::Parse(dst->requested_device());
    if (!s.ok() || !d.ok()) return;
    ParsedName merged = *s;
    if (DeviceNameUtils::MergeDevNames(&merged, *d, /*allow_soft_placement=*/false).ok()) return;
    ignored_.insert(dst->id());
    if (ignored_notes_ != nullptr) {
      ignored_notes_->push_back(absl::StrCat(
          NodeRef(dst), ": ignoring its device request '", dst->requested_device(),
          "' because its input from ", NodeRef(src),
          " is a resource or reference variable, which asks for '", src->requested_device(),
          "'"));
    }
  }

  // Merges the members' requests (and existing assignments) into the group's.
  Status MergeRequests(Group* grp) {
    for (const Node* n : grp->members) {
      if (const Device* d = FindDevice(n->assigned_device_name())) {
        if (grp->pinned != nullptr && grp->pinned != d) {
          return errors::InvalidArgument(
              "Cannot colocate ", NodeRef(n), ", already placed on ", d->name(), ", with ",
              NodeRef(grp->pinned_by), ", already placed on ", grp->pinned->name(),
              ": they share a resource, reference variable or colocation class, and a "
              "stateful node keeps the device of its first placement");
        }
        grp->pinned = d;
        grp->pinned_by = n;
      }
      if (n->requested_device().empty() || ignored_.contains(n->id())) continue;
      auto parsed = DeviceNameUtils::Parse(n->requested_device());
      if (!parsed.ok()) {
        return errors::InvalidArgument("Malformed device specification '",
                                       n->requested_device(), "' in ", NodeRef(n), ": ",
                                       parsed.status().message());
      }
      if (parsed->IsEmpty()) continue;
      if (grp->requester == nullptr) {
        grp->request = *parsed;
        grp->requester = n;
        continue;
      }
      Status s = DeviceNameUtils::MergeDevNames(&grp->request, *parsed,
                                                options_.allow_soft_placement);
      if (!s.ok()) {
        return errors::InvalidArgument(
            "Cannot colocate nodes ", NodeRef(grp->requester), " (device '",
            grp->requester->requested_device(), "') and ", NodeRef(n), " (device '",
            n->requested_device(), "'), which share a resource, reference variable or "
            "colocation class: ", s.message());
      }
    }
    // Notes name the pin by another member than the requester when there is one.
    if (grp->pinned_by != nullptr && grp->pinned_by == grp->requester) {
      for (const Node* n : grp->members) {
        if (n != grp->requester && n->assigned_device_name() == grp->pinned->name()) {
          grp->pinned_by = n;
          break;
        }
      }
    }
    return OkStatus();
  }

  Status IntersectTypes(Group* grp) {
    grp->types = types_;
    for (const Node* n : grp->members) {
      std::vector<std::string> supported = KernelRegistry::Global()->SupportedDeviceTypes(n->def());
      std::vector<std::string> here;
      for (const std::string& t : types_) {
        if (std::find(supported.begin(), supported.end(), t) != supported.end()) here.push_back(t);
      }
      if (here.empty()) {
        // No kernel on any device here: the registry's message says what is registered.
        auto found = KernelRegistry::Global()->FindKernel(n->def(), devices_.back()->device_type());
        Status s = found.ok() ? errors::NotFound("No kernel for ", NodeRef(n)) : found.status();
        return errors::AttachNodeContext(s, n->name(), n->type_string());
      }
      std::vector<std::string> keep;
      for (const std::string& t : grp->types) {
        if (std::find(here.begin(), here.end(), t) != here.end()) keep.push_back(t);
      }
      grp->types = std::move(keep);
    }
    if (!grp->types.empty()) return OkStatus();
    std::vector<std::string> each;
    for (const Node* n : grp->members) {
      each.push_back(absl::StrCat(
          NodeRef(n), ": [",
          absl::StrJoin(KernelRegistry::Global()->SupportedDeviceTypes(n->def()), ", "), "]"));
    }
    return errors::InvalidArgument(
        "Cannot colocate nodes that share a resource, reference variable or colocation class: "
        "no device type has kernels for all of them; ",
        absl::StrJoin(each, "; "));
  }

  Status Assign(const Group& grp, const Device* hint) {
    TX_ASSIGN_OR_RETURN(const Device* d, Choose(grp, hint));
    for (Node* n : grp.members) n->set_assigned_device_name(d->name());
    return OkStatus();
  }

  // A lone node with no request and no existing assignment: the heuristics may move it.
  static bool IsFree(const Group& grp) {
    return grp.members.size() == 1 && grp.requester == nullptr && grp.pinned == nullptr;
  }

  // TF's heuristic A: a node with no inputs and one (non-ref) output (Const, _Arg) goes where
  // all its consumers are, when it can run there.
  static bool IsGenerator(const Node* n) {
    return n->num_inputs() == 0 && n->num_outputs() == 1 && !IsRefType(n->output_type(0)) &&
           !n->out_edges().empty();
  }
  const Device* ConsumerHint(const Group& grp) const {
    const Device* where = nullptr;
    for (const Edge* e : grp.members[0]->out_edges()) {
      const Device* d = FindDevice(e->dst()->assigned_device_name());
      if (d == nullptr || (where != nullptr && d != where)) return nullptr;
      where = d;
    }
    return where;
  }

  // TF's heuristic B: an op that reads only its input's metadata (Shape, Size, Rank) goes
  // with that input; so does a fetch (_Retval), which only hands its input back.
  const Device* InputHint(const Group& grp) const {
    const Node* n = grp.members[0];
    static constexpr const char* kFollowInput[] = {"Shape", "ShapeN", "Size", "Rank", "_Retval"};
    if (!IsFree(grp) || std::find(std::begin(kFollowInput), std::end(kFollowInput),
                                  n->type_string()) == std::end(kFollowInput)) {
      return nullptr;
    }
    auto in = n->input_edge(0);
    return in.ok() ? FindDevice((*in)->src()->assigned_device_name()) : nullptr;
  }

  // The group's device; `hint` (from the heuristics) is taken when it is a candidate.
  StatusOr<const Device*> Choose(const Group& grp, const Device* hint) {
    const Node* who = grp.requester != nullptr ? grp.requester : grp.members[0];
    std::vector<const Device*> with_kernel = Candidates(grp.types, ParsedName());
    if (grp.pinned != nullptr) {
      const std::string& type = grp.pinned->device_type();
      if (std::find(grp.types.begin(), grp.types.end(), type) == grp.types.end()) {
        return errors::InvalidArgument(
            "Cannot place the nodes colocated with ", NodeRef(grp.members[0]), " on ",
            grp.pinned->name(), ", where some of them are already placed: not all of them "
            "have a kernel for ", type, " devices (devices with kernels for all: ",
            Names(with_kernel), ")");
      }
      if (grp.requester == nullptr ||
          DeviceNameUtils::IsSpecification(grp.request, grp.pinned->parsed_name())) {
        return grp.pinned;
      }
      // The request's own shortcoming when no device could take it, else the pin.
      const std::string why =
          Candidates(grp.types, grp.request).empty()
              ? Reason(grp)
              : absl::StrCat("its colocation group is already on ", grp.pinned->name(),
                             ", where ", NodeRef(grp.pinned_by), " is placed");
      TX_RETURN_IF_ERROR(Unsatisfied(grp, who, why, with_kernel));
      Note(who, why, grp.pinned);
      return grp.pinned;
    }
    std::vector<const Device*> c = Candidates(grp.types, grp.request);
    if (c.empty()) {
      const std::string why = Reason(grp);
      TX_RETURN_IF_ERROR(Unsatisfied(grp, who, why, with_kernel));
      ParsedName relaxed = grp.request;  // soft placement: keep job/replica/task
      relaxed.has_type = relaxed.has_id = false;
      c = Candidates(grp.types, relaxed);
      if (c.empty()) c = with_kernel;
      const Device* d = Prefer(grp, c, nullptr);
      Note(who, why, d);
      return d;
    }
    return Prefer(grp, c, hint);
  }

  // Devices (in preference order) of one of `types` that match `request`.
  std::vector<const Device*> Candidates(const std::vector<std::string>& types,
                                        const ParsedName& request) const {
    std::vector<const Device*> out;
    for (const Device* d : devices_) {
      if (std::find(types.begin(), types.end(), d->device_type()) != types.end() &&
          DeviceNameUtils::IsSpecification(request, d->parsed_name())) {
        out.push_back(d);
      }
    }
    return out;
  }

  // Why no candidate matches the group's request.
  std::string Reason(const Group& grp) const {
    for (const Device* d : devices_) {
      if (DeviceNameUtils::IsSpecification(grp.request, d->parsed_name())) {
        return absl::StrCat("no supported kernel for ", d->device_type(),
                            " devices is available",
                            grp.members.size() > 1 ? " for every node colocated with it" : "");
      }
    }
    return "no devices matching that specification are registered in this process";
  }

  // Without soft placement, the INVALID_ARGUMENT for an unsatisfiable request.
  Status Unsatisfied(const Group& grp, const Node* who, const std::string& why,
                     const std::vector<const Device*>& with_kernel) const {
    if (options_.allow_soft_placement) return OkStatus();
    std::vector<const Device*> all(devices_.begin(), devices_.end());
    return errors::InvalidArgument(
        "Cannot assign a device for operation '", who->name(), "' (op ", who->type_string(),
        "): Could not satisfy explicit device specification '",
        DeviceNameUtils::ToString(grp.request), "' because ", why,
        ". Devices with a kernel for it: ", Names(with_kernel), "; available devices: ",
        Names(all), ". (Soft placement, on unless ConfigProto.allow_soft_placement is false, "
        "would place it on one of the former.)");
  }

  // The first candidate (highest-priority type, first device), or the hint when it is one. A
  // group of int32 shape arithmetic chooses among the CPU candidates only.
  const Device* Prefer(const Group& grp, std::vector<const Device*> c, const Device* hint) const {
    const bool shape_math = !grp.request.has_type &&
                            std::all_of(grp.members.begin(), grp.members.end(), IsInt32Only);
    if (shape_math && std::any_of(c.begin(), c.end(), IsCpu)) {
      c.erase(std::remove_if(c.begin(), c.end(), [](const Device* d) { return !IsCpu(d); }),
              c.end());
    }
    if (hint != nullptr && std::find(c.begin(), c.end(), hint) != c.end()) return hint;
    return c.front();
  }

  static bool IsCpu(const Device* d) { return d->device_type() == DEVICE_CPU; }

  void Note(const Node* who, const std::string& why, const Device* d) {
    if (notes_ == nullptr) return;
    notes_->push_back(absl::StrCat(NodeRef(who), " asked for '", who->requested_device(),
                                   "' but ", why, "; placed on ", d->name(),
                                   " (soft placement)"));
  }

  const Device* FindDevice(const std::string& name) const {
    if (name.empty()) return nullptr;
    for (const Device* d : devices_) {
      if (d->name() == name) return d;
    }
    return nullptr;
  }

  Graph* g_;
  const PlacerOptions options_;
  std::vector<std::string>* notes_;
  std::vector<std::string>* ignored_notes_;
  UnionFind uf_;
  std::vector<const Device*> devices_;  // by type priority, then the given order
  std::vector<std::string> types_;      // device types present, by priority
  absl::flat_hash_set<int> ignored_;    // nodes whose request IgnoreConflictingRequest dropped
};

}  // namespace

Status PlaceGraph(Graph* graph, const std::vector<Device*>& devices,
                  const PlacerOptions& options, std::vector<std::string>* soft_placement_notes,
                  std::vector<std::string>* ignored_requests) {
  return Placement(graph, devices, options, soft_placement_notes, ignored_requests).Run();
}

Status PlaceStatefulNodes(const Graph& graph, const std::vector<Device*>& devices,
                          const PlacerOptions& options,
                          absl::flat_hash_map<std::string, std::string>* placements) {
  std::unique_ptr<Graph> g = graph.Clone();
  for (Node* n : g->nodes()) {
    auto it = placements->find(n->name());
    if (it != placements->end()) n->set_assigned_device_name(it->second);
  }
  TX_RETURN_IF_ERROR(PlaceGraph(g.get(), devices, options));
  for (const Node* n : g->nodes()) {
    if (n->IsStateful() && !n->IsArg() && !n->IsRetval()) {
      placements->insert_or_assign(n->name(), n->assigned_device_name());
    }
  }
  return OkStatus();
}

std::vector<std::string> DevicePlacementLines(const Graph& graph) {
  std::vector<std::string> out;
  for (const Node* n : graph.nodes()) {
    out.push_back(absl::StrCat(n->name(), ": (", n->type_string(), "): ",
                               n->assigned_device_name()));
  }
  return out;
}

}  // namespace tensorflux
