// Datasets on C++ functions in the C++ client API: MapDataset / ParallelMapDatasetV2 whose `f`
// is a function registered with RegisterCppFunction (framework/cc_function.h), so a C++ program
// maps a dataset with a C++ function (no FunctionDef, no Python):
//
//   CppFunction twice{{DT_INT64}, {DT_INT64}, {PartialTensorShape({})},
//                     [](const std::vector<Tensor>& in, std::vector<Tensor>* out) {
//                       out->push_back(Tensor::Scalar<int64_t>(2 * in[0].scalar<int64_t>()));
//                       return OkStatus();
//                     }};
//   TX_RETURN_IF_ERROR(RegisterCppFunction("twice", std::move(twice)));
//   auto range = ops::RangeDataset(root, int64_t{0}, int64_t{10}, int64_t{1}, {DT_INT64}, {{}});
//   auto doubled = ops::MapDatasetWithCppFunction(root, range, "twice", /*num_parallel_calls=*/2);
//   // then IteratorV2 + MakeIterator + IteratorGetNext (generated wrappers), see
//   // tests/unit/cc/dataset_ops_test.cc.
//
// The function runs in the session's process on the map's threads; its errors become the
// IteratorGetNext node's error (code kept, message "C++ function twice: ...").
#pragma once

#include <cstdint>
#include <string>

#include "tensorflux/cc/ops.h"
#include "tensorflux/cc/scope.h"

namespace tensorflux {
namespace ops {

// MapDataset (num_parallel_calls == 0) or ParallelMapDatasetV2 (num_parallel_calls > 0, or -1 =
// AUTOTUNE; `deterministic` keeps the input order) of `input_dataset` through the C++ function
// registered as `fn`, whose args are the element's components followed by `captured` and whose
// ret types/shapes become the dataset's output_types/output_shapes. Records NOT_FOUND in the
// scope (and returns an empty Output) when no C++ function `fn` is registered, INVALID_ARGUMENT
// for num_parallel_calls < -1.
Output MapDatasetWithCppFunction(const Scope& scope, Input input_dataset, const std::string& fn,
                                 int64_t num_parallel_calls = 0, bool deterministic = true,
                                 InputList captured = std::vector<Input>{});

}  // namespace ops
}  // namespace tensorflux
