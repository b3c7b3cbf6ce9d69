// tf.data ops (TF's names, inputs and attrs; tensorflow/core/ops/dataset_ops.cc). A dataset op
// outputs a DT_VARIANT scalar holding a dataset (data/dataset.h); its elements have the dtypes
// `output_types` and the (partial) shapes `output_shapes`. Iterator ops name an iterator
// resource in the device's ResourceMgr. Kernels: src/tensorflux/data/.
#include <vector>

#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

using shape_inference::ScalarShape;

// IteratorGetNext: one output per component, of the shape in `output_shapes`.
Status OutputShapesAttr(InferenceContext* c) {
  std::vector<PartialTensorShape> shapes;
  TX_RETURN_IF_ERROR(c->GetAttr("output_shapes", &shapes));
  if (static_cast<int>(shapes.size()) != c->num_outputs()) {
    return c->Error("output_shapes has ", shapes.size(), " entries for ", c->num_outputs(),
                    " outputs");
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, shapes[i]);
  return OkStatus();
}

Status NoOutputs(InferenceContext*) { return OkStatus(); }

}  // namespace

// ---------------------------------------------------------------- sources

REGISTER_OP("TensorDataset")
    .Input("components: Toutput_types")
    .Output("handle: variant")
    .Attr("Toutput_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .SetShapeFn(ScalarShape)
    .Doc("A dataset of one element: the tuple `components`.");

REGISTER_OP("TensorSliceDataset")
    .Input("components: Toutput_types")
    .Output("handle: variant")
    .Attr("Toutput_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .Attr("is_files: bool = false")
    .SetShapeFn(ScalarShape)
    .Doc("One element per row of the components (all of rank >= 1, with equal dim 0); element "
         "i is (components[0][i], components[1][i], ...).");

REGISTER_OP("RangeDataset")
    .Input("start: int64")
    .Input("stop: int64")
    .Input("step: int64")
    .Output("handle: variant")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .SetShapeFn(ScalarShape)
    .Doc("Scalars start, start + step, ... before stop (Python's range); step != 0. The "
         "element dtype is output_types[0] (any integer or floating type).");

// ---------------------------------------------------------------- transformations

#define TX_DATASET_TRANSFORM_ATTRS              \
  Attr("output_types: list(type) >= 1")         \
      .Attr("output_shapes: list(shape) >= 1")

REGISTER_OP("BatchDatasetV2")
    .Input("input_dataset: variant")
    .Input("batch_size: int64")
    .Input("drop_remainder: bool")
    .Output("handle: variant")
    .Attr("parallel_copy: bool = false")
    .TX_DATASET_TRANSFORM_ATTRS
    .SetShapeFn(ScalarShape)
    .Doc("Stacks batch_size (> 0) consecutive elements along a new dim 0; the last batch is "
         "smaller unless drop_remainder drops it. Elements of one batch must have equal shapes.");

REGISTER_OP("PaddedBatchDatasetV2")
    .Input("input_dataset: variant")
    .Input("batch_size: int64")
    .Input("padded_shapes: N * int64")
    .Input("padding_values: Toutput_types")
    .Input("drop_remainder: bool")
    .Output("handle: variant")
    .Attr("parallel_copy: bool = false")
    .Attr("Toutput_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .Attr("N: int >= 1")
    .SetShapeFn(ScalarShape)
    .Doc("Like BatchDatasetV2, padding component i of every element to padded_shapes[i] (a "
         "vector; -1 = the largest size in the batch) with the scalar padding_values[i].");

REGISTER_OP("ShuffleDataset")
    .Input("input_dataset: variant")
    .Input("buffer_size: int64")
    .Input("seed: int64")
    .Input("seed2: int64")
    .Output("handle: variant")
    .Attr("reshuffle_each_iteration: bool = true")
    .TX_DATASET_TRANSFORM_ATTRS
    .SetShapeFn(ScalarShape)
    .Doc("Draws elements uniformly from a buffer of buffer_size (> 0) elements refilled from "
         "the input (Philox from (seed, seed2); both 0 = nondeterministic).");

REGISTER_OP("RepeatDataset")
    .Input("input_dataset: variant")
    .Input("count: int64")
    .Output("handle: variant")
    .TX_DATASET_TRANSFORM_ATTRS
    .SetShapeFn(ScalarShape)
    .Doc("The input `count` times; count < 0 repeats forever.");

REGISTER_OP("TakeDataset")
    .Input("input_dataset: variant")
    .Input("count: int64")
    .Output("handle: variant")
    .TX_DATASET_TRANSFORM_ATTRS
    .SetShapeFn(ScalarShape)
    .Doc("The first `count` elements; count < 0 takes all.");

REGISTER_OP("IgnoreErrorsDataset")
    .Input("input_dataset: variant")
    .Output("handle: variant")
    .TX_DATASET_TRANSFORM_ATTRS
    .Attr("log_warning: bool = false")
    .SetShapeFn(ScalarShape)
    .Doc("The input's elements, the errors its GetNext raises (but CANCELLED) dropped: it asks "
         "again. A file source moves past the error (TFRecordDataset, TextLineDataset: on with "
         "the next file, as TF). log_warning: each dropped error is written to stderr.");

REGISTER_OP("SkipDataset")
    .Input("input_dataset: variant")
    .Input("count: int64")
    .Output("handle: variant")
    .TX_DATASET_TRANSFORM_ATTRS
    .SetShapeFn(ScalarShape)
    .Doc("All but the first `count` elements; count < 0 skips all.");

REGISTER_OP("ShardDataset")
    .Input("input_dataset: variant")
    .Input("num_shards: int64")
    .Input("index: int64")
    .Output("handle: variant")
    .Attr("require_non_empty: bool = false")
    .TX_DATASET_TRANSFORM_ATTRS
    .SetShapeFn(ScalarShape)
    .Doc("Elements index, index + num_shards, ...; num_shards > 0, 0 <= index < num_shards.");

REGISTER_OP("ZipDataset")
    .Input("input_datasets: N * variant")
    .Output("handle: variant")
    .TX_DATASET_TRANSFORM_ATTRS
    .Attr("N: int >= 1")
    .Attr("metadata: string = ''")
    .SetShapeFn(ScalarShape)
    .Doc("Element i is the components of element i of every input, concatenated in input "
         "order (output_types / output_shapes: the inputs' specs concatenated); ends when the "
         "first input ends.");

REGISTER_OP("PrefetchDataset")
    .Input("input_dataset: variant")
    .Input("buffer_size: int64")
    .Output("handle: variant")
    .TX_DATASET_TRANSFORM_ATTRS
    .Attr("slack_period: int = 0")
    .Attr("legacy_autotune: bool = true")
    .Attr("buffer_size_min: int = 0")
    .SetShapeFn(ScalarShape)
    .Doc("The input, produced ahead by a background thread into a buffer of buffer_size "
         "elements (-1 = AUTOTUNE, 0 = no prefetching).");

REGISTER_OP("OptimizeDatasetV2")
    .Input("input_dataset: variant")
    .Input("optimizations_enabled: string")
    .Input("optimizations_disabled: string")
    .Input("optimizations_default: string")
    .Output("handle: variant")
    .TX_DATASET_TRANSFORM_ATTRS
    .Attr("optimization_configs: list(string) = []")
    .SetShapeFn(ScalarShape)
    .Doc("The input, with tf.data optimizations set for the datasets below it (TF applies them "
         "to the whole pipeline; here they reach the iterators this dataset makes). An "
         "optimization is on when in optimizations_enabled, or in optimizations_default and not "
         "in optimizations_disabled. Implemented: 'map_vectorization' (batch after an "
         "elementwise map runs the map once per batch; data/map_vectorization.h), on when no "
         "OptimizeDatasetV2 says otherwise. Other names are ignored.");

REGISTER_OP("MaxIntraOpParallelismDataset")
    .Input("input_dataset: variant")
    .Input("max_intra_op_parallelism: int64")
    .Output("handle: variant")
    .TX_DATASET_TRANSFORM_ATTRS
    .SetShapeFn(ScalarShape)
    .Doc("The input, its iterators' kernels (dataset functions) sharding onto at most "
         "max_intra_op_parallelism threads (>= 0; 0 = the session's intra-op pool, no cap; "
         "1 = inline). Without one the cap is 1 (data/dataset.h DatasetOptions).");

REGISTER_OP("CacheDataset")
    .Input("input_dataset: variant")
    .Input("filename: string")
    .Output("handle: variant")
    .TX_DATASET_TRANSFORM_ATTRS
    .SetShapeFn(ScalarShape)
    .Doc("The input's first complete pass, kept in memory (filename '') or written to "
         "'<filename>.tfxcache' and read back by later iterators (data/cache_datasets.cc).");

// ---------------------------------------------------------------- functions

REGISTER_OP("MapDataset")
    .Input("input_dataset: variant")
    .Input("other_arguments: Targuments")
    .Output("handle: variant")
    .Attr("f: func")
    .Attr("Targuments: list(type) >= 0")
    .TX_DATASET_TRANSFORM_ATTRS
    .Attr("use_inter_op_parallelism: bool = true")
    .Attr("preserve_cardinality: bool = false")
    .SetShapeFn(ScalarShape)
    .Doc("f(element components..., other_arguments...) for each element; f is a function of "
         "the graph's library returning output_types.");

REGISTER_OP("ParallelMapDatasetV2")
    .Input("input_dataset: variant")
    .Input("other_arguments: Targuments")
    .Input("num_parallel_calls: int64")
    .Output("handle: variant")
    .Attr("f: func")
    .Attr("Targuments: list(type) >= 0")
    .TX_DATASET_TRANSFORM_ATTRS
    .Attr("use_inter_op_parallelism: bool = true")
    .Attr("deterministic: string = 'default'")
    .Attr("preserve_cardinality: bool = false")
    .SetShapeFn(ScalarShape)
    .Doc("MapDataset with num_parallel_calls (> 0, or -1 = AUTOTUNE) calls at once; "
         "deterministic 'true'/'default' keeps the input order.");

REGISTER_OP("FilterDataset")
    .Input("input_dataset: variant")
    .Input("other_arguments: Targuments")
    .Output("handle: variant")
    .Attr("predicate: func")
    .Attr("Targuments: list(type) >= 0")
    .TX_DATASET_TRANSFORM_ATTRS
    .SetShapeFn(ScalarShape)
    .Doc("The elements for which predicate(element..., other_arguments...) is true (a bool "
         "scalar).");

REGISTER_OP("InterleaveDataset")
    .Input("input_dataset: variant")
    .Input("other_arguments: Targuments")
    .Input("cycle_length: int64")
    .Input("block_length: int64")
    .Output("handle: variant")
    .Attr("f: func")
    .Attr("Targuments: list(type) >= 0")
    .TX_DATASET_TRANSFORM_ATTRS
    .SetShapeFn(ScalarShape)
    .Doc("f(element...) returns a dataset per input element; cycle_length of them are read "
         "round-robin, block_length elements at a time.");

REGISTER_OP("ParallelInterleaveDatasetV4")
    .Input("input_dataset: variant")
    .Input("other_arguments: Targuments")
    .Input("cycle_length: int64")
    .Input("block_length: int64")
    .Input("buffer_output_elements: int64")
    .Input("prefetch_input_elements: int64")
    .Input("num_parallel_calls: int64")
    .Output("handle: variant")
    .Attr("f: func")
    .Attr("deterministic: string = 'default'")
    .Attr("Targuments: list(type) >= 0")
    .TX_DATASET_TRANSFORM_ATTRS
    .SetShapeFn(ScalarShape)
    .Doc("InterleaveDataset read ahead by num_parallel_calls threads (<= cycle_length; -1 = "
         "cycle_length): buffer_output_elements (> 0, -1 = 2 * block_length) per open element, "
         "prefetch_input_elements (>= 0, -1 = cycle_length) input elements opened ahead; "
         "deterministic 'true'/'default' gives InterleaveDataset's order.");

#undef TX_DATASET_TRANSFORM_ATTRS

// ---------------------------------------------------------------- iterators

REGISTER_OP("IteratorV2")
    .Output("handle: resource")
    .Attr("shared_name: string")
    .Attr("container: string")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .SetIsStateful()
    .SetShapeFn(ScalarShape)
    .Doc("A handle to the iterator resource (container, shared_name; '' = the node name).");

REGISTER_OP("MakeIterator")
    .Input("dataset: variant")
    .Input("iterator: resource")
    .SetIsStateful()
    .SetShapeFn(NoOutputs)
    .Doc("(Re)starts `iterator` at the beginning of `dataset`.");

REGISTER_OP("IteratorGetNext")
    .Input("iterator: resource")
    .Output("components: output_types")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .SetIsStateful()
    .SetShapeFn(OutputShapesAttr)
    .Doc("The iterator's next element; OUT_OF_RANGE \"End of sequence\" after the last.");

}  // namespace tensorflux
