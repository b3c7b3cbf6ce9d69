// The FunctionLibraryRuntime of a session (framework/function.h): instantiates FunctionDefs
// of the session's library into graphs run by an Executor, cached per function name.
//
// Body format (TF's FunctionDef): node_def inputs are "arg_name" (an input arg),
// "node:out_arg:i" (output i of the node's output arg `out_arg`) or "^node" (control); `ret`
// maps each output arg to such a tensor name. Instantiation writes a GraphDef with an _Arg
// (index i) per input arg, the body nodes with inputs as "node:k" (k = flat output index from
// the node's OpDef), and a _Retval (index i) per output arg, then imports it (so body errors
// are the importer's, prefixed with the function's name) and builds an Executor for `device`.
// Functions with attrs in their signature (polymorphic functions) are UNIMPLEMENTED.
// A name that is not in the library but names a C++ function (framework/cc_function.h)
// instantiates that function: Run then calls it on the caller's thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tensorflux/framework/cc_function.h"
#include "tensorflux/framework/device_base.h"
#include "tensorflux/framework/function.h"
#include "tensorflux/function.pb.h"
#include "tensorflux/runtime/executor.h"

namespace tensorflux {

class FunctionRuntime : public FunctionLibraryRuntime {
 public:
  // `device` must outlive the runtime.
  explicit FunctionRuntime(DeviceBase* device);
  ~FunctionRuntime() override;

  // Adds the library's functions (a name already present keeps its first definition).
  void AddLibrary(const FunctionDefLibrary& library);

  StatusOr<Handle> Instantiate(const std::string& name) override;
  const DataTypeVector& ArgTypes(Handle h) const override;
  const DataTypeVector& RetTypes(Handle h) const override;
  Status Run(Handle h, std::vector<Tensor> args, std::vector<Tensor>* rets) override;
  Status GetFunctionDef(const std::string& name, FunctionDef* fdef) const override;

  // The GraphDef Instantiate builds for `fdef` (exposed for tests).
  static StatusOr<GraphDef> FunctionBodyToGraphDef(const FunctionDef& fdef);

 private:
  struct Instance {
    std::string name;
    DataTypeVector arg_types, ret_types;
    std::unique_ptr<Executor> executor;          // a FunctionDef's body, or
    std::shared_ptr<const CppFunction> cpp;      // a registered C++ function
  };

  // The registered C++ function `name` as a new instance; NOT_FOUND when there is none.
  StatusOr<Handle> InstantiateCppFunctionLocked(const std::string& name);

  DeviceBase* const device_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, FunctionDef> functions_;
  absl::flat_hash_map<std::string, Handle> handles_;
  std::vector<std::unique_ptr<Instance>> instances_;  // by handle; never shrinks
};

}  // namespace tensorflux
