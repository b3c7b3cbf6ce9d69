// StridedSlice's index arithmetic, shared by its shape function, its CPU kernel and
// StridedSliceGrad (TensorFlow's semantics, tf.strided_slice / Python slicing):
//
// `begin`, `end`, `strides` form a "sparse" spec of n entries. Entry i is
//  - the ellipsis (bit i of ellipsis_mask; at most one): as many full dims as needed so that the
//    entries that consume input dims line up with the input's rank; without one, an implicit
//    ellipsis follows the last entry;
//  - a new axis (bit i of new_axis_mask, unless it is the ellipsis): an output dim of size 1 that
//    consumes no input dim;
//  - otherwise a range over the next input dim: begin[i] (ignored when bit i of begin_mask is
//    set: the start of the dim in the stride's direction), end[i] (likewise end_mask), stride
//    strides[i] != 0. Negative indices count from the end; out-of-range ones are clamped;
//  - with bit i of shrink_axis_mask, a single index begin[i] (which must be in [-dim, dim)) and
//    the dim is removed from the output.
// Example: x[1:, ..., ::-1, tf.newaxis, 2] on a rank-4 x.
//
// Errors (INVALID_ARGUMENT): mismatched begin/end/strides lengths, several ellipses, a zero
// stride, a non-positive stride with shrink_axis, a shrink index out of range, more indexed dims
// than the input has, output rank above 8.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor_shape.h"

namespace tensorflux {

struct StridedSliceArgs {
  int64_t num_entries = 0;  // n, the length of begin/end/strides
  // The values when known (nullopt during shape inference for non-constant inputs).
  std::optional<std::vector<int64_t>> begin, end, strides;
  int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0,
          shrink_axis_mask = 0;
};

struct StridedSliceSpec {
  // Per input dim (rank entries). begin: index of the first element taken; stride: step;
  // processing_shape: elements taken (1 for a shrunk dim). -1 where unknown.
  absl::InlinedVector<int64_t, 8> begin, stride, processing_shape;
  // The output shape (new axes inserted, shrunk dims removed); -1 for unknown dims.
  absl::InlinedVector<int64_t, 8> final_shape;
  // Every input dim is taken whole, in order, with stride 1: the output is the input, reshaped.
  bool is_identity = false;
  // Every stride is 1 and, apart from dim 0, every dim is taken whole: the output is a dim-0
  // slice of the input (rows [begin[0], begin[0] + processing_shape[0])), reshaped.
  bool is_dim0_slice = false;
};

// Computes the spec for an input of shape `input` (known rank; dims may be -1 during shape
// inference, in which case the sizes they produce are -1).
Status ComputeStridedSlice(const PartialTensorShape& input, const StridedSliceArgs& args,
                           StridedSliceSpec* spec);

}  // namespace tensorflux
