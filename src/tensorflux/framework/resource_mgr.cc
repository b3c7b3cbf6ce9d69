#include "tensorflux/framework/resource_mgr.h"

#include <algorithm>

#include "tensorflux/framework/device_base.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

Status DoesNotExist(const std::string& container, std::string_view name, const char* type_name) {
  return errors::NotFound("Resource ", container, "/", name, "/", type_name, " does not exist.");
}

}  // namespace

ResourceMgr::ResourceMgr(std::string default_container)
    : default_container_(std::move(default_container)) {}

ResourceMgr::~ResourceMgr() { Clear(); }

std::string ResourceMgr::ContainerName(std::string_view container) const {
  return container.empty() ? default_container_ : std::string(container);
}

StatusOr<const ResourceMgr::Entry*> ResourceMgr::FindLocked(const std::string& container,
                                                            std::string_view name,
                                                            std::type_index type,
                                                            const char* type_name) const {
  auto c = containers_.find(container);
  if (c == containers_.end()) return DoesNotExist(container, name, type_name);
  auto e = c->second.find(std::string(name));
  if (e == c->second.end()) return DoesNotExist(container, name, type_name);
  if (e->second.type != type) {
    return errors::InvalidArgument("Resource ", container, "/", name, " is a ", e->second.type_name,
                                   ", not a ", type_name);
  }
  return &e->second;
}

Status ResourceMgr::DoCreate(std::string_view container, std::string_view name,
                             std::type_index type, const char* type_name,
                             std::shared_ptr<ResourceBase> resource) {
  if (resource == nullptr) {
    return errors::InvalidArgument("ResourceMgr::Create: null resource for ", name);
  }
  const std::string cname = ContainerName(container);
  std::lock_guard<std::mutex> l(mu_);
  Container& c = containers_[cname];
  auto [it, inserted] = c.try_emplace(std::string(name), Entry{type, type_name, nullptr});
  if (!inserted) {
    return errors::AlreadyExists("Resource ", cname, "/", name, "/", it->second.type_name,
                                 " already exists.");
  }
  it->second.resource = std::move(resource);
  return OkStatus();
}

StatusOr<std::shared_ptr<ResourceBase>> ResourceMgr::DoLookup(std::string_view container,
                                                              std::string_view name,
                                                              std::type_index type,
                                                              const char* type_name) const {
  const std::string cname = ContainerName(container);
  std::lock_guard<std::mutex> l(mu_);
  TX_ASSIGN_OR_RETURN(const Entry* e, FindLocked(cname, name, type, type_name));
  return e->resource;
}

StatusOr<std::shared_ptr<ResourceBase>> ResourceMgr::DoLookupOrCreate(
    std::string_view container, std::string_view name, std::type_index type, const char* type_name,
    const std::function<StatusOr<std::shared_ptr<ResourceBase>>()>& fn) {
  const std::string cname = ContainerName(container);
  std::lock_guard<std::mutex> l(mu_);
  StatusOr<const Entry*> found = FindLocked(cname, name, type, type_name);
  if (found.ok()) return (*found)->resource;
  if (!absl::IsNotFound(found.status())) return found.status();
  TX_ASSIGN_OR_RETURN(std::shared_ptr<ResourceBase> made, fn());
  if (made == nullptr) {
    return errors::Internal("ResourceMgr::LookupOrCreate: the creator of ", cname, "/", name,
                            " returned null");
  }
  containers_[cname].insert_or_assign(std::string(name), Entry{type, type_name, made});
  return made;
}

Status ResourceMgr::DoDelete(std::string_view container, std::string_view name,
                             const std::type_info* type, const char* type_name) {
  const std::string cname = ContainerName(container);
  std::shared_ptr<ResourceBase> doomed;  // released after the lock
  std::lock_guard<std::mutex> l(mu_);
  auto c = containers_.find(cname);
  if (c == containers_.end()) return DoesNotExist(cname, name, type_name);
  auto e = c->second.find(std::string(name));
  if (e == c->second.end()) return DoesNotExist(cname, name, type_name);
  if (type != nullptr && e->second.type != std::type_index(*type)) {
    return errors::InvalidArgument("Resource ", cname, "/", name, " is a ", e->second.type_name,
                                   ", not a ", type_name);
  }
  doomed = std::move(e->second.resource);
  c->second.erase(e);
  return OkStatus();
}

Status ResourceMgr::Delete(const ResourceHandle& handle) {
  const char* type = handle.maybe_type_name.empty() ? "resource" : handle.maybe_type_name.c_str();
  return DoDelete(handle.container, handle.name, nullptr, type);
}

void ResourceMgr::Cleanup(std::string_view container) {
  Container doomed;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto c = containers_.find(ContainerName(container));
    if (c == containers_.end()) return;
    doomed = std::move(c->second);
    containers_.erase(c);
  }
}

void ResourceMgr::Clear() {
  absl::flat_hash_map<std::string, Container> doomed;
  {
    std::lock_guard<std::mutex> l(mu_);
    doomed.swap(containers_);
  }
}

std::vector<std::string> ResourceMgr::DebugList() const {
  std::vector<std::string> out;
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& [cname, c] : containers_) {
    for (const auto& [name, e] : c)
      out.push_back(absl::StrCat(cname, "/", name, " (", e.type_name, ")"));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------- handles

ResourceHandle MakeResourceHandle(OpKernelContext* ctx, std::string_view container,
                                  std::string_view name, const char* type_name) {
  ResourceHandle h;
  h.device = ctx->device() != nullptr ? ctx->device()->name() : std::string();
  ResourceMgr* rm = ctx->device() != nullptr ? ctx->device()->resource_manager() : nullptr;
  h.container = !container.empty() ? std::string(container)
                : rm != nullptr    ? rm->default_container()
                                   : std::string("localhost");
  h.name = std::string(name);
  h.maybe_type_name = type_name;
  h.hash_code = std::hash<std::string_view>()(type_name);
  return h;
}

StatusOr<const ResourceHandle*> HandleFromInput(OpKernelContext* ctx, int i) {
  const Tensor& t = ctx->input(i);
  if (t.dtype() != DT_RESOURCE || t.dims() != 0) {
    return errors::InvalidArgument("Input ", i, " must be a scalar resource handle, got ",
                                   DataTypeString(t.dtype()), " of shape ",
                                   t.shape().DebugString());
  }
  return t.data<ResourceHandle>();
}

StatusOr<ResourceMgr*> GetResourceMgr(DeviceBase* device) {
  ResourceMgr* rm = device != nullptr ? device->resource_manager() : nullptr;
  if (rm == nullptr) {
    return errors::FailedPrecondition("Device ", device != nullptr ? device->name() : "(none)",
                                      " has no resource manager (resources need a session)");
  }
  return rm;
}

StatusOr<ResourceMgr*> GetResourceMgr(OpKernelContext* ctx) {
  return GetResourceMgr(ctx->device());
}

StatusOr<HandleInput> ResolveHandleInput(OpKernelContext* ctx, int i) {
  TX_ASSIGN_OR_RETURN(const ResourceHandle* h, HandleFromInput(ctx, i));
  TX_RETURN_IF_ERROR(CheckHandleDevice(ctx, *h));
  TX_ASSIGN_OR_RETURN(ResourceMgr * rm, GetResourceMgr(ctx));
  return HandleInput{h, rm};
}

Status CheckHandleDevice(OpKernelContext* ctx, const ResourceHandle& h) {
  if (ctx->device() != nullptr && !h.device.empty() && h.device != ctx->device()->name()) {
    return errors::InvalidArgument("Trying to access resource ", h.name, " located in device ",
                                   h.device, " from device ", ctx->device()->name());
  }
  return OkStatus();
}

}  // namespace tensorflux
