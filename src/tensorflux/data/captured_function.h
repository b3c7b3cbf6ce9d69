// The function a dataset runs per element (TF's CapturedFunction, reduced): the name in a
// function attr (`f`, `predicate`) plus the `other_arguments` tensors captured when the dataset
// op ran. Each iterator instantiates it once in its IteratorContext's FunctionLibraryRuntime
// (a FunctionDef of the graph's library, or a C++ callable registered with
// RegisterDatasetCallable, framework/function.h) and then runs it per element with the element's
// components followed by the captured tensors. Used by data/map_datasets.cc and
// data/interleave_datasets.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/data/dataset.h"
#include "tensorflux/framework/function.h"

namespace tensorflux {

// A function instantiated in an iterator's runtime (which it keeps alive).
struct FunctionInstance {
  std::shared_ptr<FunctionLibraryRuntime> flr;
  FunctionLibraryRuntime::Handle handle = -1;
};

class CapturedFunction {
 public:
  CapturedFunction(std::string name, std::vector<Tensor> captured)
      : name_(std::move(name)), captured_(std::move(captured)) {}
  const std::string& name() const { return name_; }
  const std::vector<Tensor>& captured() const { return captured_; }

  // Instantiates the function in ctx's runtime: FAILED_PRECONDITION without a runtime, the
  // runtime's NOT_FOUND / INVALID_ARGUMENT, or INVALID_ARGUMENT unless it returns `rets`.
  Status Instantiate(IteratorContext* ctx, const DataTypeVector& rets,
                     FunctionInstance* out) const;

  // Runs it on one element (the captured tensors are appended). Thread-safe.
  Status Run(const FunctionInstance& f, std::vector<Tensor> element,
             std::vector<Tensor>* rets) const;

 private:
  const std::string name_;
  const std::vector<Tensor> captured_;
};

// A kernel's function attr (`f` / `predicate`) and number of captured arguments (Targuments).
struct FunctionAttrs {
  std::string func;
  int num_captured = 0;

  Status Read(OpKernelConstruction* ctx, const char* attr);
  // The function with the captured `other_arguments` (inputs 1 .. num_captured).
  CapturedFunction Capture(OpKernelContext* ctx) const;
};

// The `deterministic` attr of the parallel datasets: "true" / "default" -> true, "false" ->
// false; INVALID_ARGUMENT otherwise.
Status ReadDeterministicAttr(OpKernelConstruction* ctx, bool* deterministic);

}  // namespace tensorflux
