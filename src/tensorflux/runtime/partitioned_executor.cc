#include "tensorflux/runtime/partitioned_executor.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
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
Status CheckSendRecvPairs(const std::vector<const Graph*>& graphs) {
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
      if (IsRecv(*n) && !sent.contains(KeyOf(*n))) {
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
    const PartitionOptions& popts, std::unique_ptr<Graph> graph) {
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
  if (one_device) {
    for (const Node* n : graph->nodes()) {
      out->needs_rendezvous_ = out->needs_rendezvous_ || IsSend(*n) || IsRecv(*n);
    }
    if (out->needs_rendezvous_) TX_RETURN_IF_ERROR(CheckSendRecvPairs({graph.get()}));
    TX_RETURN_IF_ERROR(add(only != nullptr ? only : devices.at(0), std::move(graph)));
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
  TX_RETURN_IF_ERROR(CheckSendRecvPairs(views));
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
  const int n = static_cast<int>(parts_.size());
  if (n == 1) return parts_[0].executor->Run(a);

  std::mutex mu;
  std::condition_variable cv;
  int remaining = n;
  Status first;  // the first error to arrive, used when the rendezvous was not aborted
  auto done = [&](const Status& s) {
    std::lock_guard<std::mutex> l(mu);
    if (!s.ok() && first.ok()) first = s;
    if (--remaining == 0) cv.notify_all();
  };
  for (int i = 1; i < n; ++i) {
    Executor* ex = parts_[i].executor.get();
    if (a.inter_op_pool != nullptr) {
      a.inter_op_pool->Schedule([ex, &a, &done] { ex->RunAsync(a, done); });
    } else {
      ex->RunAsync(a, done);
    }
  }
  parts_[0].executor->RunAsync(a, done);
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return remaining == 0; });
  }
  Status aborted = rendezvous.abort_status();
  return aborted.ok() ? first : aborted;
}

}  // namespace tensorflux
