// kernels/shared/variable_kernels.h.
#include "tensorflux/kernels/shared/variable_kernels.h"

#include <mutex>
#include <shared_mutex>

#include "absl/strings/str_cat.h"
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
// AssignVariableOp (resource, value) and Assign (ref, value) -> ref.
class AssignOp : public OpKernel {
 public:
  AssignOp(OpKernelConstruction* ctx, TensorCopier copy) : OpKernel(ctx), copy_(std::move(copy)) {
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
      auto copy = copy_(ctx, value);
      OP_REQUIRES(ctx, copy.ok(),
                  Status(copy.status().code(),
                         absl::StrCat("Assigning ", value.shape().DebugString(), " to variable ",
                                      v->name(), ": ", copy.status().message())));
      *v->tensor() = *std::move(copy);
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

  TensorCopier copy_;
  bool ref_ = false;
  bool validate_shape_ = false;
  DataType dtype_ = DT_INVALID;
};
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
}  // namespace

OpKernel* NewVariableOp(OpKernelConstruction* ctx) { return new VariableOp(ctx); }
OpKernel* NewReadVariableOp(OpKernelConstruction* ctx) { return new ReadVariableOp(ctx); }
OpKernel* NewAssignOp(OpKernelConstruction* ctx, TensorCopier copy) {
  return new AssignOp(ctx, std::move(copy));
}
OpKernel* NewIsInitializedOp(OpKernelConstruction* ctx) { return new IsInitializedOp(ctx); }
OpKernel* NewDestroyResourceOp(OpKernelConstruction* ctx) { return new DestroyResourceOp(ctx); }

}  // namespace tensorflux
