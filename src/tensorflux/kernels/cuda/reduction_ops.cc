// GPU kernels of Sum, Mean, Prod, Max and Min for float and double (the math: reduce.cu; axes and
// output shape: kernels/shared/reduction_shape.h, as on the CPU). reduction_indices stays in host
// memory (a HostMemory arg, as in TF). Reducing only size-1 dims returns the input reshaped
// (shared buffer).
#include <memory>

#include "tensorflux/kernels/cuda/gpu_kernel_util.h"
#include "tensorflux/kernels/cuda/reduce_launch.h"
#include "tensorflux/kernels/shared/reduction_shape.h"

namespace tensorflux {
namespace gpu {

Status RunReduction(OpKernelContext* ctx, const OpKernel& k, ReduceKind kind, ElemType elem,
                    const Tensor& input, const std::vector<int64_t>& sizes,
                    const std::vector<bool>& reduced, Tensor* out) {
  std::unique_ptr<bool[]> flags(new bool[reduced.size()]);
  for (size_t i = 0; i < reduced.size(); ++i) flags[i] = reduced[i];
  ReducePlan plan;
  if (!MakeReducePlan(sizes.data(), flags.get(), static_cast<int>(sizes.size()), &plan)) {
    return errors::Unimplemented(k.type_string(), " node '", k.name(), "': the GPU kernel "
                                 "reduces at most ", kMaxReduceGroups, " groups of kept and of "
                                 "reduced dims, got input shape ", input.shape().DebugString());
  }
  Tensor scratch;
  const int64_t bytes = ReduceScratchBytes(plan, elem);
  if (bytes > 0) TX_RETURN_IF_ERROR(ctx->allocate_temp(DT_UINT8, TensorShape({bytes}), &scratch));
  TX_ASSIGN_OR_RETURN(CudaContext * gc, GpuContextOf(ctx));
  return LaunchStatus(k, LaunchReduce(kind, elem, input.raw_data(), out->raw_data(), plan,
                                      bytes > 0 ? scratch.raw_data() : nullptr,
                                      gc->compute_stream()));
}

namespace {

class GpuReductionOp : public OpKernel {
 public:
  GpuReductionOp(OpKernelConstruction* c, ReduceKind kind) : OpKernel(c), kind_(kind) {
    c->SetStatus(c->GetAttr("keep_dims", &keep_dims_));
    if (!ToElemType(c->input_types()[0], &elem_)) {
      c->SetStatus(errors::InvalidArgument(type_string(), ": no GPU kernel for ",
                                           DataTypeString(c->input_types()[0])));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    ReductionShape r;
    OP_REQUIRES_OK(ctx, ComputeReductionShape(*this, input.shape(), ctx->input(1), keep_dims_, &r));
    if (SetIdentityReduction(ctx, input, r)) return;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, r.out_shape, &out));
    if (out->NumElements() == 0) return;
    OP_REQUIRES_OK(ctx, RunReduction(ctx, *this, kind_, elem_, input, r.sizes, r.reduced, out));
  }

 private:
  const ReduceKind kind_;
  bool keep_dims_ = false;
  ElemType elem_ = ElemType::kFloat;
};

[[maybe_unused]] const bool kRegistered = [] {
  for (auto [op, kind] : {std::pair{"Sum", ReduceKind::kSum}, std::pair{"Mean", ReduceKind::kMean},
                          std::pair{"Prod", ReduceKind::kProd}, std::pair{"Max", ReduceKind::kMax},
                          std::pair{"Min", ReduceKind::kMin}}) {
    RegisterGpuKernel(op, "T", {DT_FLOAT, DT_DOUBLE},
                      [kind](OpKernelConstruction* c) { return new GpuReductionOp(c, kind); },
                      {"reduction_indices"});
  }
  return true;
}();

}  // namespace
}  // namespace gpu
}  // namespace tensorflux
