#include "tensorflux/framework/function.h"

namespace tensorflux {
namespace {
// Where a session keeps its runtime in the device's ResourceMgr.
constexpr const char* kContainer = "_tx_function_library";
constexpr const char* kName = "runtime";
}  // namespace

Status RegisterFunctionLibrary(ResourceMgr* rm, std::shared_ptr<FunctionLibraryRuntime> flr) {
  return rm->Create<FunctionLibraryRuntime>(kContainer, kName, std::move(flr));
}

StatusOr<std::shared_ptr<FunctionLibraryRuntime>> GetFunctionLibrary(OpKernelContext* ctx) {
  TX_ASSIGN_OR_RETURN(ResourceMgr * rm, GetResourceMgr(ctx));
  StatusOr<std::shared_ptr<FunctionLibraryRuntime>> flr =
      rm->Lookup<FunctionLibraryRuntime>(kContainer, kName);
  if (!flr.ok()) {
    return errors::FailedPrecondition("No function runtime on this device: ",
                                      flr.status().message());
  }
  return flr;
}

}  // namespace tensorflux
