// Var: the storage of one variable, shared by both of TensorFlow's variable kinds.
//
// - Resource variables (VarHandleOp + ReadVariableOp/AssignVariableOp/...): the handle names the
//   Var in the device's ResourceMgr; AssignVariableOp creates it on first assignment.
// - Reference variables (VariableV2/Variable + Assign/Identity/Apply*): the VariableV2 kernel
//   creates the (uninitialized) Var under (container, shared_name or the node name). In this
//   runtime a ref edge (dtype float_ref, ...) carries a DT_RESOURCE scalar naming that Var
//   instead of TF's (Tensor*, mutex*) pair: a kernel with a Ref(T) input resolves it like a
//   resource input (LookupVarFromInput), and the executor turns it into the variable's value,
//   read under the Var's lock when the consumer starts (ReadRefInput), for a non-ref consumer
//   (Identity, SaveV2, a fetch). So both kinds share one storage class and one set of update
//   functors (kernels/cpu/training_ops.cc).
//
// Concurrency: every access takes the Var's mutex (shared for reads, exclusive for updates;
// `use_locking=false` is accepted and still locks: an unlocked update would be a data race).
// Reads are snapshots: a read output shares the buffer, and an update first copies a buffer
// that anyone else still holds (CopyOnWrite), so a held read never changes (TF's resource-
// variable semantics; TF's ref variables alias instead, which TensorFlux does not reproduce).
#pragma once

#include <memory>
#include <shared_mutex>
#include <string>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/framework/resource_mgr.h"

namespace tensorflux {

class Var : public ResourceBase {
 public:
  static constexpr const char* kTypeName = "Var";

  // A resource variable (VarHandleOp) or a reference variable (VariableV2); the kind, container
  // and name only shape error messages. `declared` is the shape the creating op declared
  // (unknown rank when it declared none); validate_shape assignments must be compatible with it.
  enum class Kind { kResource, kRef };
  Var(DataType dtype, PartialTensorShape declared, Kind kind, std::string container,
      std::string name)
      : dtype_(dtype),
        declared_(std::move(declared)),
        kind_(kind),
        container_(std::move(container)),
        name_(std::move(name)) {}

  DataType dtype() const { return dtype_; }
  const PartialTensorShape& declared_shape() const { return declared_; }
  Kind kind() const { return kind_; }
  const std::string& container() const { return container_; }
  const std::string& name() const { return name_; }
  std::string DebugString() const override;

  // Guards tensor() and is_initialized().
  std::shared_mutex* mu() { return &mu_; }
  // The current value (valid when is_initialized()). Writers hold mu() exclusively.
  Tensor* tensor() { return &tensor_; }
  bool is_initialized() const { return initialized_; }
  void set_initialized(bool v) { initialized_ = v; }

  // mu() held exclusively: makes tensor() the only holder of its buffer (copying it when a read
  // still shares it), so it may be updated in place. RESOURCE_EXHAUSTED if the copy fails.
  Status CopyOnWrite();

 private:
  const DataType dtype_;
  const PartialTensorShape declared_;
  const Kind kind_;
  const std::string container_;
  const std::string name_;
  std::shared_mutex mu_;
  Tensor tensor_;
  bool initialized_ = false;
};

class OpKernelContext;
class DeviceBase;

// The Var named by input i (a DT_RESOURCE scalar: a resource input, or a ref input in this
// runtime). Missing: FAILED_PRECONDITION "Could not find variable NAME. This could mean that the
// variable has been deleted. In TF1, it can also mean the variable is uninitialized. ...".
// Another dtype than `dtype` (unless DT_INVALID): INVALID_ARGUMENT.
StatusOr<std::shared_ptr<Var>> LookupVarFromInput(OpKernelContext* ctx, int i,
                                                  DataType dtype = DT_INVALID);

// FAILED_PRECONDITION unless the Var holds a value, with TF's text: "Attempting to use
// uninitialized value NAME" for a reference variable, "Error while reading resource variable
// NAME from Container: C. This could mean that the variable was uninitialized." for a resource
// variable. Call with mu() held.
Status CheckInitialized(const Var& var);

// The executor's dereference of a ref edge for a non-ref consumer: the value of the Var that
// `handle` (a DT_RESOURCE scalar) names on `device`, read under its lock. FAILED_PRECONDITION
// when uninitialized (TF's "Attempting to use uninitialized value v").
Status ReadRefInput(DeviceBase* device, const Tensor& handle, Tensor* value);

}  // namespace tensorflux
