// StringJoin's CPU kernel (ops/string_ops.cc).
#include <string>

#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

class StringJoinOp : public OpKernel {
 public:
  explicit StringJoinOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("separator", &separator_));
  }

  void Compute(OpKernelContext* ctx) override {
    // The output shape is the (single) shape of the non-scalar inputs; scalars repeat.
    TensorShape shape;
    bool found = false;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& in = ctx->input(i);
      if (in.dims() == 0) continue;
      OP_REQUIRES(ctx, !found || in.shape() == shape,
                  errors::InvalidArgument("StringJoin: input ", i, " has shape ",
                                          in.shape().DebugString(), " but an earlier input has ",
                                          shape.DebugString(), "; inputs must be scalars or of "
                                          "one shape"));
      shape = in.shape();
      found = true;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    auto result = out->flat<std::string>();
    for (int64_t j = 0; j < out->NumElements(); ++j) {
      std::string& s = result[j];
      s.clear();
      for (int i = 0; i < ctx->num_inputs(); ++i) {
        const Tensor& in = ctx->input(i);
        if (i > 0) s += separator_;
        s += in.flat<std::string>()[in.dims() == 0 ? 0 : j];
      }
    }
  }

 private:
  std::string separator_;
};
REGISTER_KERNEL_BUILDER(Name("StringJoin").Device(DEVICE_CPU), StringJoinOp);

}  // namespace
}  // namespace tensorflux
