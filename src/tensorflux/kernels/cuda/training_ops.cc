// GPU kernels of the resource optimizer updates: ResourceApplyGradientDescent, -Momentum, -Adam,
// -RMSProp, -CenteredRMSProp, -Adagrad for float and double (the update rules: training.cu).
// Variable lookup, locking and the shape checks are the CPU kernels' (kernels/shared/
// apply_vars.h). The variables' values must be GPU tensors (made by the GPU variable kernels,
// resource_ops.cc); a buffer a read still shares is copied on the GPU first (copy-on-write, as
// Var::CopyOnWrite on the CPU). The scalars stay in GPU memory and the kernel reads them there.
#include <string>
#include <vector>

#include "tensorflux/kernels/cuda/gpu_kernel_util.h"
#include "tensorflux/kernels/cuda/training_launch.h"
#include "tensorflux/kernels/shared/apply_vars.h"

namespace tensorflux {
namespace gpu {
namespace {

struct ApplyEntry {
  const char* op;
  ApplyKind kind;
  int vars, others, grad;              // as the CPU functors' kVars, kOthers, kGrad
  const char* var_names[4];            // the resource inputs (HostMemory)
};
constexpr ApplyEntry kApplyOps[] = {
    {"ResourceApplyGradientDescent", ApplyKind::kGradientDescent, 1, 2, 2, {"var"}},
    {"ResourceApplyMomentum", ApplyKind::kMomentum, 2, 3, 3, {"var", "accum"}},
    {"ResourceApplyAdam", ApplyKind::kAdam, 3, 7, 9, {"var", "m", "v"}},
    {"ResourceApplyRMSProp", ApplyKind::kRMSProp, 3, 5, 7, {"var", "ms", "mom"}},
    {"ResourceApplyCenteredRMSProp", ApplyKind::kCenteredRMSProp, 4, 5, 8,
     {"var", "mg", "ms", "mom"}},
    {"ResourceApplyAdagrad", ApplyKind::kAdagrad, 2, 2, 3, {"var", "accum"}},
};

// Makes v's buffer private (a GPU copy when a read still shares it). v locked exclusively.
Status GpuCopyOnWrite(OpKernelContext* ctx, CudaContext* gc, Var* v) {
  Tensor* t = v->tensor();
  if (!t->IsInitialized() || t->RefCountIsOne() || t->NumElements() == 0) return OkStatus();
  TX_ASSIGN_OR_RETURN(Tensor copy,
                      Tensor::Allocate(t->dtype(), t->shape(), ctx->device()->GetAllocator()));
  TX_RETURN_IF_ERROR(gc->CopyDeviceToDevice(t->raw_data(), copy.raw_data(), t->TotalBytes()));
  *t = std::move(copy);
  return OkStatus();
}

class GpuApplyOp : public OpKernel {
 public:
  GpuApplyOp(OpKernelConstruction* c, const ApplyEntry& e) : OpKernel(c), e_(e) {
    for (const auto& arg : c->op_def().input_arg()) names_.push_back(arg.name());
    if (c->HasAttr("use_nesterov")) c->SetStatus(c->GetAttr("use_nesterov", &nesterov_));
    if (c->HasAttr("update_slots")) c->SetStatus(c->GetAttr("update_slots", &update_slots_));
    c->SetStatus(c->GetAttr("T", &dtype_));
    if (!ToElemType(dtype_, &elem_) || (dtype_ != DT_FLOAT && dtype_ != DT_DOUBLE)) {
      c->SetStatus(errors::InvalidArgument(type_string(), ": no GPU kernel for ",
                                           DataTypeString(dtype_)));
    }
    if (static_cast<int>(names_.size()) != e.vars + e.others) {
      c->SetStatus(errors::Internal(type_string(), ": kernel expects ", e.vars + e.others,
                                    " inputs"));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    auto gc = GpuContextOf(ctx);
    OP_REQUIRES_OK(ctx, gc.status());
    ApplyVars vars;
    OP_REQUIRES_OK(ctx, vars.Acquire(ctx, names_, e_.vars, e_.others, e_.grad, dtype_));
    for (Var* v : vars.distinct()) OP_REQUIRES_OK(ctx, GpuCopyOnWrite(ctx, *gc, v));
    ApplyArgs a;
    a.n = vars.tensor(0)->NumElements();
    if (a.n == 0) return;
    for (int k = 0; k < e_.vars; ++k) a.vars[k] = vars.tensor(k)->raw_data();
    for (int i = e_.vars, j = 0; i < e_.vars + e_.others; ++i) {
      if (i == e_.grad) continue;
      a.scalars[j++] = ctx->input(i).raw_data();
    }
    a.grad = ctx->input(e_.grad).raw_data();
    a.nesterov = nesterov_;
    a.update_slots = update_slots_;
    // The locks (held by `vars`) cover the launch: the next update of these variables is queued
    // after this one on the same stream.
    OP_REQUIRES_OK(ctx, LaunchStatus(*this, LaunchApply(e_.kind, elem_, a,
                                                        (*gc)->compute_stream())));
  }

 private:
  const ApplyEntry e_;
  std::vector<std::string> names_;
  bool nesterov_ = false, update_slots_ = true;
  DataType dtype_ = DT_INVALID;
  ElemType elem_ = ElemType::kFloat;
};

[[maybe_unused]] const bool kRegistered = [] {
  for (const ApplyEntry& e : kApplyOps) {
    for (DataType dt : {DT_FLOAT, DT_DOUBLE}) {
      KernelDefBuilder b(e.op);
      b.Device(DEVICE_GPU).TypeConstraint("T", dt);
      for (int k = 0; k < e.vars; ++k) b.HostMemory(e.var_names[k]);
      KernelRegistry::Global()->Register(
          b, [e](OpKernelConstruction* c) { return new GpuApplyOp(c, e); });
    }
  }
  return true;
}();

}  // namespace
}  // namespace gpu
}  // namespace tensorflux
