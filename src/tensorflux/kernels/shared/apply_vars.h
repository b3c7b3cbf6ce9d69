// The variables of one optimizer update (ops/training_ops.cc: Apply* / ResourceApply*), shared
// by the CPU kernels (kernels/cpu/training_ops.cc) and the GPU kernels
// (kernels/cuda/training_ops.cc). Inputs [0, num_vars) name variables (resource or ref inputs),
// the others are the gradient (input grad_index, the variables' shape) and scalars.
//
// Acquire() resolves the variables (LookupVarFromInput: FAILED_PRECONDITION when missing,
// INVALID_ARGUMENT for another dtype), locks each distinct Var exclusively in address order (two
// kernels never deadlock; one Var may be passed for two inputs), and checks, with TF's texts:
// every variable initialized (FAILED_PRECONDITION), the slots and the gradient of the first
// variable's shape, the other inputs scalars (INVALID_ARGUMENT naming the inputs). The locks are
// held until the ApplyVars is destroyed.
#pragma once

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/types.h"
#include "tensorflux/framework/resource_var.h"

namespace tensorflux {

class OpKernelContext;

class ApplyVars {
 public:
  // `names`: the op's input names (for messages).
  Status Acquire(OpKernelContext* ctx, const std::vector<std::string>& names, int num_vars,
                 int num_others, int grad_index, DataType dtype);

  // Variable k's value (initialized, locked).
  Tensor* tensor(int k) { return vars_[k]->tensor(); }
  // Each Var once (for copy-on-write before an in-place update).
  const std::vector<Var*>& distinct() const { return distinct_; }

 private:
  std::vector<std::shared_ptr<Var>> vars_;
  std::vector<Var*> distinct_;
  std::vector<std::unique_lock<std::shared_mutex>> locks_;
};

}  // namespace tensorflux
