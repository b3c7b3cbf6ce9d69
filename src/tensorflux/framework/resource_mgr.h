// ResourceMgr: the per-device table of stateful objects that outlive one step (variables,
// later iterators and queues), keyed by (container, name) like TensorFlow's ResourceMgr.
//
// A resource is a ResourceBase held by std::shared_ptr: the manager holds one reference, every
// kernel that looks it up holds another for as long as it uses it, so Delete/Cleanup never free
// an object a running kernel still touches. Lookups are typed: asking for a Var under a name
// that holds another kind of resource is INVALID_ARGUMENT, not a bad cast.
//
// Errors (TF's codes): Create of an existing (container, name) is ALREADY_EXISTS; Lookup and
// Delete of a missing one are NOT_FOUND ("Resource localhost/v/Var does not exist."); a type
// mismatch is INVALID_ARGUMENT. Thread-safe.
//
// Each Device (devices/device.h) owns one ResourceMgr; a session's devices live as long as the
// session, so variables live across Run calls and die with it.
//
// Kernels name resources with DT_RESOURCE scalars (ResourceHandle: device, container, name,
// type). MakeResourceHandle fills one for the kernel's device; HandleFromInput validates an
// input; LookupResource resolves a handle in the kernel's device's manager.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <typeindex>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/types.h"

namespace tensorflux {

class OpKernelContext;
class DeviceBase;

class ResourceBase {
 public:
  virtual ~ResourceBase() = default;
  // One-line description for errors and debugging.
  virtual std::string DebugString() const = 0;
};

class ResourceMgr {
 public:
  // Resources with an empty container go to default_container() ("localhost", as TF).
  explicit ResourceMgr(std::string default_container = "localhost");
  ~ResourceMgr();
  ResourceMgr(const ResourceMgr&) = delete;
  ResourceMgr& operator=(const ResourceMgr&) = delete;

  const std::string& default_container() const { return default_container_; }

  template <typename T>
  Status Create(std::string_view container, std::string_view name, std::shared_ptr<T> resource) {
    return DoCreate(container, name, typeid(T), T::kTypeName, std::move(resource));
  }

  template <typename T>
  StatusOr<std::shared_ptr<T>> Lookup(std::string_view container, std::string_view name) const {
    TX_ASSIGN_OR_RETURN(std::shared_ptr<ResourceBase> r,
                        DoLookup(container, name, typeid(T), T::kTypeName));
    return std::static_pointer_cast<T>(std::move(r));
  }

  // Looks up the resource, or creates it with `creator` (called under the manager's lock, at
  // most once per (container, name)) when missing. Errors from `creator` are returned as is.
  template <typename T>
  StatusOr<std::shared_ptr<T>> LookupOrCreate(
      std::string_view container, std::string_view name,
      const std::function<StatusOr<std::shared_ptr<T>>()>& creator) {
    TX_ASSIGN_OR_RETURN(
        std::shared_ptr<ResourceBase> r,
        DoLookupOrCreate(container, name, typeid(T), T::kTypeName,
                         [&]() -> StatusOr<std::shared_ptr<ResourceBase>> {
                           TX_ASSIGN_OR_RETURN(std::shared_ptr<T> made, creator());
                           return std::shared_ptr<ResourceBase>(std::move(made));
                         }));
    return std::static_pointer_cast<T>(std::move(r));
  }

  // NOT_FOUND when missing, INVALID_ARGUMENT when it holds another type.
  template <typename T>
  Status Delete(std::string_view container, std::string_view name) {
    return DoDelete(container, name, &typeid(T), T::kTypeName);
  }
  // Deletes whatever the handle names (its type is not checked: DestroyResourceOp's rule).
  Status Delete(const ResourceHandle& handle);

  // Drops every resource of `container` (no error when it has none).
  void Cleanup(std::string_view container);
  // Drops everything.
  void Clear();

  // "container/name (type)" lines, sorted; for debugging and tests.
  std::vector<std::string> DebugList() const;

 private:
  struct Entry {
    std::type_index type;
    std::string type_name;
    std::shared_ptr<ResourceBase> resource;
  };
  using Container = absl::flat_hash_map<std::string, Entry>;  // by name

  std::string ContainerName(std::string_view container) const;
  Status DoCreate(std::string_view container, std::string_view name, std::type_index type,
                  const char* type_name, std::shared_ptr<ResourceBase> resource);
  StatusOr<std::shared_ptr<ResourceBase>> DoLookup(std::string_view container,
                                                   std::string_view name, std::type_index type,
                                                   const char* type_name) const;
  StatusOr<std::shared_ptr<ResourceBase>> DoLookupOrCreate(
      std::string_view container, std::string_view name, std::type_index type,
      const char* type_name, const std::function<StatusOr<std::shared_ptr<ResourceBase>>()>& fn);
  Status DoDelete(std::string_view container, std::string_view name, const std::type_info* type,
                  const char* type_name);
  // mu_ held. NOT_FOUND / INVALID_ARGUMENT as documented above.
  StatusOr<const Entry*> FindLocked(const std::string& container, std::string_view name,
                                    std::type_index type, const char* type_name) const;

  const std::string default_container_;
  mutable std::mutex mu_;
  // container -> name -> entry: one resource per name, of the type it was created with.
  absl::flat_hash_map<std::string, Container> containers_;
};

// ---------------------------------------------------------------- handles

// A handle for resource `name` of type T in `container` ("" = the manager's default) on the
// kernel's device.
ResourceHandle MakeResourceHandle(OpKernelContext* ctx, std::string_view container,
                                  std::string_view name, const char* type_name);
template <typename T>
ResourceHandle MakeResourceHandle(OpKernelContext* ctx, std::string_view container,
                                  std::string_view name) {
  return MakeResourceHandle(ctx, container, name, T::kTypeName);
}

// Input i as a handle: INVALID_ARGUMENT unless it is a DT_RESOURCE scalar.
StatusOr<const ResourceHandle*> HandleFromInput(OpKernelContext* ctx, int i);

// Input i as a handle on this kernel's device (HandleFromInput + CheckHandleDevice) and the
// device's manager.
struct HandleInput {
  const ResourceHandle* handle;
  ResourceMgr* mgr;
};
StatusOr<HandleInput> ResolveHandleInput(OpKernelContext* ctx, int i);

// The kernel's device's manager: FAILED_PRECONDITION when the device has none.
StatusOr<ResourceMgr*> GetResourceMgr(OpKernelContext* ctx);
StatusOr<ResourceMgr*> GetResourceMgr(DeviceBase* device);

// Resolves a handle on the kernel's device. INVALID_ARGUMENT when the handle names another
// device or another resource type; NOT_FOUND when the resource does not exist.
template <typename T>
StatusOr<std::shared_ptr<T>> LookupResource(OpKernelContext* ctx, const ResourceHandle& h);

Status CheckHandleDevice(OpKernelContext* ctx, const ResourceHandle& h);

template <typename T>
StatusOr<std::shared_ptr<T>> LookupResource(OpKernelContext* ctx, const ResourceHandle& h) {
  TX_RETURN_IF_ERROR(CheckHandleDevice(ctx, h));
  TX_ASSIGN_OR_RETURN(ResourceMgr * rm, GetResourceMgr(ctx));
  return rm->Lookup<T>(h.container, h.name);
}

}  // namespace tensorflux
