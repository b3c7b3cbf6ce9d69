// Shared by the interleave datasets: InterleaveDataset (data/interleave_datasets.cc, which also
// holds both ops' kernel) and ParallelInterleaveDatasetV4 (data/parallel_interleave_dataset.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tensorflux/data/captured_function.h"
#include "tensorflux/data/dataset.h"

namespace tensorflux {
namespace interleave {

// The iterator over the dataset that f(element) returns (a DT_VARIANT dataset scalar; f was
// instantiated with ret types {DT_VARIANT}); f's errors, or INVALID_ARGUMENT when it returned no
// dataset.
StatusOr<std::unique_ptr<IteratorBase>> OpenElement(const CapturedFunction& fn,
                                                    const FunctionInstance& inst,
                                                    std::vector<Tensor> element,
                                                    IteratorContext* ctx);

// INVALID_ARGUMENT unless an element read from an interleaved dataset matches the spec.
Status CheckElement(const std::string& fn_name, const std::vector<Tensor>& out,
                    const DataTypeVector& types, const std::vector<PartialTensorShape>& shapes);

// ParallelInterleaveDatasetV4's settings, validated by the kernel.
struct ParallelParams {
  int64_t cycle_length = 1;            // > 0
  int64_t block_length = 1;            // > 0
  int64_t buffer_output_elements = 1;  // > 0: elements buffered per open input element
  int64_t prefetch_input_elements = 0;  // >= 0: input elements opened ahead of the cycle
  int num_parallel_calls = 1;          // worker threads, in [1, cycle_length]
  bool deterministic = true;
};

DatasetPtr NewParallelInterleaveDataset(DatasetPtr input, CapturedFunction fn,
                                        const ParallelParams& params, DataTypeVector types,
                                        std::vector<PartialTensorShape> shapes);

}  // namespace interleave
}  // namespace tensorflux
