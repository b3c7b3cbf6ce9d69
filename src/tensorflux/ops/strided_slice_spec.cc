// StridedSlice index arithmetic (see strided_slice_spec.h).
#include "tensorflux/ops/strided_slice_spec.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tensorflux {
namespace {

bool Bit(int64_t mask, int64_t i) { return i < 63 && ((mask >> i) & 1) != 0; }

// One input dim's part of the dense spec.
struct DenseEntry {
  int64_t sparse_index = -1;  // -1: filled by the ellipsis (the whole dim)
  bool shrink = false;
};

constexpr int64_t kNewAxis = -2;

}  // namespace

Status ComputeStridedSlice(const PartialTensorShape& input, const StridedSliceArgs& a,
                           StridedSliceSpec* spec) {
  const int64_t n = a.num_entries;
  const int rank = input.dims();
  for (const auto* v : {&a.begin, &a.end, &a.strides}) {
    if (v->has_value() && static_cast<int64_t>((*v)->size()) != n) {
      return errors::InvalidArgument(
          "Expected begin, end, and strides to be 1D equal size tensors, but got ", n,
          " entries and ", (*v)->size());
    }
  }
  const uint64_t ellipsis_bits = static_cast<uint64_t>(a.ellipsis_mask);
  if ((ellipsis_bits & (ellipsis_bits - 1)) != 0) {
    return errors::InvalidArgument("Multiple ellipses in slice spec not allowed");
  }
  bool has_ellipsis = false;
  int64_t num_real = 0;  // entries that consume an input dim
  for (int64_t i = 0; i < n; ++i) {
    if (Bit(a.ellipsis_mask, i)) {
      has_ellipsis = true;
    } else if (!Bit(a.new_axis_mask, i)) {
      ++num_real;
    }
  }
  // Dense spec: for every input dim, the sparse entry that indexes it; and the output layout as
  // a list of input dims (or kNewAxis), shrunk dims left out.
  std::vector<DenseEntry> dense;
  std::vector<int64_t> final_dims;
  auto add_full_dims = [&](int64_t count) {
    for (int64_t k = 0; k < count; ++k) {
      final_dims.push_back(static_cast<int64_t>(dense.size()));
      dense.push_back(DenseEntry{});
    }
  };
  for (int64_t i = 0; i < n; ++i) {
    if (Bit(a.ellipsis_mask, i)) {
      const int64_t fill = rank - num_real;
      if (fill < 0) {
        return errors::InvalidArgument("Index out of range using input dim ", rank,
                                       "; input has only ", rank, " dims");
      }
      add_full_dims(fill);
    } else if (Bit(a.new_axis_mask, i)) {
      final_dims.push_back(kNewAxis);
    } else {
      if (static_cast<int64_t>(dense.size()) >= rank) {
        return errors::InvalidArgument("Index out of range using input dim ", dense.size(),
                                       "; input has only ", rank, " dims");
      }
      const bool shrink = Bit(a.shrink_axis_mask, i);
      if (!shrink) final_dims.push_back(static_cast<int64_t>(dense.size()));
      dense.push_back(DenseEntry{i, shrink});
    }
  }
  if (!has_ellipsis) add_full_dims(rank - static_cast<int64_t>(dense.size()));

  spec->begin.assign(rank, 0);
  spec->stride.assign(rank, 1);
  spec->processing_shape.assign(rank, -1);
  bool identity = true, dim0 = true;
  for (int j = 0; j < rank; ++j) {
    const int64_t dim = input.dim_size(j);
    const DenseEntry& e = dense[j];
    if (e.sparse_index < 0) {  // whole dim
      spec->processing_shape[j] = dim;
      continue;
    }
    const int64_t i = e.sparse_index;
    const bool stride_known = a.strides.has_value();
    const int64_t stride = stride_known ? (*a.strides)[i] : 1;
    if (stride_known && stride == 0) {
      return errors::InvalidArgument("strides[", i, "] must be non-zero");
    }
    spec->stride[j] = stride_known ? stride : -1;
    if (e.shrink) {
      if (stride_known && stride < 0) {
        return errors::InvalidArgument("only stride 1 allowed on non-range indexing.");
      }
      spec->stride[j] = 1;
      spec->processing_shape[j] = 1;
      identity = false;
      if (j > 0) dim0 = false;
      if (!a.begin.has_value() || dim < 0) {
        spec->begin[j] = -1;
        continue;
      }
      const int64_t b = (*a.begin)[i];
      const int64_t fwd = b < 0 ? b + dim : b;
      if (fwd < 0 || fwd >= dim) {
        return errors::InvalidArgument("slice index ", b, " of dimension ", j,
                                       " out of bounds.");
      }
      spec->begin[j] = fwd;
      continue;
    }
    const bool begin_masked = Bit(a.begin_mask, i), end_masked = Bit(a.end_mask, i);
    if (!stride_known || dim < 0 || (!begin_masked && !a.begin.has_value()) ||
        (!end_masked && !a.end.has_value())) {
      spec->begin[j] = -1;
      spec->processing_shape[j] = -1;
      identity = dim0 = false;
      continue;
    }
    // Valid positions in the stride's direction: [0, dim] going up, [-1, dim - 1] going down.
    const int64_t lo = stride > 0 ? 0 : -1, hi = stride > 0 ? dim : dim - 1;
    auto canonical = [&](int64_t x, bool masked, bool is_end) {
      if (masked) return (stride > 0) == is_end ? hi : lo;
      const int64_t fwd = x < 0 ? x + dim : x;
      return std::clamp(fwd, lo, hi);
    };
    const int64_t b = canonical(begin_masked ? 0 : (*a.begin)[i], begin_masked, false);
    const int64_t en = canonical(end_masked ? 0 : (*a.end)[i], end_masked, true);
    const int64_t len = en - b;
    int64_t size = 0;
    if ((stride > 0 && len > 0) || (stride < 0 && len < 0)) {
      // ceil(len / stride) with both of the same sign, without overflow.
      const int64_t q = len / stride;
      size = q + (len % stride != 0 ? 1 : 0);
    }
    spec->begin[j] = b;
    spec->processing_shape[j] = size;
    // With at most one element the stride is irrelevant; 1 keeps stride * dim stride in range.
    if (size <= 1) spec->stride[j] = 1;
    const bool whole = stride == 1 && b == 0 && size == dim;
    if (!whole) identity = false;
    if (j > 0 ? !whole : stride != 1) dim0 = false;
  }
  spec->final_shape.clear();
  for (int64_t d : final_dims) {
    spec->final_shape.push_back(d == kNewAxis ? 1 : spec->processing_shape[d]);
  }
  if (spec->final_shape.size() > TensorShape::kMaxDims) {
    return errors::InvalidArgument("StridedSlice output would have ", spec->final_shape.size(),
                                   " dims; at most ", TensorShape::kMaxDims, " are supported");
  }
  spec->is_identity = identity;
  spec->is_dim0_slice = dim0 && rank > 0;
  return OkStatus();
}

}  // namespace tensorflux
