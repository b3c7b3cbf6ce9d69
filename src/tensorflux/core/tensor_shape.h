// TensorShape: a fully known shape (rank 0..8, int64 dims, element count checked for overflow).
// PartialTensorShape: unknown rank, or known rank with -1 for unknown dims (shape inference,
// Placeholder shapes).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "tensorflux/core/status.h"
#include "tensorflux/tensor_shape.pb.h"

namespace tensorflux {

class TensorShape {
 public:
  static constexpr int kMaxDims = 8;

  TensorShape() = default;  // scalar
  // Trusted construction (dims already validated by the caller, e.g. derived from an existing
  // tensor). For user-supplied dims use Make().
  TensorShape(std::initializer_list<int64_t> dims);
  explicit TensorShape(absl::Span<const int64_t> dims);

  // INVALID_ARGUMENT when rank > kMaxDims, a dim < 0, or the element count overflows int64.
  static StatusOr<TensorShape> Make(absl::Span<const int64_t> dims);
  static StatusOr<TensorShape> FromProto(const TensorShapeProto& proto);
  void AsProto(TensorShapeProto* proto) const;

  int dims() const { return static_cast<int>(dims_.size()); }
  int64_t dim_size(int d) const { return dims_[d]; }
  absl::Span<const int64_t> dim_sizes() const { return dims_; }
  int64_t num_elements() const { return num_elements_; }

  // Checked mutators (rank and overflow).
  Status AddDimWithStatus(int64_t size);
  // Trusted mutators.
  void AddDim(int64_t size);
  void set_dim(int d, int64_t size);
  void RemoveDim(int d);
  void InsertDim(int d, int64_t size);

  bool IsSameSize(const TensorShape& other) const { return dims_ == other.dims_; }
  bool operator==(const TensorShape& o) const { return dims_ == o.dims_; }
  bool operator!=(const TensorShape& o) const { return dims_ != o.dims_; }

  // "[2,3]"; scalar is "[]".
  std::string DebugString() const;

 private:
  void Recompute();
  absl::InlinedVector<int64_t, 4> dims_;
  int64_t num_elements_ = 1;
};

class PartialTensorShape {
 public:
  PartialTensorShape() = default;  // unknown rank
  explicit PartialTensorShape(absl::Span<const int64_t> dims);  // -1 = unknown dim
  PartialTensorShape(std::initializer_list<int64_t> dims);
  PartialTensorShape(const TensorShape& s);  // NOLINT: implicit, a known shape is a partial shape
  static PartialTensorShape Scalar() { return PartialTensorShape(absl::Span<const int64_t>()); }
  static PartialTensorShape UnknownRank() { return PartialTensorShape(); }

  // INVALID_ARGUMENT for dims < -1, rank > 8, or dims given together with unknown_rank.
  static StatusOr<PartialTensorShape> FromProto(const TensorShapeProto& proto);
  void AsProto(TensorShapeProto* proto) const;

  bool unknown_rank() const { return unknown_rank_; }
  int dims() const { return unknown_rank_ ? -1 : static_cast<int>(dims_.size()); }  // -1 if unknown
  int64_t dim_size(int d) const { return dims_[d]; }
  absl::Span<const int64_t> dim_sizes() const { return dims_; }
  bool IsFullyDefined() const;
  // The known shape; INVALID_ARGUMENT if not fully defined.
  StatusOr<TensorShape> AsTensorShape() const;
  // -1 when unknown.
  int64_t num_elements() const;

  // True when some fully known shape could match both.
  bool IsCompatibleWith(const PartialTensorShape& other) const;
  // Most specific shape compatible with both; INVALID_ARGUMENT if they are incompatible.
  StatusOr<PartialTensorShape> MergeWith(const PartialTensorShape& other) const;

  bool operator==(const PartialTensorShape& o) const {
    return unknown_rank_ == o.unknown_rank_ && dims_ == o.dims_;
  }

  // "<unknown>", "[?,3]".
  std::string DebugString() const;

 private:
  bool unknown_rank_ = true;
  absl::InlinedVector<int64_t, 4> dims_;
};

}  // namespace tensorflux
