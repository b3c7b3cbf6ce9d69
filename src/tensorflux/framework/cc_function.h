// C++ functions that a graph can name where it names a library function: a function attr such as
// MapDataset's `f`, FilterDataset's `predicate` or InterleaveDataset's `f` may hold the name of a
// function registered here instead of a FunctionDef of the graph's library. The session's
// FunctionLibraryRuntime (runtime/function_runtime.h) looks a name up in the graph's library
// first, then here, and runs a registered function on the caller's thread, so a parallel map
// runs it from several threads at once: it must be thread-safe.
//
//   CppFunction square;
//   square.arg_types = {DT_FLOAT};
//   square.ret_types = {DT_FLOAT};
//   square.ret_shapes = {PartialTensorShape({-1})};
//   square.fn = [](const std::vector<Tensor>& in, std::vector<Tensor>* out) {
//     Tensor y(DT_FLOAT, in[0].shape());
//     ...; out->push_back(std::move(y));
//     return OkStatus();
//   };
//   TX_RETURN_IF_ERROR(RegisterCppFunction("square", std::move(square)));
//
// The function gets one tensor per arg type (the element's components, then a dataset op's
// captured `other_arguments`) and must append one tensor per ret type; the runtime checks both
// (INVALID_ARGUMENT naming the function). A Status it returns becomes the error of the op that
// ran it, with its code kept and "C++ function <name>: " before its message; an exception it
// throws becomes UNKNOWN. The C++ client API builds datasets on registered functions with
// ops::MapDatasetWithCppFunction (cc/dataset_ops.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/tensor_shape.h"
#include "tensorflux/core/types.h"

namespace tensorflux {

struct CppFunction {
  using Fn = std::function<Status(const std::vector<Tensor>& args, std::vector<Tensor>* rets)>;
  DataTypeVector arg_types;
  DataTypeVector ret_types;
  // One per ret type (what a dataset op's output_shapes should say); empty means unknown shapes.
  std::vector<PartialTensorShape> ret_shapes;
  Fn fn;
};

// INVALID_ARGUMENT for an empty name, no fn, no ret types, or ret_shapes of the wrong length;
// ALREADY_EXISTS when the name is taken. Thread-safe.
Status RegisterCppFunction(const std::string& name, CppFunction f);
// The function registered under `name`, or nullptr.
std::shared_ptr<const CppFunction> LookUpCppFunction(const std::string& name);
// NOT_FOUND when nothing is registered under `name`. Runtimes that already instantiated the
// function keep it.
Status UnregisterCppFunction(const std::string& name);

// Runs `f` on `args` (checked against its arg types) and checks what it returns; errors as
// described above, naming `name`.
Status CallCppFunction(const std::string& name, const CppFunction& f, std::vector<Tensor> args,
                       std::vector<Tensor>* rets);

}  // namespace tensorflux
