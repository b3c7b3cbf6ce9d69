// CPU kernels of the variable ops, resource (ops/resource_variable_ops.cc) and reference
// (ops/state_ops.cc) forms together: both name a Var through a DT_RESOURCE scalar (a ref edge
// carries one too; framework/resource_var.h), so each pair shares one kernel class:
//
//   VarHandleOp, VariableV2, Variable     VariableOp      outputs the Var's handle (VariableV2
//                                                         creates the Var; VarHandleOp does not:
//                                                         AssignVariableOp does, as in TF)
//   AssignVariableOp, Assign              AssignOp        sets the value (aliasing a value no one
//                                                         else holds, copying otherwise)
//   AssignAdd/SubVariableOp, AssignAdd/Sub  AssignUpdateOp  in place after copy-on-write
//   VarIsInitializedOp, IsVariableInitialized  IsInitializedOp
//   ReadVariableOp, DestroyResourceOp     (resource form only)
#include <mutex>
#include <shared_mutex>

#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/framework/resource_var.h"

namespace tensorflux {
namespace {

// VarHandleOp (output: resource) and VariableV2/Variable (output: Ref(dtype)).
class VariableOp : public OpKernel {
 public:
  explicit VariableOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("container", &container_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shared_name", &name_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shape", &shape_));
    if (name_.empty()) name_ = ctx->def().name();
    kind_ = IsRefType(ctx->output_types()[0]) ? Var::Kind::kRef : Var::Kind::kResource;
  }

  void Compute(OpKernelContext* ctx) override {
    const ResourceHandle h = MakeResourceHandle<Var>(ctx, container_, name_);
    if (kind_ == Var::Kind::kResource) {
      ctx->set_output(0, Tensor::Scalar<ResourceHandle>(h));
      return;
    }
    auto rm = GetResourceMgr(ctx);
    OP_REQUIRES_OK(ctx, rm.status());
    auto var = (*rm)->LookupOrCreate<Var>(h.container, h.name, [&] {
      return StatusOr<std::shared_ptr<Var>>(
          std::make_shared<Var>(dtype_, shape_, kind_, h.container, h.name));
    });
    OP_REQUIRES_OK(ctx, var.status());
    OP_REQUIRES(ctx, (*var)->dtype() == dtype_,
                errors::InvalidArgument("Variable ", h.container, "/", h.name,
                                        " exists with dtype ", DataTypeString((*var)->dtype()),
                                        ", this node declares ", DataTypeString(dtype_)));
    ctx->set_output(0, Tensor::Scalar<ResourceHandle>(h));
  }

 private:
  std::string container_, name_;
  DataType dtype_ = DT_INVALID;
  PartialTensorShape shape_;
  Var::Kind kind_ = Var::Kind::kResource;
};
REGISTER_KERNEL_BUILDER(Name("VarHandleOp").Device(DEVICE_CPU), VariableOp);
REGISTER_KERNEL_BUILDER(Name("VariableV2").Device(DEVICE_CPU), VariableOp);
REGISTER_KERNEL_BUILDER(Name("Variable").Device(DEVICE_CPU), VariableOp);

// Input 0 of a ref-form kernel is forwarded as its output 0 (the variable itself).
void ForwardRef(OpKernelContext* ctx) {
  if (ctx->num_outputs() > 0) ctx->set_output(0, ctx->input(0));
}

class ReadVariableOp : public OpKernel {
 public:
  explicit ReadVariableOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
  }
  void Compute(OpKernelContext* ctx) override {
    auto h = HandleFromInput(ctx, 0);
    OP_REQUIRES_OK(ctx, h.status());
    auto var = LookupVarFromInput(ctx, 0, dtype_);
    if (absl::IsFailedPrecondition(var.status())) {  // no such variable: TF's wording for reads
      OP_REQUIRES_OK(
          ctx, errors::FailedPrecondition(
                   "Error while reading resource variable ", (*h)->name,
                   " from Container: ", (*h)->container,
                   ". This could mean that the variable was uninitialized. Not found: "
                   "Resource ",
                   (*h)->container, "/", (*h)->name, "/", Var::kTypeName, " does not exist."));
    }
    OP_REQUIRES_OK(ctx, var.status());
    std::shared_lock<std::shared_mutex> l(*(*var)->mu());
    OP_REQUIRES_OK(ctx, CheckInitialized(**var));
    ctx->set_output(0, *(*var)->tensor());
  }

 private:
  DataType dtype_ = DT_INVALID;
};
REGISTER_KERNEL_BUILDER(Name("ReadVariableOp").Device(DEVICE_CPU), ReadVariableOp);

// AssignVariableOp (resource, value) and Assign (ref, value) -> ref.
class AssignOp : public OpKernel {
 public:
  explicit AssignOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    ref_ = IsRefType(ctx->input_types()[0]);
    dtype_ = BaseType(ctx->input_types()[1]);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("validate_shape", &validate_shape_));
  }

  void Compute(OpKernelContext* ctx) override {
    StatusOr<std::shared_ptr<Var>> var = ref_ ? LookupVarFromInput(ctx, 0) : LookupOrCreate(ctx);
    OP_REQUIRES_OK(ctx, var.status());
    Var* v = var->get();
    Tensor value = ctx->release_input(1);
    std::unique_lock<std::shared_mutex> l(*v->mu());
    OP_REQUIRES(ctx, v->dtype() == dtype_,
                errors::InvalidArgument("Trying to assign variable ", v->name(),
                                        " with wrong dtype. Expected ", DataTypeString(v->dtype()),
                                        " got ", DataTypeString(dtype_)));
    if (validate_shape_) {
      const PartialTensorShape& declared = v->declared_shape();
      const bool matches_current = !v->is_initialized() || v->tensor()->shape() == value.shape();
      OP_REQUIRES(
          ctx, matches_current && declared.IsCompatibleWith(value.shape()),
          errors::InvalidArgument(
              ref_ ? "Assign requires shapes of both tensors to match. lhs shape= "
                   : "Trying to assign to variable with tensor with wrong shape. "
                     "Expected ",
              v->is_initialized() ? v->tensor()->shape().DebugString() : declared.DebugString(),
              ref_ ? " rhs shape= " : " got ", value.shape().DebugString(), " (variable ",
              v->name(), ")"));
    }
    if (value.RefCountIsOne() || value.NumElements() == 0) {
      *v->tensor() = std::move(value);  // nobody else holds it: the variable takes the buffer
    } else {
      Tensor copy = value.DeepCopy();
      OP_REQUIRES(ctx, copy.IsInitialized(),
                  errors::ResourceExhausted("Out of memory assigning ", value.shape().DebugString(),
                                            " to variable ", v->name()));
      *v->tensor() = std::move(copy);
    }
    v->set_initialized(true);
    l.unlock();
    ForwardRef(ctx);
  }

 private:
  // AssignVariableOp creates the variable when its handle names none (TF's rule).
  StatusOr<std::shared_ptr<Var>> LookupOrCreate(OpKernelContext* ctx) {
    TX_ASSIGN_OR_RETURN(HandleInput in, ResolveHandleInput(ctx, 0));
    const ResourceHandle* h = in.handle;
    return in.mgr->LookupOrCreate<Var>(h->container, h->name, [&] {
      return StatusOr<std::shared_ptr<Var>>(std::make_shared<Var>(
          dtype_, PartialTensorShape::UnknownRank(), Var::Kind::kResource, h->container, h->name));
    });
  }

  bool ref_ = false;
  bool validate_shape_ = false;
  DataType dtype_ = DT_INVALID;
};
REGISTER_KERNEL_BUILDER(Name("AssignVariableOp").Device(DEVICE_CPU), AssignOp);
REGISTER_KERNEL_BUILDER(Name("Assign").Device(DEVICE_CPU), AssignOp);

// Arithmetic of half and bfloat16 happens in float.
template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// AssignAddVariableOp / AssignSubVariableOp (resource) and AssignAdd / AssignSub (ref).
template <typename T, bool kSub>
class AssignUpdateOp : public OpKernel {
 public:
  explicit AssignUpdateOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    auto var = LookupVarFromInput(ctx, 0, DataTypeToEnum<T>::value);
    OP_REQUIRES_OK(ctx, var.status());
    Var* v = var->get();
    const Tensor& value = ctx->input(1);
    {
      std::unique_lock<std::shared_mutex> l(*v->mu());
      OP_REQUIRES_OK(ctx, CheckInitialized(*v));
      Tensor* t = v->tensor();
      OP_REQUIRES(ctx, t->shape() == value.shape(),
                  errors::InvalidArgument("Cannot update variable ", v->name(), " with shape ",
                                          t->shape().DebugString(), " using a Tensor with shape ",
                                          value.shape().DebugString(), ", shapes must be equal."));
      OP_REQUIRES_OK(ctx, v->CopyOnWrite());
      T* dst = t->data<T>();
      const T* src = value.data<T>();
      const int64_t n = t->NumElements();
      for (int64_t i = 0; i < n; ++i) {
        const Acc<T> a = static_cast<Acc<T>>(dst[i]), b = static_cast<Acc<T>>(src[i]);
        dst[i] = static_cast<T>(kSub ? a - b : a + b);
      }
    }
    ForwardRef(ctx);
  }
};

#define TX_REGISTER_ASSIGN_UPDATE(T)                                                   \
  REGISTER_KERNEL_BUILDER(                                                             \
      Name("AssignAddVariableOp").Device(DEVICE_CPU).TypeConstraint<T>("dtype"),       \
      AssignUpdateOp<T, false>);                                                       \
  REGISTER_KERNEL_BUILDER(                                                             \
      Name("AssignSubVariableOp").Device(DEVICE_CPU).TypeConstraint<T>("dtype"),       \
      AssignUpdateOp<T, true>);                                                        \
  REGISTER_KERNEL_BUILDER(Name("AssignAdd").Device(DEVICE_CPU).TypeConstraint<T>("T"), \
                          AssignUpdateOp<T, false>);                                   \
  REGISTER_KERNEL_BUILDER(Name("AssignSub").Device(DEVICE_CPU).TypeConstraint<T>("T"), \
                          AssignUpdateOp<T, true>);
TX_REGISTER_ASSIGN_UPDATE(float)
TX_REGISTER_ASSIGN_UPDATE(double)
TX_REGISTER_ASSIGN_UPDATE(Half)
TX_REGISTER_ASSIGN_UPDATE(BFloat16)
TX_REGISTER_ASSIGN_UPDATE(int32_t)
TX_REGISTER_ASSIGN_UPDATE(int64_t)
#undef TX_REGISTER_ASSIGN_UPDATE

// VarIsInitializedOp (false when the handle names no variable) and IsVariableInitialized.
class IsInitializedOp : public OpKernel {
 public:
  explicit IsInitializedOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    auto in = ResolveHandleInput(ctx, 0);
    OP_REQUIRES_OK(ctx, in.status());
    auto var = in->mgr->Lookup<Var>(in->handle->container, in->handle->name);
    bool initialized = false;
    if (var.ok()) {
      std::shared_lock<std::shared_mutex> l(*(*var)->mu());
      initialized = (*var)->is_initialized();
    } else {
      OP_REQUIRES(ctx, absl::IsNotFound(var.status()), var.status());
    }
    ctx->set_output(0, Tensor::Scalar<bool>(initialized));
  }
};
REGISTER_KERNEL_BUILDER(Name("VarIsInitializedOp").Device(DEVICE_CPU), IsInitializedOp);
REGISTER_KERNEL_BUILDER(Name("IsVariableInitialized").Device(DEVICE_CPU), IsInitializedOp);

class DestroyResourceOp : public OpKernel {
 public:
  explicit DestroyResourceOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("ignore_lookup_error", &ignore_lookup_error_));
  }
  void Compute(OpKernelContext* ctx) override {
    auto in = ResolveHandleInput(ctx, 0);
    OP_REQUIRES_OK(ctx, in.status());
    Status s = in->mgr->Delete(*in->handle);
    if (ignore_lookup_error_ && absl::IsNotFound(s)) return;
    OP_REQUIRES_OK(ctx, s);
  }

 private:
  bool ignore_lookup_error_ = true;
};
REGISTER_KERNEL_BUILDER(Name("DestroyResourceOp").Device(DEVICE_CPU), DestroyResourceOp);

}  // namespace
}  // namespace tensorflux
