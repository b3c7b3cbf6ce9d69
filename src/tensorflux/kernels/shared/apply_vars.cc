#include "tensorflux/kernels/shared/apply_vars.h"

#include <algorithm>

#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {

Status ApplyVars::Acquire(OpKernelContext* ctx, const std::vector<std::string>& names,
                          int num_vars, int num_others, int grad_index, DataType dtype) {
  vars_.clear();
  for (int k = 0; k < num_vars; ++k) {
    TX_ASSIGN_OR_RETURN(std::shared_ptr<Var> var, LookupVarFromInput(ctx, k, dtype));
    vars_.push_back(std::move(var));
  }
  distinct_.clear();
  for (auto& v : vars_) distinct_.push_back(v.get());
  std::sort(distinct_.begin(), distinct_.end());
  distinct_.erase(std::unique(distinct_.begin(), distinct_.end()), distinct_.end());
  locks_.clear();
  for (Var* v : distinct_) locks_.emplace_back(*v->mu());

  for (const auto& v : vars_) TX_RETURN_IF_ERROR(CheckInitialized(*v));
  const TensorShape& shape = vars_[0]->tensor()->shape();
  for (int k = 1; k < num_vars; ++k) {
    if (vars_[k]->tensor()->shape() != shape) {
      return errors::InvalidArgument(names[0], " and ", names[k], " do not have the same shape",
                                     shape.DebugString(), " ",
                                     vars_[k]->tensor()->shape().DebugString());
    }
  }
  for (int i = num_vars; i < num_vars + num_others; ++i) {
    const TensorShape& s = ctx->input(i).shape();
    if (i == grad_index) {
      if (s != shape) {
        return errors::InvalidArgument(names[0], " and ", names[i],
                                       " do not have the same shape", shape.DebugString(), " ",
                                       s.DebugString());
      }
    } else if (s.dims() != 0) {
      return errors::InvalidArgument(names[i], " is not a scalar: ", s.DebugString());
    }
  }
  return OkStatus();
}

}  // namespace tensorflux
