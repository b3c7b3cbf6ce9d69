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
// All but AssignUpdateOp are device-independent and live in kernels/shared/variable_kernels.h
// (the GPU registers them too); this file registers them for the CPU.
#include <mutex>
#include <shared_mutex>

#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/framework/resource_var.h"
#include "tensorflux/kernels/shared/variable_kernels.h"

namespace tensorflux {
namespace {

// Input 0 of a ref-form kernel is forwarded as its output 0 (the variable itself).
void ForwardRef(OpKernelContext* ctx) {
  if (ctx->num_outputs() > 0) ctx->set_output(0, ctx->input(0));
}

// The device-independent kernels (kernels/shared/variable_kernels.h) on the CPU.
StatusOr<Tensor> CpuCopy(OpKernelContext*, const Tensor& t) {
  Tensor copy = t.DeepCopy();
  if (!copy.IsInitialized()) return errors::ResourceExhausted("out of memory");
  return copy;
}
OpKernel* NewCpuAssignOp(OpKernelConstruction* ctx) { return NewAssignOp(ctx, CpuCopy); }

[[maybe_unused]] const bool kRegistered = [] {
  auto reg = [](const char* op, KernelFactory f) {
    KernelRegistry::Global()->Register(KernelDefBuilder(op).Device(DEVICE_CPU), std::move(f));
  };
  for (const char* op : {"VarHandleOp", "VariableV2", "Variable"}) reg(op, NewVariableOp);
  reg("ReadVariableOp", NewReadVariableOp);
  for (const char* op : {"AssignVariableOp", "Assign"}) reg(op, NewCpuAssignOp);
  for (const char* op : {"VarIsInitializedOp", "IsVariableInitialized"}) reg(op, NewIsInitializedOp);
  reg("DestroyResourceOp", NewDestroyResourceOp);
  return true;
}();



// Arithmetic of half and bfloat16 happens in float.
template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// AssignAddVariableOp / AssignSubVariableOp (resource) and AssignAdd / AssignSub (ref).
template <typename T, bool kSub>
class AssignUpdateOp : public OpKernel {
 public:
  explicit AssignUpdateOp(OpKernelConstruction* ctx)
      : OpKernel(ctx), ref_(IsRefType(ctx->input_types()[0])) {}

  void Compute(OpKernelContext* ctx) override {
    auto var = LookupVarFromInput(ctx, 0, DataTypeToEnum<T>::value);
    // As TF: an update through a resource handle whose variable does not exist (never
    // assigned, or destroyed) is NOT_FOUND; ReadVariableOp and the ref forms (whose variable
    // exists, uninitialized) say FAILED_PRECONDITION.
    if (!ref_ && absl::IsFailedPrecondition(var.status())) {
      var = errors::NotFound(var.status().message());
    }
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

 private:
  const bool ref_;
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



}  // namespace
}  // namespace tensorflux
