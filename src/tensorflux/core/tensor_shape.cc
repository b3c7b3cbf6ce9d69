#include "tensorflux/core/tensor_shape.h"

// GCC 12 reports a false "may be used uninitialized" when an empty absl::InlinedVector is moved
// into a StatusOr (returning PartialTensorShape() from FromProto).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "absl/strings/str_join.h"

namespace tensorflux {
namespace {

// Product of dims; false on int64 overflow.
bool CheckedProduct(absl::Span<const int64_t> dims, int64_t* out) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(n, d, &n)) return false;
  }
  *out = n;
  return true;
}

std::string DimsString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

}  // namespace

// ------------------------------------------------------------------ TensorShape

TensorShape::TensorShape(std::initializer_list<int64_t> dims) : dims_(dims.begin(), dims.end()) {
  Recompute();
}

TensorShape::TensorShape(absl::Span<const int64_t> dims) : dims_(dims.begin(), dims.end()) {
  Recompute();
}

void TensorShape::Recompute() {
  int64_t n = 1;
  // Trusted path: on overflow (which Make() rules out) saturate to -1 rather than wrap.
  if (!CheckedProduct(dims_, &n)) n = -1;
  num_elements_ = n;
}

StatusOr<TensorShape> TensorShape::Make(absl::Span<const int64_t> dims) {
  if (dims.size() > static_cast<size_t>(kMaxDims)) {
    return errors::InvalidArgument("Shape ", DimsString(dims), " has rank ", dims.size(),
                                   ", more than the maximum of ", kMaxDims);
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return errors::InvalidArgument("Shape ", DimsString(dims), " has negative dimension ",
                                     dims[i], " at index ", i);
    }
  }
  int64_t n;
  if (!CheckedProduct(dims, &n)) {
    return errors::InvalidArgument("Shape ", DimsString(dims),
                                   " has too many elements (overflows int64)");
  }
  TensorShape s;
  s.dims_.assign(dims.begin(), dims.end());
  s.num_elements_ = n;
  return s;
}

StatusOr<TensorShape> TensorShape::FromProto(const TensorShapeProto& proto) {
  if (proto.unknown_rank()) {
    return errors::InvalidArgument("Expected a fully defined shape, got unknown rank");
  }
  if (proto.dim_size() > kMaxDims) {
    return errors::InvalidArgument("Shape has rank ", proto.dim_size(),
                                   ", more than the maximum of ", kMaxDims);
  }
  absl::InlinedVector<int64_t, 8> dims;
  for (const auto& d : proto.dim()) dims.push_back(d.size());
  return Make(dims);
}

void TensorShape::AsProto(TensorShapeProto* proto) const {
  proto->Clear();
  for (int64_t d : dims_) proto->add_dim()->set_size(d);
}

Status TensorShape::AddDimWithStatus(int64_t size) {
  if (dims() >= kMaxDims) {
    return errors::InvalidArgument("Cannot add a dimension to shape ", DebugString(),
                                   ": rank would exceed the maximum of ", kMaxDims);
  }
  if (size < 0) {
    return errors::InvalidArgument("Cannot add negative dimension ", size, " to shape ",
                                   DebugString());
  }
  int64_t n;
  if (__builtin_mul_overflow(num_elements_, size, &n)) {
    return errors::InvalidArgument("Adding dimension ", size, " to shape ", DebugString(),
                                   " overflows the element count");
  }
  dims_.push_back(size);
  num_elements_ = n;
  return OkStatus();
}

void TensorShape::AddDim(int64_t size) {
  dims_.push_back(size);
  Recompute();
}

void TensorShape::set_dim(int d, int64_t size) {
  dims_[d] = size;
  Recompute();
}

void TensorShape::RemoveDim(int d) {
  dims_.erase(dims_.begin() + d);
  Recompute();
}

void TensorShape::InsertDim(int d, int64_t size) {
  dims_.insert(dims_.begin() + d, size);
  Recompute();
}

std::string TensorShape::DebugString() const { return DimsString(dims_); }

// ------------------------------------------------------------------ PartialTensorShape

PartialTensorShape::PartialTensorShape(absl::Span<const int64_t> dims)
    : unknown_rank_(false), dims_(dims.begin(), dims.end()) {}

PartialTensorShape::PartialTensorShape(std::initializer_list<int64_t> dims)
    : unknown_rank_(false), dims_(dims.begin(), dims.end()) {}

PartialTensorShape::PartialTensorShape(const TensorShape& s)
    : unknown_rank_(false), dims_(s.dim_sizes().begin(), s.dim_sizes().end()) {}

StatusOr<PartialTensorShape> PartialTensorShape::FromProto(const TensorShapeProto& proto) {
  if (proto.unknown_rank()) {
    if (proto.dim_size() > 0) {
      return errors::InvalidArgument("Shape proto has unknown_rank set but also ",
                                     proto.dim_size(), " dimensions");
    }
    return PartialTensorShape();
  }
  if (proto.dim_size() > TensorShape::kMaxDims) {
    return errors::InvalidArgument("Shape has rank ", proto.dim_size(),
                                   ", more than the maximum of ", TensorShape::kMaxDims);
  }
  absl::InlinedVector<int64_t, 8> dims;
  int64_t n = 1;
  for (const auto& d : proto.dim()) {
    if (d.size() < -1) {
      return errors::InvalidArgument("Shape has invalid dimension ", d.size(),
                                     " (must be >= -1)");
    }
    if (d.size() >= 0 && __builtin_mul_overflow(n, d.size(), &n)) {
      return errors::InvalidArgument("Shape's known dimensions overflow the element count");
    }
    dims.push_back(d.size());
  }
  return PartialTensorShape(absl::Span<const int64_t>(dims));
}

void PartialTensorShape::AsProto(TensorShapeProto* proto) const {
  proto->Clear();
  if (unknown_rank_) {
    proto->set_unknown_rank(true);
    return;
  }
  for (int64_t d : dims_) proto->add_dim()->set_size(d);
}

bool PartialTensorShape::IsFullyDefined() const {
  if (unknown_rank_) return false;
  for (int64_t d : dims_)
    if (d < 0) return false;
  return true;
}

StatusOr<TensorShape> PartialTensorShape::AsTensorShape() const {
  if (!IsFullyDefined()) {
    return errors::InvalidArgument("Shape ", DebugString(), " is not fully defined");
  }
  return TensorShape::Make(dims_);
}

int64_t PartialTensorShape::num_elements() const {
  if (!IsFullyDefined()) return -1;
  int64_t n;
  if (!CheckedProduct(dims_, &n)) return -1;
  return n;
}

bool PartialTensorShape::IsCompatibleWith(const PartialTensorShape& other) const {
  if (unknown_rank_ || other.unknown_rank_) return true;
  if (dims_.size() != other.dims_.size()) return false;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i] >= 0 && other.dims_[i] >= 0 && dims_[i] != other.dims_[i]) return false;
  }
  return true;
}

StatusOr<PartialTensorShape> PartialTensorShape::MergeWith(
    const PartialTensorShape& other) const {
  if (unknown_rank_) return other;
  if (other.unknown_rank_) return *this;
  if (dims_.size() != other.dims_.size()) {
    return errors::InvalidArgument("Cannot merge shapes ", DebugString(), " and ",
                                   other.DebugString(), ": ranks differ");
  }
  PartialTensorShape out = *this;
  for (size_t i = 0; i < dims_.size(); ++i) {
    const int64_t a = dims_[i], b = other.dims_[i];
    if (a >= 0 && b >= 0 && a != b) {
      return errors::InvalidArgument("Cannot merge shapes ", DebugString(), " and ",
                                     other.DebugString(), ": dimension ", i, " is ", a,
                                     " vs ", b);
    }
    out.dims_[i] = a >= 0 ? a : b;
  }
  return out;
}

std::string PartialTensorShape::DebugString() const {
  if (unknown_rank_) return "<unknown>";
  return absl::StrCat("[", absl::StrJoin(dims_, ",", [](std::string* out, int64_t d) {
                        if (d < 0) out->append("?");
                        else absl::StrAppend(out, d);
                      }),
                      "]");
}

}  // namespace tensorflux
