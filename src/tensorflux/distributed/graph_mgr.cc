#include "tensorflux/distributed/graph_mgr.h"

#include "absl/strings/str_cat.h"
#include "tensorflux/graph/graph_def_io.h"

namespace tensorflux {

GraphMgr::GraphMgr(const DeviceMgr* devices, FunctionRuntime* function_runtime)
    : devices_(devices), function_runtime_(function_runtime) {}

StatusOr<std::string> GraphMgr::Register(const RegisterGraphRequest& request) {
  const GraphDef& gdef = request.graph_def();
  TX_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, GraphFromGraphDef(gdef));
  for (Node* n : graph->nodes()) {
    const std::string& want = n->def().device();
    if (want.empty()) {
      return errors::InvalidArgument("{{node ", n->name(), "}} (op ", n->type_string(),
                                     ") has no device: a registered graph is placed");
    }
    StatusOr<Device*> d = devices_->LookupDevice(want);
    if (!d.ok() || (*d)->name() != want) {
      return errors::InvalidArgument("{{node ", n->name(), "}} (op ", n->type_string(),
                                     ") is on device '", want, "', which is not a device of "
                                     "this worker (", devices_->DeviceNames(), ")");
    }
    n->set_assigned_device_name((*d)->name());
  }
  function_runtime_->AddLibrary(gdef.library());
  ExecutorParams params;
  params.check_numerics = request.config_proto().check_numerics();
  PartitionOptions popts;
  const DeviceMgr* devices = devices_;
  popts.get_incarnation = [devices](const std::string& device) -> uint64_t {
    auto d = devices->LookupDevice(device);
    return d.ok() ? (*d)->attributes().incarnation() : 0;
  };
  std::vector<DeviceBase*> local(devices_->ListDevices().begin(),
                                 devices_->ListDevices().end());
  auto item = std::make_shared<Item>();
  TX_ASSIGN_OR_RETURN(item->executor,
                      PartitionedExecutor::Create(params, local, popts, std::move(graph),
                                                  /*external_recvs=*/true));
  std::lock_guard<std::mutex> l(mu_);
  item->handle = absl::StrCat("graph_", next_handle_++);
  graphs_.emplace(item->handle, item);
  return item->handle;
}

Status GraphMgr::Deregister(const std::string& handle) {
  std::lock_guard<std::mutex> l(mu_);
  if (graphs_.erase(handle) == 0) {
    return errors::NotFound("Graph handle '", handle, "' is not registered");
  }
  return OkStatus();
}

StatusOr<std::shared_ptr<const GraphMgr::Item>> GraphMgr::Find(const std::string& handle) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = graphs_.find(handle);
  if (it == graphs_.end()) {
    return errors::NotFound("Graph handle '", handle, "' is not registered");
  }
  return it->second;
}

int GraphMgr::num_graphs() const {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int>(graphs_.size());
}

}  // namespace tensorflux
