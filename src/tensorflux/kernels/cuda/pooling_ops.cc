// GPU kernels of MaxPool, AvgPool, MaxPoolGrad and AvgPoolGrad (NHWC; float and double). Attrs
// and shape checks are the CPU kernels' (kernels/shared/pool_kernel.h, ops/pool_window.h); the
// math is pool.cu's own kernels rather than cuDNN's pooling, which pads symmetrically only and
// does not promise TF's choice among tied maxima (the first in the window). AvgPoolGrad's
// orig_input_shape stays in host memory.
#include "tensorflux/kernels/cuda/gpu_kernel_util.h"
#include "tensorflux/kernels/cuda/pool_launch.h"
#include "tensorflux/kernels/shared/pool_kernel.h"

namespace tensorflux {
namespace gpu {
namespace {

PoolGeometry GeometryOf(const PoolWindow& w) {
  PoolGeometry g;
  g.batch = w.batch;
  g.in_rows = w.in_rows;
  g.in_cols = w.in_cols;
  g.depth = w.depth;
  g.k_rows = w.k_rows;
  g.k_cols = w.k_cols;
  g.s_rows = w.s_rows;
  g.s_cols = w.s_cols;
  g.out_rows = w.out_rows;
  g.out_cols = w.out_cols;
  g.pad_top = w.pad_top;
  g.pad_left = w.pad_left;
  return g;
}

enum class PoolOpKind { kMaxPool, kAvgPool, kMaxPoolGrad, kAvgPoolGrad };

class GpuPoolOp : public PoolKernelBase {
 public:
  GpuPoolOp(OpKernelConstruction* c, PoolOpKind kind) : PoolKernelBase(c), kind_(kind) {
    DataType dt = DT_INVALID;
    c->SetStatus(c->GetAttr("T", &dt));
    if (!ToElemType(dt, &elem_) || (dt != DT_FLOAT && dt != DT_DOUBLE)) {
      c->SetStatus(errors::InvalidArgument(type_string(), ": no GPU kernel for ",
                                           DataTypeString(dt)));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    PoolWindow w;
    TensorShape out_shape;
    const void* in = nullptr;
    const void* grad = nullptr;
    switch (kind_) {
      case PoolOpKind::kMaxPool:
      case PoolOpKind::kAvgPool:
        OP_REQUIRES_OK(ctx, Window(ctx->input(0).shape(), &w));
        out_shape = PooledShape(w);
        in = ctx->input(0).raw_data();
        break;
      case PoolOpKind::kMaxPoolGrad:
        OP_REQUIRES_OK(ctx, MaxPoolGradWindow(ctx, &w));
        out_shape = ctx->input(0).shape();
        in = ctx->input(0).raw_data();
        grad = ctx->input(2).raw_data();
        break;
      case PoolOpKind::kAvgPoolGrad:
        OP_REQUIRES_OK(ctx, AvgPoolGradWindow(ctx, &out_shape, &w));
        grad = ctx->input(1).raw_data();
        break;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    auto gc = GpuContextOf(ctx);
    OP_REQUIRES_OK(ctx, gc.status());
    const bool max = kind_ == PoolOpKind::kMaxPool || kind_ == PoolOpKind::kMaxPoolGrad;
    const PoolGeometry g = GeometryOf(w);
    cudaError_t e;
    if (kind_ == PoolOpKind::kMaxPool || kind_ == PoolOpKind::kAvgPool) {
      e = LaunchPoolForward(elem_, max, g, in, out->raw_data(), (*gc)->compute_stream());
    } else {
      // No window at all (an empty pooled output): every gradient is zero; the kernel's
      // covering ranges are then empty and it writes zeros.
      e = LaunchPoolBackward(elem_, max, g, in, grad, out->raw_data(), (*gc)->compute_stream());
    }
    OP_REQUIRES_OK(ctx, LaunchStatus(*this, e));
  }

 private:
  const PoolOpKind kind_;
  ElemType elem_ = ElemType::kFloat;
};

[[maybe_unused]] const bool kRegistered = [] {
  for (auto [op, kind] : {std::pair{"MaxPool", PoolOpKind::kMaxPool},
                          std::pair{"AvgPool", PoolOpKind::kAvgPool},
                          std::pair{"MaxPoolGrad", PoolOpKind::kMaxPoolGrad},
                          std::pair{"AvgPoolGrad", PoolOpKind::kAvgPoolGrad}}) {
    RegisterGpuKernel(op, "T", {DT_FLOAT, DT_DOUBLE},
                      [kind](OpKernelConstruction* c) { return new GpuPoolOp(c, kind); },
                      kind == PoolOpKind::kAvgPoolGrad
                          ? std::initializer_list<const char*>{"orig_input_shape"}
                          : std::initializer_list<const char*>{});
  }
  return true;
}();

}  // namespace
}  // namespace gpu
}  // namespace tensorflux
