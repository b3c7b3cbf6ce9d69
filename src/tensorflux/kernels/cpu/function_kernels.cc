// _Arg and _Retval: the feed and fetch nodes RewriteGraphForExecution adds. _Arg outputs argument
// `index` of the step's call frame, _Retval stores its input as return value `index`. Both are
// cheap and run inline on the executor's scheduling thread.
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

class ArgOp : public OpKernel {
 public:
  explicit ArgOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    Status s = ctx->GetAttr("T", &dtype_);
    if (s.ok()) s = ctx->GetAttr("index", &index_);
    ctx->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    CallFrameInterface* frame = ctx->call_frame();
    OP_REQUIRES(ctx, frame != nullptr,
                errors::Internal("_Arg ", name(), " run without a call frame"));
    const Tensor* v = nullptr;
    OP_REQUIRES_OK(ctx, frame->GetArg(static_cast<int>(index_), &v));
    OP_REQUIRES(ctx, v != nullptr && v->IsInitialized(),
                errors::InvalidArgument("Argument ", index_, " for '", name(), "' is not set"));
    OP_REQUIRES(ctx, v->dtype() == BaseType(dtype_),
                errors::InvalidArgument("Argument ", index_, " for '", name(), "' must be a ",
                                        DataTypeString(BaseType(dtype_)), " tensor, got ",
                                        DataTypeString(v->dtype())));
    ctx->set_output(0, *v);
  }

 private:
  DataType dtype_ = DT_INVALID;
  int64_t index_ = 0;
};

class RetvalOp : public OpKernel {
 public:
  explicit RetvalOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    ctx->SetStatus(ctx->GetAttr("index", &index_));
  }

  void Compute(OpKernelContext* ctx) override {
    CallFrameInterface* frame = ctx->call_frame();
    OP_REQUIRES(ctx, frame != nullptr,
                errors::Internal("_Retval ", name(), " run without a call frame"));
    OP_REQUIRES_OK(ctx, frame->SetRetval(static_cast<int>(index_), ctx->input(0)));
  }

 private:
  int64_t index_ = 0;
};

REGISTER_KERNEL_BUILDER(Name("_Arg").Device(DEVICE_CPU), ArgOp);
REGISTER_KERNEL_BUILDER(Name("_Retval").Device(DEVICE_CPU), RetvalOp);

}  // namespace
}  // namespace tensorflux
