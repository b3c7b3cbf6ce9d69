#include "tensorflux/runtime/partitioned_executor.h"

#include <map>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/notification.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/runtime/rendezvous.h"

namespace tensorflux {

namespace {

bool IsSend(const Node& n) { return n.type_string() == "_Send" || n.type_string() == "_HostSend"; }
bool IsRecv(const Node& n) { return n.type_string() == "_Recv" || n.type_string() == "_HostRecv"; }

// The rendezvous key a _Send/_Recv node uses (frame 0:0); bad attrs are left to its kernel.
std::string KeyOf(const Node& n) {
  std::string send_device, recv_device, tensor_name;
  int64_t incarnation = 0;
  GetNodeAttr(n.def(), "send_device", &send_device).IgnoreError();
  GetNodeAttr(n.def(), "recv_device", &recv_device).IgnoreError();
  GetNodeAttr(n.def(), "tensor_name", &tensor_name).IgnoreError();
  GetNodeAttr(n.def(), "send_device_incarnation", &incarnation).IgnoreError();
  return Rendezvous::CreateKey(send_device, static_cast<uint64_t>(incarnation), recv_device,
                               tensor_name, FrameAndIter());
}

// Every _Recv of the step needs a _Send of the same key in the step (nothing else sends into a
// step's rendezvous, so it would wait forever), and each key is sent once.
Status CheckSendRecvPairs(const std::vector<const Graph*>& graphs, bool external_recvs) {
  absl::flat_hash_map<std::string, const Node*> sent;
  for (const Graph* g : graphs) {
    for (const Node* n : g->nodes()) {
      if (!IsSend(*n)) continue;
      auto [it, inserted] = sent.emplace(KeyOf(*n), n);
      if (!inserted) {
        return errors::InvalidArgument("{{node ", n->name(), "}} (op ", n->type_string(),
                                       ") sends under the same rendezvous key as {{node ",
                                       it->second->name(), "}}: ", it->first);
      }
    }
  }
  for (const Graph* g : graphs) {
    for (const Node* n : g->nodes()) {
      if (IsRecv(*n) && !external_recvs && !sent.contains(KeyOf(*n))) {
        return errors::InvalidArgument("{{node ", n->name(), "}} (op ", n->type_string(),
                                       ") would wait forever: no _Send of this step sends its "
                                       "key ", KeyOf(*n));
      }
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<PartitionedExecutor>> PartitionedExecutor::Create(
    const ExecutorParams& params, const std::vector<DeviceBase*>& devices,
    const PartitionOptions& popts, std::unique_ptr<Graph> graph, bool external_recvs) {
  absl::flat_hash_map<std::string, DeviceBase*> by_name;
  for (DeviceBase* d : devices) by_name.emplace(d->name(), d);
  DeviceBase* only = nullptr;  // the device of every node so far, while there is one
  bool one_device = true;
  for (const Node* n : graph->nodes()) {
    auto it = by_name.find(n->assigned_device_name());
    if (it == by_name.end()) {
      return errors::InvalidArgument("{{node ", n->name(), "}} (op ", n->type_string(),
                                     ") is assigned to device '", n->assigned_device_name(),
                                     "', which this session does not have");
    }
    if (only == nullptr) only = it->second;
    one_device = one_device && it->second == only;
  }
  auto out = std::make_unique<PartitionedExecutor>();
  auto add = [&](DeviceBase* device, std::unique_ptr<Graph> g) -> Status {
    ExecutorParams p = params;
    p.device = device;
    Part part;
    part.device = device;
    TX_ASSIGN_OR_RETURN(part.executor, Executor::Create(p, std::move(g)));
    out->parts_.push_back(std::move(part));
    return OkStatus();
  };
  // One CPU device: no partitioning. A device with its own memory is partitioned even alone,
  // for the same-device pairs of host-memory args (passes/graph_partition.h).
  DeviceBase* single = only != nullptr ? only : devices.at(0);
  if (one_device && single->device_type() == DEVICE_CPU) {
    for (const Node* n : graph->nodes()) {
      out->needs_rendezvous_ = out->needs_rendezvous_ || IsSend(*n) || IsRecv(*n);
    }
    if (out->needs_rendezvous_) TX_RETURN_IF_ERROR(CheckSendRecvPairs({graph.get()}, external_recvs));
    TX_RETURN_IF_ERROR(add(single, std::move(graph)));
    return out;
  }
  out->needs_rendezvous_ = true;
  PartitionOptions o = popts;
  o.node_to_loc = nullptr;
  std::map<std::string, GraphDef> partitions;
  TX_RETURN_IF_ERROR(Partition(o, *graph, &partitions));
  std::vector<std::pair<DeviceBase*, std::unique_ptr<Graph>>> graphs;
  std::vector<const Graph*> views;
  for (auto& [name, gdef] : partitions) {
    TX_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, GraphFromGraphDef(gdef));
    for (Node* n : g->nodes()) n->set_assigned_device_name(name);
    views.push_back(g.get());
    graphs.emplace_back(by_name.at(name), std::move(g));
  }
  TX_RETURN_IF_ERROR(CheckSendRecvPairs(views, external_recvs));
  for (auto& [device, g] : graphs) TX_RETURN_IF_ERROR(add(device, std::move(g)));
  return out;
}

Status PartitionedExecutor::Run(const Executor::Args& args) const {
  Executor::Args a = args;
  if (!needs_rendezvous_) {  // one partition without _Send/_Recv nodes
    a.rendezvous = nullptr;
    return parts_[0].executor->Run(a);
  }
  LocalRendezvous rendezvous;
  a.rendezvous = &rendezvous;
  if (parts_.size() == 1) return parts_[0].executor->Run(a);
  absl::Notification finished;
  Status result;
  RunAsync(a, [&](const Status& s) {
    result = s;
    finished.Notify();
  });
  finished.WaitForNotification();
  return result;
}

namespace {

// The partitions' shared completion: the first error, or the rendezvous' abort status.
struct StepJoin {
  std::mutex mu;
  int remaining = 0;
  Status first;
  const LocalRendezvous* local = nullptr;  // its abort status wins when set
  Executor::DoneCallback done;
};

}  // namespace

void PartitionedExecutor::RunAsync(const Executor::Args& args, Executor::DoneCallback done) const {
  if (needs_rendezvous_ && args.rendezvous == nullptr) {
    done(errors::FailedPrecondition("PartitionedExecutor::RunAsync: the graph has _Send/_Recv "
                                    "nodes and the step has no rendezvous"));
    return;
  }
  const int n = static_cast<int>(parts_.size());
  auto join = std::make_shared<StepJoin>();
  join->remaining = n;
  join->local = dynamic_cast<const LocalRendezvous*>(args.rendezvous);
  join->done = std::move(done);
  auto part_done = [join](const Status& s) {
    Executor::DoneCallback finish;
    Status result;
    {
      std::lock_guard<std::mutex> l(join->mu);
      if (!s.ok() && join->first.ok()) join->first = s;
      if (--join->remaining > 0) return;
      result = join->first;
      finish = std::move(join->done);
    }
    if (!result.ok() && join->local != nullptr) {
      Status aborted = join->local->abort_status();
      if (!aborted.ok()) result = aborted;
    }
    finish(result);
  };
  for (int i = 0; i < n - 1; ++i) {
    Executor* ex = parts_[i].executor.get();
    if (args.inter_op_pool != nullptr) {
      args.inter_op_pool->Schedule([ex, args, part_done] { ex->RunAsync(args, part_done); });
    } else {
      ex->RunAsync(args, part_done);
    }
  }
  parts_[n - 1].executor->RunAsync(args, part_done);
}

}  // namespace tensorflux
