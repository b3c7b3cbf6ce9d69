#include "tensorflux/framework/resource_var.h"

#include <mutex>

#include "tensorflux/framework/device_base.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {

std::string Var::DebugString() const {
  return absl::StrCat("Var ", name_, " (", DataTypeString(dtype_), ")");
}

Status Var::CopyOnWrite() {
  if (!tensor_.IsInitialized() || tensor_.RefCountIsOne() || tensor_.NumElements() == 0) {
    return OkStatus();
  }
  Tensor copy = tensor_.DeepCopy();
  if (!copy.IsInitialized()) {
    return errors::ResourceExhausted("Out of memory copying variable ", name_, " of shape ",
                                     tensor_.shape().DebugString(), " before updating it");
  }
  tensor_ = std::move(copy);
  return OkStatus();
}

Status CheckInitialized(const Var& var) {
  if (var.is_initialized()) return OkStatus();
  if (var.kind() == Var::Kind::kResource) {
    return errors::FailedPrecondition("Error while reading resource variable ", var.name(),
                                      " from Container: ", var.container(),
                                      ". This could mean that the variable was uninitialized.");
  }
  return errors::FailedPrecondition("Attempting to use uninitialized value ", var.name());
}

namespace {

StatusOr<std::shared_ptr<Var>> LookupVar(ResourceMgr* rm, const ResourceHandle& h,
                                         DataType dtype) {
  StatusOr<std::shared_ptr<Var>> var = rm->Lookup<Var>(h.container, h.name);
  if (absl::IsNotFound(var.status())) {
    return errors::FailedPrecondition(
        "Could not find variable ", h.name, ". This could mean that the variable has been "
        "deleted. In TF1, it can also mean the variable is uninitialized. Debug info: container=",
        h.container, ", status error message=", var.status().message());
  }
  TX_RETURN_IF_ERROR(var.status());
  if (dtype != DT_INVALID && (*var)->dtype() != dtype) {
    return errors::InvalidArgument("Trying to use variable ", h.name, " of type ",
                                   DataTypeString((*var)->dtype()), " as ",
                                   DataTypeString(dtype));
  }
  return var;
}

}  // namespace

StatusOr<std::shared_ptr<Var>> LookupVarFromInput(OpKernelContext* ctx, int i, DataType dtype) {
  TX_ASSIGN_OR_RETURN(HandleInput in, ResolveHandleInput(ctx, i));
  return LookupVar(in.mgr, *in.handle, dtype);
}

Status ReadRefInput(DeviceBase* device, const Tensor& handle, Tensor* value) {
  if (handle.dtype() != DT_RESOURCE || handle.dims() != 0) {
    return errors::Internal("A reference edge must carry a resource scalar, got ",
                            DataTypeString(handle.dtype()));
  }
  TX_ASSIGN_OR_RETURN(ResourceMgr * rm, GetResourceMgr(device));
  TX_ASSIGN_OR_RETURN(std::shared_ptr<Var> var,
                      LookupVar(rm, *handle.data<ResourceHandle>(), DT_INVALID));
  std::shared_lock<std::shared_mutex> l(*var->mu());
  TX_RETURN_IF_ERROR(CheckInitialized(*var));
  *value = *var->tensor();
  return OkStatus();
}

}  // namespace tensorflux
