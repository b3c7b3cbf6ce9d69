// Variant: the element type of DT_VARIANT tensors (TF's tensorflow::Variant, reduced to what the
// engine needs): a reference-counted, immutable, type-erased C++ value. Copies share the value.
//
// A DT_VARIANT tensor holds one Variant per element; the tf.data ops pass a dataset between
// kernels as a DT_VARIANT scalar whose value is a DatasetVariant (data/dataset.h). Variant
// tensors live in host memory only and have no wire form: TensorProto encoding writes no values
// and decoding one with values is UNIMPLEMENTED (TF serializes them as VariantTensorDataProto,
// which nothing here needs yet).
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "tensorflux/core/types.h"

namespace tensorflux {

// The value behind a Variant. Subclasses are immutable once stored (several tensors share them).
class VariantValue {
 public:
  virtual ~VariantValue() = default;
  // "Dataset", ...; used in errors and DebugString.
  virtual std::string TypeName() const = 0;
  virtual std::string DebugString() const { return TypeName(); }
};

class Variant {
 public:
  Variant() = default;  // empty
  explicit Variant(std::shared_ptr<const VariantValue> v) : value_(std::move(v)) {}

  bool empty() const { return value_ == nullptr; }
  // The value as T, or nullptr when empty or of another type.
  template <typename T>
  const T* get() const {
    return dynamic_cast<const T*>(value_.get());
  }
  const std::shared_ptr<const VariantValue>& value() const { return value_; }
  std::string TypeName() const { return value_ ? value_->TypeName() : "(empty)"; }
  std::string DebugString() const { return value_ ? value_->DebugString() : "Variant<empty>"; }

 private:
  std::shared_ptr<const VariantValue> value_;
};

template <>
struct DataTypeToEnum<Variant> {
  static constexpr DataType value = DT_VARIANT;
};

}  // namespace tensorflux
