// The iterator resource behind TF 1.x's IteratorV2 / MakeIterator / IteratorGetNext ops
// (kernels in data/iterator_ops.cc). One IteratorResource per (container, shared_name) in the
// device's ResourceMgr; it has a fixed element spec (output_types, output_shapes) and holds the
// current pass over a dataset, replaced by each Initialize (MakeIterator). Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tensorflux/data/dataset.h"
#include "tensorflux/framework/resource_mgr.h"

namespace tensorflux {

class IteratorResource : public ResourceBase {
 public:
  static constexpr const char* kTypeName = "Iterator";

  IteratorResource(DataTypeVector output_types, std::vector<PartialTensorShape> output_shapes);
  std::string DebugString() const override;

  const DataTypeVector& output_types() const { return output_types_; }
  const std::vector<PartialTensorShape>& output_shapes() const { return output_shapes_; }

  // INVALID_ARGUMENT when (types, shapes) does not match this iterator's spec.
  Status CheckSpec(const DataTypeVector& types,
                   const std::vector<PartialTensorShape>& shapes) const;
  // Starts a fresh pass over `dataset` (INVALID_ARGUMENT when its spec does not match).
  Status Initialize(IteratorContext* ctx, const DatasetBase& dataset);
  // The next element (checked against the spec) or *end_of_sequence; FAILED_PRECONDITION
  // before the first Initialize.
  Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end_of_sequence);

 private:
  const DataTypeVector output_types_;
  const std::vector<PartialTensorShape> output_shapes_;
  std::mutex mu_;
  std::shared_ptr<IteratorBase> iterator_;
};

}  // namespace tensorflux
