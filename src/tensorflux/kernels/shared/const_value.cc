#include "tensorflux/kernels/shared/const_value.h"

#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {

Status ReadConstValue(OpKernelConstruction* ctx, Tensor* value) {
  const std::string& name = ctx->def().name();
  Status s = ctx->GetAttr("value", value);
  if (!s.ok()) {
    return errors::InvalidArgument("Const node '", name, "' has a bad value: ", s.message());
  }
  if (value->dtype() != ctx->output_types()[0]) {
    return errors::InvalidArgument("Type mismatch between value (", DataTypeString(value->dtype()),
                                   ") and dtype (", DataTypeString(ctx->output_types()[0]),
                                   ") of Const node '", name, "'");
  }
  return OkStatus();
}

}  // namespace tensorflux
