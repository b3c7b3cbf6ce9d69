// CheckNumerics on CPU (ops/debug_ops.cc): forwards its input after scanning it.
#include "tensorflux/framework/numerics.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

class CheckNumericsOp : public OpKernel {
 public:
  explicit CheckNumericsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("message", &message_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckNumerics(ctx->input(0), message_));
    ctx->set_output(0, ctx->release_input(0));
  }

 private:
  std::string message_;
};
REGISTER_KERNEL_BUILDER(Name("CheckNumerics").Device(DEVICE_CPU), CheckNumericsOp);

}  // namespace
}  // namespace tensorflux
