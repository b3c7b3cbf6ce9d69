// The partitioner of passes/graph_partition.h.
#include "tensorflux/passes/graph_partition.h"

#include <algorithm>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/devices/device_name_utils.h"
#include "tensorflux/framework/device_base.h"
#include "tensorflux/framework/memory_types.h"
#include "tensorflux/framework/node_def_util.h"

namespace tensorflux {
namespace {

std::string InputName(const std::string& node, int output) {
  return output == 0 ? node : absl::StrCat(node, ":", output);
}

// Fills in the defaults of PartitionOptions.
PartitionOptions WithDefaults(const PartitionOptions& in, const Graph& g) {
  PartitionOptions o = in;
  if (!o.node_to_loc) {
    o.node_to_loc = [](const Node& n) { return n.assigned_device_name(); };
  }
  if (!o.new_name) {
    auto taken = std::make_shared<absl::flat_hash_set<std::string>>();
    auto counter = std::make_shared<int64_t>(0);
    o.new_name = [&g, taken, counter](const std::string& prefix) {
      std::string name;
      do {
        name = absl::StrCat(prefix, "/_", (*counter)++);
      } while (g.FindNode(name) != nullptr || taken->contains(name));
      taken->insert(name);
      return name;
    };
  }
  if (!o.get_incarnation) {
    o.get_incarnation = [](const std::string&) -> uint64_t { return 1; };
  }
  return o;
}

class Partitioner {
 public:
  Partitioner(const PartitionOptions& opts, const Graph& g,
              std::map<std::string, GraphDef>* parts)
      : opts_(WithDefaults(opts, g)), g_(g), parts_(parts) {}

  Status Run() {
    parts_->clear();
    std::vector<Node*> nodes = g_.nodes();
    loc_.assign(g_.num_node_ids(), std::string());
    defs_.assign(g_.num_node_ids(), nullptr);
    for (Node* n : nodes) {
      std::string loc = opts_.node_to_loc(*n);
      if (loc.empty()) {
        return errors::InvalidArgument("{{node ", n->name(), "}} (op ", n->type_string(),
                                       ") has no assigned device; place the graph before "
                                       "partitioning it");
      }
      auto [it, inserted] = parts_->try_emplace(loc);
      if (inserted) {
        *it->second.mutable_versions() = g_.versions();
        *it->second.mutable_library() = g_.library();
      }
      NodeDef* def = it->second.add_node();
      *def = n->def();
      def->clear_input();
      def->set_device(loc);
      loc_[n->id()] = std::move(loc);
      defs_[n->id()] = def;
    }
    mtypes_.resize(g_.num_node_ids());
    for (Node* n : nodes) TX_RETURN_IF_ERROR(ComputeMemoryTypes(n));
    for (Node* n : nodes) TX_RETURN_IF_ERROR(ConnectInputs(n));
    return OkStatus();
  }

 private:
  // Rebuilds dst's input list: local inputs by name, remote ones through a _Recv.
  Status ConnectInputs(const Node* dst) {
    const std::string& dst_loc = loc_[dst->id()];
    std::vector<std::string> data(dst->num_inputs());
    std::vector<std::string> control;
    for (const Edge* e : dst->in_edges()) {
      const Node* src = e->src();
      std::string name;
      // A data edge whose ends disagree on the memory of the tensor goes through the rendezvous
      // even within one device (TF's same-device _HostSend/_Recv pairs).
      const MemoryType src_mt = e->IsControlEdge() ? MemoryType::kDevice
                                                   : mtypes_[src->id()].out[e->src_output()];
      const MemoryType dst_mt = e->IsControlEdge() ? MemoryType::kDevice
                                                   : mtypes_[dst->id()].in[e->dst_input()];
      if (loc_[src->id()] == dst_loc && src_mt == dst_mt) {
        name = e->IsControlEdge() ? src->name() : InputName(src->name(), e->src_output());
      } else {
        if (!e->IsControlEdge() && IsRefType(dst->input_type(e->dst_input()))) {
          return errors::InvalidArgument(
              "{{node ", dst->name(), "}} (op ", dst->type_string(), ") takes input ",
              e->dst_input(), " from ", src->name(), ":", e->src_output(),
              " by reference, but the two nodes are on different devices (", loc_[src->id()],
              " and ", dst_loc, "); a reference input must be on its variable's device");
        }
        TX_ASSIGN_OR_RETURN(name, RecvFor(e, dst_loc, src_mt, dst_mt));
      }
      if (e->IsControlEdge()) {
        std::string c = absl::StrCat("^", name);
        if (std::find(control.begin(), control.end(), c) == control.end()) {
          control.push_back(std::move(c));
        }
      } else {
        data[e->dst_input()] = std::move(name);
      }
    }
    NodeDef* def = defs_[dst->id()];
    for (int i = 0; i < dst->num_inputs(); ++i) {
      if (data[i].empty()) {
        return errors::InvalidArgument("{{node ", dst->name(), "}} (op ", dst->type_string(),
                                       "): input ", i, " is not connected");
      }
      def->add_input(std::move(data[i]));
    }
    for (std::string& c : control) def->add_input(std::move(c));
    return OkStatus();
  }

  // The memory types of n's inputs and outputs on its device (framework/memory_types.h): all
  // host memory on CPU devices; only devices with their own memory consult the kernel registry.
  Status ComputeMemoryTypes(const Node* n) {
    MemoryTypes& mt = mtypes_[n->id()];
    auto parsed = DeviceNameUtils::Parse(loc_[n->id()]);
    mt.device_type = parsed.ok() ? parsed->type : std::string();
    if (mt.device_type == DEVICE_CPU || mt.device_type.empty()) {
      mt.in.assign(n->num_inputs(), MemoryType::kHost);
      mt.out.assign(n->num_outputs(), MemoryType::kHost);
      return OkStatus();
    }
    Status s = MemoryTypesForNode(n->def(), mt.device_type, &mt.in, &mt.out);
    if (!s.ok()) return errors::AttachNodeContext(s, n->name(), n->type_string());
    if (static_cast<int>(mt.in.size()) != n->num_inputs() ||
        static_cast<int>(mt.out.size()) != n->num_outputs()) {
      return errors::Internal("{{node ", n->name(), "}} (op ", n->type_string(),
                              "): memory types do not match its inputs and outputs");
    }
    return OkStatus();
  }

  // The _Recv on dst_loc that carries e's tensor (or, for a control edge, e's src), creating the
  // _Send/_Recv pair the first time. On a device with its own memory, a tensor in host memory is
  // sent by a _HostSend (src_mt) and received into host memory by a _HostRecv (dst_mt).
  StatusOr<std::string> RecvFor(const Edge* e, const std::string& dst_loc, MemoryType src_mt,
                                MemoryType dst_mt) {
    const Node* src = e->src();
    const int out = e->IsControlEdge() ? kControlSlot : e->src_output();
    auto key = std::make_tuple(src->id(), out, dst_loc, dst_mt);
    auto found = recv_of_.find(key);
    if (found != recv_of_.end()) return found->second;

    const std::string& src_loc = loc_[src->id()];
    GraphDef& src_part = (*parts_)[src_loc];
    GraphDef& dst_part = (*parts_)[dst_loc];
    std::string send_input;
    DataType dtype;
    if (e->IsControlEdge()) {
      NodeDef* dummy = src_part.add_node();
      dummy->set_name(opts_.new_name(src->name()));
      dummy->set_op("Const");
      dummy->set_device(src_loc);
      dummy->add_input(absl::StrCat("^", src->name()));
      AddNodeAttr("dtype", DT_FLOAT, dummy);
      AddNodeAttr("value", Tensor(DT_FLOAT, TensorShape({0})), dummy);
      send_input = dummy->name();
      dtype = DT_FLOAT;
    } else {
      send_input = InputName(src->name(), out);
      dtype = BaseType(src->output_type(out));
    }
    const std::string tensor_name = absl::StrCat("edge_", e->id(), "_", src->name());
    const int64_t incarnation = static_cast<int64_t>(opts_.get_incarnation(src_loc));
    auto add_common = [&](NodeDef* n) {
      AddNodeAttr("tensor_name", tensor_name, n);
      AddNodeAttr("send_device", src_loc, n);
      AddNodeAttr("send_device_incarnation", incarnation, n);
      AddNodeAttr("recv_device", dst_loc, n);
      AddNodeAttr("client_terminated", false, n);
    };
    const bool host_send =
        src_mt == MemoryType::kHost && mtypes_[src->id()].device_type != DEVICE_CPU;
    const bool host_recv =
        dst_mt == MemoryType::kHost && mtypes_[e->dst()->id()].device_type != DEVICE_CPU;
    NodeDef* send = src_part.add_node();
    send->set_name(opts_.new_name(src->name()));
    send->set_op(host_send ? "_HostSend" : "_Send");
    send->set_device(src_loc);
    send->add_input(send_input);
    AddNodeAttr("T", dtype, send);
    add_common(send);

    NodeDef* recv = dst_part.add_node();
    recv->set_name(opts_.new_name(src->name()));
    recv->set_op(host_recv ? "_HostRecv" : "_Recv");
    recv->set_device(dst_loc);
    AddNodeAttr("tensor_type", dtype, recv);
    add_common(recv);
    recv_of_.emplace(key, recv->name());
    return recv->name();
  }

  const PartitionOptions opts_;
  const Graph& g_;
  std::map<std::string, GraphDef>* parts_;
  std::vector<std::string> loc_;   // by node id
  std::vector<NodeDef*> defs_;     // by node id; stable (RepeatedPtrField elements)
  struct MemoryTypes {
    std::string device_type;
    MemoryTypeVector in, out;
  };
  std::vector<MemoryTypes> mtypes_;  // by node id
  // (src id, src output or kControlSlot, destination device, memory the receiver reads) ->
  // _Recv name
  absl::flat_hash_map<std::tuple<int, int, std::string, MemoryType>, std::string> recv_of_;
};

}  // namespace

Status Partition(const PartitionOptions& opts, const Graph& graph,
                 std::map<std::string, GraphDef>* partitions) {
  return Partitioner(opts, graph, partitions).Run();
}

}  // namespace tensorflux
