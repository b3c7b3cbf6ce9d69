// The tf.data framework: datasets, their iterators, and the kernels that build them
// (TF's design in tensorflow/core/framework/dataset.h, reduced).
//
// A DatasetBase is an immutable description of a sequence of elements; every element is a
// tuple of tensors with the dataset's output_dtypes() and (partial) output_shapes(). A dataset
// is shared (std::shared_ptr<const DatasetBase>): the graph passes it between kernels as a
// DT_VARIANT scalar holding a DatasetVariant, and every iterator keeps its dataset alive.
//
// MakeIterator() starts a fresh pass: an IteratorBase whose GetNext() yields the elements in
// order and then end_of_sequence = true (and keeps answering end_of_sequence after that).
// GetNext() is thread-safe per iterator: calls on one iterator are serialized by its mutex.
// Errors are Statuses; a failed GetNext may be retried or the iterator dropped. What a retry
// gives is the dataset's to say: a map whose function failed goes on with the next element; a
// file source that hit DATA_LOSS or NOT_FOUND returns that error again (unless
// IteratorContext::errors_are_ignored).
//
// ---------------------------------------------------------------- adding a dataset
// 1. Register the op in src/tensorflux/ops/dataset_ops.cc with TF's name, inputs and attrs;
//    a dataset op outputs `handle: variant` and has attrs `output_types: list(type) >= 1` and
//    `output_shapes: list(shape) >= 1` (shape fn: ScalarShape; SetIsStateful() for sources that
//    read files, as TF does, so they are not constant-folded).
// 2. Subclass DatasetBase (output_dtypes, output_shapes, DebugString, MakeIteratorInternal) and
//    an iterator: subclass DatasetIterator<YourDataset> and implement GetNextInternal (called
//    with the iterator's mutex held; it returns a Status and sets *end_of_sequence at the end).
//    A transformation of one input subclasses UnaryDatasetIterator, whose Initialize() makes
//    the input's iterator (input_); other setup goes in an Initialize() override (called once
//    by MakeIterator).
// 3. Subclass DatasetOpKernel (a source: inputs are plain tensors) or UnaryDatasetOpKernel
//    (input 0 is the input dataset) and implement MakeDataset: validate every input (a bad
//    value is INVALID_ARGUMENT naming the input; the executor adds the node's name) and return
//    the dataset. The base class checks the dataset's dtypes/shapes against the node's
//    output_types/output_shapes attrs (INVALID_ARGUMENT on a mismatch).
//    REGISTER_KERNEL_BUILDER(Name("FooDataset").Device(DEVICE_CPU), FooDatasetOp);
// 4. Python (python/tensorflux/data/): apply the op with op_def_library.apply_op(...,
//    output_types=[...], output_shapes=[...]) and return Dataset(variant, types, shapes), the
//    types/shapes nested like the elements (see Dataset.range in dataset_ops.py); put the
//    public name in tx.data or tx.data.experimental.
// Example: data/source_datasets.cc (RangeDataset) for a source, data/basic_datasets.cc
// (TakeDataset) for a transformation.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/tensor_shape.h"
#include "tensorflux/core/types.h"
#include "tensorflux/core/variant.h"
#include "tensorflux/framework/function.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {

class DatasetBase;
using DatasetPtr = std::shared_ptr<const DatasetBase>;

// tf.data options (TF's tf.data.Options) in force for an iterator: the defaults, or what an
// OptimizeDatasetV2 above it in the pipeline set (Python: Dataset.with_options).
struct DatasetOptions {
  // "map_vectorization": batch after a map whose function is provably elementwise batches the
  // map's input and calls the function once per batch (data/map_vectorization.h). On by
  // default: the rewrite is only made where its results are bit-identical.
  bool map_vectorization = true;
  // TF's threading.max_intra_op_parallelism: the ScopedMaxParallelism (core/max_parallelism.h)
  // of every GetNext, so the kernels of dataset functions shard onto at most this many threads;
  // 0 = the session's intra-op pool unrestricted. Default 1, unlike TF (no cap): the pipeline
  // runs beside the training step, which owns that pool, and on the 2-core target sharding a
  // batch's 100k-element Cast onto it cost more in thread wake-ups than it saved (measured 2.4x
  // slower Fashion-MNIST pipeline, docs/PERFORMANCE.md).
  int max_intra_op_parallelism = 1;
};

// What iterators need from the session that runs them. Copied into iterators that work in the
// background (prefetch, parallel map); the allocator outlives the iterator resource.
struct IteratorContext {
  // The session's function runtime (map/filter); null outside a session.
  std::shared_ptr<FunctionLibraryRuntime> function_library;
  Allocator* allocator = nullptr;  // nullptr: cpu_allocator()
  DatasetOptions options;
  // True below an IgnoreErrorsDataset (tx.data.experimental.ignore_errors()), which drops its
  // input's errors and asks again. A source whose errors are otherwise sticky (a file reader
  // that hit DATA_LOSS repeats it on every later GetNext, never ending quietly) moves past the
  // error instead: TFRecordDataset and TextLineDataset go on with the next file, as TF does.
  bool errors_are_ignored = false;

  static IteratorContext FromKernel(OpKernelContext* ctx);
};

class IteratorBase {
 public:
  virtual ~IteratorBase() = default;
  IteratorBase(const IteratorBase&) = delete;
  IteratorBase& operator=(const IteratorBase&) = delete;

  // The next element into *out (cleared first), or *end_of_sequence = true. Thread-safe.
  Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end_of_sequence);

  virtual const DataTypeVector& output_dtypes() const = 0;
  virtual const std::vector<PartialTensorShape>& output_shapes() const = 0;

 protected:
  IteratorBase() = default;
  // Called by DatasetBase::MakeIterator before the iterator is returned.
  virtual Status Initialize(IteratorContext* ctx) { return OkStatus(); }
  // Called with mu_ held; *out is empty and *end_of_sequence false on entry.
  virtual Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out,
                                 bool* end_of_sequence) = 0;

 private:
  friend class DatasetBase;
  std::mutex mu_;
};

class DatasetBase : public std::enable_shared_from_this<DatasetBase> {
 public:
  virtual ~DatasetBase() = default;

  virtual const DataTypeVector& output_dtypes() const = 0;
  virtual const std::vector<PartialTensorShape>& output_shapes() const = 0;
  // "RangeDatasetOp::Dataset(0, 10, 1)"-style description.
  virtual std::string DebugString() const = 0;

  // A fresh iterator over this dataset (Initialize()d). The iterator keeps the dataset alive.
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator(IteratorContext* ctx) const;

  // A map dataset (MapDataset, ParallelMapDatasetV2) describes itself here, for rewrites made by
  // the datasets that consume it (map vectorization); other datasets return null.
  struct MapFunction {
    DatasetPtr input;               // the dataset the map reads
    std::string function;           // the FunctionDef's name
    std::vector<Tensor> captured;   // other_arguments, passed after the element's components
  };
  virtual const MapFunction* map_function() const { return nullptr; }

 protected:
  virtual std::unique_ptr<IteratorBase> MakeIteratorInternal() const = 0;
};

// Base for iterators of one dataset type: holds the dataset (shared) and forwards the element
// spec.
template <typename DatasetType>
class DatasetIterator : public IteratorBase {
 public:
  explicit DatasetIterator(const DatasetType* dataset)
      : dataset_ref_(dataset->shared_from_this()), dataset_(dataset) {}
  const DataTypeVector& output_dtypes() const override { return dataset_->output_dtypes(); }
  const std::vector<PartialTensorShape>& output_shapes() const override {
    return dataset_->output_shapes();
  }

 protected:
  const DatasetType* dataset() const { return dataset_; }

 private:
  std::shared_ptr<const DatasetBase> dataset_ref_;
  const DatasetType* dataset_;
};

// An iterator over a dataset with one input (DatasetType::input()): Initialize makes the
// input's iterator, input_, which GetNextInternal may reset() once the input has ended.
template <typename DatasetType>
class UnaryDatasetIterator : public DatasetIterator<DatasetType> {
 public:
  using DatasetIterator<DatasetType>::DatasetIterator;

 protected:
  Status Initialize(IteratorContext* ctx) override {
    TX_ASSIGN_OR_RETURN(input_, this->dataset()->input()->MakeIterator(ctx));
    return OkStatus();
  }
  std::unique_ptr<IteratorBase> input_;
};

// A dataset whose elements have its input's spec (take, skip, repeat, shard, shuffle, prefetch,
// cache).
class SameSpecDataset : public DatasetBase {
 public:
  explicit SameSpecDataset(DatasetPtr input) : input_(std::move(input)) {}
  const DataTypeVector& output_dtypes() const override { return input_->output_dtypes(); }
  const std::vector<PartialTensorShape>& output_shapes() const override {
    return input_->output_shapes();
  }
  const DatasetPtr& input() const { return input_; }

 private:
  DatasetPtr input_;
};

// ---------------------------------------------------------------- datasets in tensors

// The DT_VARIANT value of a dataset handle.
class DatasetVariant : public VariantValue {
 public:
  explicit DatasetVariant(DatasetPtr d) : dataset_(std::move(d)) {}
  std::string TypeName() const override { return "tensorflux::Dataset"; }
  std::string DebugString() const override { return dataset_->DebugString(); }
  const DatasetPtr& dataset() const { return dataset_; }

 private:
  DatasetPtr dataset_;
};

// INVALID_ARGUMENT unless `t` is a DT_VARIANT scalar holding a dataset.
StatusOr<DatasetPtr> GetDatasetFromVariantTensor(const Tensor& t);
// A new DT_VARIANT scalar holding `dataset`.
Tensor DatasetToVariantTensor(DatasetPtr dataset);

// INVALID_ARGUMENT unless `value` matches the element spec at `component`
// ("<what> component 0 has dtype int32 but the dataset expects int64").
Status CheckElementComponent(const std::string& what, int component, const Tensor& value,
                             DataType dtype, const PartialTensorShape& shape);

// ---------------------------------------------------------------- kernels

// Base of every dataset op kernel: reads the node's output_types/output_shapes (when the op
// has them), calls MakeDataset, checks the dataset against them and outputs the handle.
class DatasetOpKernel : public OpKernel {
 public:
  explicit DatasetOpKernel(OpKernelConstruction* ctx);
  void Compute(OpKernelContext* ctx) final;

 protected:
  virtual StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) = 0;

  // The node's attrs (empty when the op has none).
  DataTypeVector output_types_;
  std::vector<PartialTensorShape> output_shapes_;
};

// A dataset op whose input 0 is another dataset.
class UnaryDatasetOpKernel : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) final;
  virtual StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx, DatasetPtr input) = 0;
};

// Input `i` as an int64 scalar; INVALID_ARGUMENT naming `name` otherwise.
StatusOr<int64_t> ParseScalarInt64(OpKernelContext* ctx, int i, const char* name);
StatusOr<bool> ParseScalarBool(OpKernelContext* ctx, int i, const char* name);

}  // namespace tensorflux
