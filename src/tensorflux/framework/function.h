// FunctionLibraryRuntime: how a kernel runs a function of the graph's library (a FunctionDef,
// TF's format: proto/tensorflux/function.proto), e.g. the `f` of MapDataset. The interface
// lives here so kernels never include runtime/; runtime/function_runtime.h implements it.
// A session registers its runtime in its device's ResourceMgr (RegisterFunctionLibrary) and
// kernels reach it with GetFunctionLibrary(ctx), so no kernel-context field is needed.
//
// Instantiate(name) turns the FunctionDef into a graph (an _Arg node per input arg, a _Retval
// per output arg) and an executor, once per name; Run calls it with one tensor per input arg
// and returns one per output arg, running every node on the calling thread (so callers get
// parallelism by calling Run from several threads; Run is thread-safe). Errors from the body
// name the body's node ("{{node add}} (op AddV2): ..."). A name that is not in the library may
// name a registered C++ function instead (framework/cc_function.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/types.h"
#include "tensorflux/framework/resource_mgr.h"

namespace tensorflux {

class FunctionDef;  // tensorflux/function.pb.h

class FunctionLibraryRuntime : public ResourceBase {
 public:
  using Handle = int64_t;
  static constexpr const char* kTypeName = "FunctionLibraryRuntime";

  std::string DebugString() const override { return "FunctionLibraryRuntime"; }

  // NOT_FOUND when the library has no function `name`; INVALID_ARGUMENT (naming the function)
  // when its body does not form a valid graph. The same name gives the same handle.
  virtual StatusOr<Handle> Instantiate(const std::string& name) = 0;
  // The dtypes of the function's input / output args.
  virtual const DataTypeVector& ArgTypes(Handle h) const = 0;
  virtual const DataTypeVector& RetTypes(Handle h) const = 0;
  // INVALID_ARGUMENT when the args do not match ArgTypes; the body's errors as they come.
  virtual Status Run(Handle h, std::vector<Tensor> args, std::vector<Tensor>* rets) = 0;
  // A copy of the library's FunctionDef `name` into *fdef (for rewrites that inspect a body,
  // e.g. map vectorization); NOT_FOUND when the library has none.
  virtual Status GetFunctionDef(const std::string& name, FunctionDef* fdef) const {
    return errors::Unimplemented("this function runtime does not expose FunctionDefs");
  }
};

// Stores `flr` as the function runtime of the device that owns `rm` (ALREADY_EXISTS when one is
// registered).
Status RegisterFunctionLibrary(ResourceMgr* rm, std::shared_ptr<FunctionLibraryRuntime> flr);
// The runtime registered for the kernel's device; FAILED_PRECONDITION when there is none (a
// kernel run outside a session).
StatusOr<std::shared_ptr<FunctionLibraryRuntime>> GetFunctionLibrary(OpKernelContext* ctx);

}  // namespace tensorflux
