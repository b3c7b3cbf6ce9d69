// PyFunc kernel (ops/script_ops.cc): hands the inputs to the Python callback installed by the
// extension (py_func.h), checks what comes back against Tout and sets the outputs. Expensive: the
// executor runs it on the inter-op pool, where it waits for the GIL.
#include "tensorflux/kernels/cpu/py_func.h"

#include <memory>
#include <mutex>
#include <utility>

#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

std::mutex& CallbackMu() {
  static std::mutex mu;
  return mu;
}
std::shared_ptr<const PyFuncCallback>& Callback() {
  static std::shared_ptr<const PyFuncCallback> cb;
  return cb;
}

class PyFuncOp : public OpKernel {
 public:
  explicit PyFuncOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("token", &token_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("Tout", &tout_));
  }

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<const PyFuncCallback> cb;
    {
      std::lock_guard<std::mutex> l(CallbackMu());
      cb = Callback();
    }
    OP_REQUIRES(ctx, cb != nullptr,
                errors::FailedPrecondition("PyFunc '", token_,
                                           "' needs the tensorflux Python package (no Python "
                                           "callback is installed in this process)"));
    std::vector<Tensor> inputs(ctx->num_inputs());
    for (int i = 0; i < ctx->num_inputs(); ++i) inputs[i] = ctx->input(i);
    std::vector<Tensor> outputs;
    OP_REQUIRES_OK(ctx, (*cb)(token_, inputs, tout_, &outputs));
    OP_REQUIRES(ctx, outputs.size() == tout_.size(),
                errors::InvalidArgument("PyFunc '", token_, "' returned ", outputs.size(),
                                        " values, Tout has ", tout_.size()));
    for (size_t i = 0; i < outputs.size(); ++i) {
      OP_REQUIRES(ctx, outputs[i].dtype() == tout_[i],
                  errors::InvalidArgument("PyFunc '", token_, "' value ", i, " has dtype ",
                                          DataTypeString(outputs[i].dtype()), ", Tout says ",
                                          DataTypeString(tout_[i])));
      ctx->set_output(static_cast<int>(i), std::move(outputs[i]));
    }
  }

 private:
  std::string token_;
  DataTypeVector tout_;
};

REGISTER_KERNEL_BUILDER(Name("PyFunc").Device(DEVICE_CPU), PyFuncOp);

}  // namespace

void SetPyFuncCallback(PyFuncCallback callback) {
  auto cb = callback ? std::make_shared<const PyFuncCallback>(std::move(callback)) : nullptr;
  std::lock_guard<std::mutex> l(CallbackMu());
  Callback() = std::move(cb);
}

}  // namespace tensorflux
