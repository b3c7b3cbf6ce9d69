#include "tensorflux/data/captured_function.h"

#include "tensorflux/framework/node_def_util.h"

namespace tensorflux {

Status CapturedFunction::Instantiate(IteratorContext* ctx, const DataTypeVector& rets,
                                     FunctionInstance* out) const {
  if (ctx->function_library == nullptr) {
    return errors::FailedPrecondition("No function runtime to run ", name_);
  }
  out->flr = ctx->function_library;
  TX_ASSIGN_OR_RETURN(out->handle, out->flr->Instantiate(name_));
  if (out->flr->RetTypes(out->handle) != rets) {
    return errors::InvalidArgument("Function ", name_, " returns [",
                                   DataTypeVectorString(out->flr->RetTypes(out->handle)),
                                   "] but the dataset needs [", DataTypeVectorString(rets), "]");
  }
  return OkStatus();
}

Status CapturedFunction::Run(const FunctionInstance& f, std::vector<Tensor> element,
                             std::vector<Tensor>* rets) const {
  element.insert(element.end(), captured_.begin(), captured_.end());
  return f.flr->Run(f.handle, std::move(element), rets);
}

Status FunctionAttrs::Read(OpKernelConstruction* ctx, const char* attr) {
  NameAttrList f;
  TX_RETURN_IF_ERROR(ctx->GetAttr(attr, &f));
  func = f.name();
  DataTypeVector targs;
  TX_RETURN_IF_ERROR(ctx->GetAttr("Targuments", &targs));
  num_captured = static_cast<int>(targs.size());
  return OkStatus();
}

CapturedFunction FunctionAttrs::Capture(OpKernelContext* ctx) const {
  std::vector<Tensor> captured;
  for (int i = 0; i < num_captured; ++i) captured.push_back(ctx->input(1 + i));
  return CapturedFunction(func, std::move(captured));
}

Status ReadDeterministicAttr(OpKernelConstruction* ctx, bool* deterministic) {
  std::string det;
  TX_RETURN_IF_ERROR(ctx->GetAttr("deterministic", &det));
  if (det != "true" && det != "false" && det != "default") {
    return errors::InvalidArgument("deterministic must be 'true', 'false' or 'default', got '",
                                   det, "'");
  }
  *deterministic = det != "false";
  return OkStatus();
}

}  // namespace tensorflux
