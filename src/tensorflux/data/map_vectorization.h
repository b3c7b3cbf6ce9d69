// Map vectorization (TF's tf.data `map_vectorization` optimization, reduced to functions that are
// provably elementwise): when BatchDatasetV2 reads a MapDataset / ParallelMapDatasetV2 whose
// function f passes CheckMapVectorizable, the batch iterator reads the map's input instead,
// batches those elements and calls f once per batch. f(stack(x_1..x_n)) == stack(f(x_1)..f(x_n))
// bit for bit for such an f, so the rewrite changes no value; it removes n - 1 function calls
// per batch (a call costs ~1 us of executor overhead, more than a small f's arithmetic).
//
// The rewrite is made by the batch iterator when IteratorContext::options.map_vectorization is
// set (the default; OptimizeDatasetV2 with "map_vectorization" in optimizations_disabled turns it
// off for the datasets below it: Python tx.data.Options().experimental_optimization
// .map_vectorization = False and Dataset.with_options). PaddedBatchDatasetV2 is never rewritten
// (f of a padding value is not the padding value).
#pragma once

#include <memory>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/data/dataset.h"
#include "tensorflux/function.pb.h"

namespace tensorflux {

// OK when the map function `fdef`, called with an element's components (of static shapes
// `component_shapes`) followed by `captured`, gives the same values on a batch of elements:
//  - the components all have one fully defined shape S;
//  - every captured tensor and every Const of the body has rank <= rank(S), so it broadcasts
//    against [n] + S as it does against S;
//  - every body node is Const, Identity, Cast or an elementwise op whose result is exactly
//    rounded (arithmetic, Sqrt, comparisons, logic, SelectV2: see map_vectorization.cc), never a
//    transcendental one (Exp, Tanh...: vector and scalar code may round those differently), a
//    stateful one, a shape-dependent one or one with a control input;
//  - every output depends on a component (an output made of constants only has no batch
//    dimension).
// FAILED_PRECONDITION naming the first obstacle otherwise.
Status CheckMapVectorizable(const FunctionDef& fdef,
                            const std::vector<PartialTensorShape>& component_shapes,
                            const std::vector<Tensor>& captured);

// A map's function instantiated to run on whole batches.
class BatchedMapFunction {
 public:
  // The function of `map` (a dataset whose map_function() is non-null) ready for batches, or
  // null when it cannot be vectorized (CheckMapVectorizable fails, or the runtime has no
  // FunctionDef for it, e.g. a C++ callable); errors only from instantiating a vectorizable one.
  static StatusOr<std::unique_ptr<BatchedMapFunction>> Make(IteratorContext* ctx,
                                                            const DatasetBase& map);

  // f on a batch of `rows` elements (`batch`: the components stacked, as BatchDatasetV2 makes
  // them) into *out; each result is checked against the map's output dtype and its output shape
  // with a leading dimension of `rows` (INVALID_ARGUMENT naming the function otherwise).
  Status Run(std::vector<Tensor> batch, int64_t rows, std::vector<Tensor>* out) const;

 private:
  BatchedMapFunction() = default;
  const DatasetBase* map_ = nullptr;
  std::shared_ptr<FunctionLibraryRuntime> flr_;
  FunctionLibraryRuntime::Handle handle_ = -1;
};

}  // namespace tensorflux
