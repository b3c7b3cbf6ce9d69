// The 2-D pooling window geometry shared by the pooling ops' shape functions and CPU kernels
// (ops/pooling_ops.cc, kernels/cpu/pooling_ops.cc): attr validation and output size and
// padding, as TensorFlow's MaxPool / AvgPool compute them.
//
// Layout NHWC: input [batch, in_rows, in_cols, depth] -> output [batch, out_rows, out_cols, depth].
//   VALID:    out = ceil((in - k + 1) / s); the window must fit: in >= k.
//   SAME:     out = ceil(in / s); pad_total = max((out - 1) * s + k - in, 0), of which
//             pad_before = pad_total / 2 and the rest after (TF's convention).
//   EXPLICIT: (MaxPool only) explicit_paddings = [0, 0, top, bottom, left, right, 0, 0];
//             out = (in + before + after - k) / s + 1, each pad < k so no window is all padding.
// A window never lies entirely in padding (pad_before, pad_after < k), so every output element
// has at least one valid input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tensorflux/core/status.h"

namespace tensorflux {

struct PoolAttrs {
  std::vector<int32_t> ksize;              // [1, k_rows, k_cols, 1]
  std::vector<int32_t> strides;            // [1, s_rows, s_cols, 1]
  std::string padding;                     // SAME, VALID or EXPLICIT
  std::vector<int64_t> explicit_paddings;  // 8 values when padding is EXPLICIT, else empty
  std::string data_format = "NHWC";
};

struct PoolWindow {
  int64_t batch = 0, in_rows = 0, in_cols = 0, depth = 0;
  int64_t k_rows = 1, k_cols = 1, s_rows = 1, s_cols = 1;
  int64_t out_rows = 0, out_cols = 0;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;

  int64_t InputSize() const { return batch * in_rows * in_cols * depth; }
  int64_t OutputSize() const { return batch * out_rows * out_cols * depth; }
};

// Checks the attrs alone: ksize and strides have 4 positive entries with 1 for batch and depth;
// padding is SAME, VALID or EXPLICIT (with 8 non-negative explicit_paddings, zero for batch and
// depth, each below the window size); data_format is NHWC (the CPU kernels' only layout).
// INVALID_ARGUMENT naming `op` otherwise.
Status ValidatePoolAttrs(std::string_view op, const PoolAttrs& attrs);

// The window geometry for an NHWC input of `dims` (4 entries; a -1 entry, from a shape function,
// gives -1 output sizes). Calls ValidatePoolAttrs. INVALID_ARGUMENT when the input is not rank 4
// or a VALID / EXPLICIT window is larger than the (padded) input.
Status ComputePoolWindow(std::string_view op, const PoolAttrs& attrs,
                         const std::vector<int64_t>& dims, PoolWindow* w);

}  // namespace tensorflux
