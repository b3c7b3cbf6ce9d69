#include "tensorflux/cc/dataset_ops.h"

#include "tensorflux/cc/const_op.h"
#include "tensorflux/cc/ops/ops.h"
#include "tensorflux/framework/cc_function.h"

namespace tensorflux {
namespace ops {

Output MapDatasetWithCppFunction(const Scope& scope, Input input_dataset, const std::string& fn,
                                 int64_t num_parallel_calls, bool deterministic,
                                 InputList captured) {
  if (!scope.ok()) return Output();
  std::shared_ptr<const CppFunction> f = LookUpCppFunction(fn);
  if (f == nullptr) {
    scope.UpdateStatus(errors::NotFound("No C++ function named ", fn, " is registered"));
    return Output();
  }
  if (num_parallel_calls < -1) {
    scope.UpdateStatus(errors::InvalidArgument(
        "num_parallel_calls must be > 0, 0 (sequential) or -1 (AUTOTUNE), got ",
        num_parallel_calls));
    return Output();
  }
  NameAttrList func;
  func.set_name(fn);
  const std::vector<DataType> types(f->ret_types.begin(), f->ret_types.end());
  if (num_parallel_calls == 0) {
    return MapDataset(scope, input_dataset, captured, func, types, f->ret_shapes);
  }
  return ParallelMapDatasetV2(
      scope, input_dataset, captured, Const(scope, num_parallel_calls), func, types,
      f->ret_shapes, ParallelMapDatasetV2::Deterministic(deterministic ? "true" : "false"));
}

}  // namespace ops
}  // namespace tensorflux
