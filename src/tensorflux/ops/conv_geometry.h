// Geometry of a 2-D convolution, shared by the Conv2D-family shape functions (ops/conv_ops.cc),
// the CPU kernels (kernels/cpu/conv_*.cc) and their tests: the attrs TensorFlow's Conv2D,
// Conv2DBackpropInput/Filter and DepthwiseConv2dNative(+BackpropInput/Filter) take, validated,
// and the output size and padding of each spatial dim computed as TF computes them
// (tensorflow/core/framework/kernel_shape_util: GetWindowedOutputSizeVerbose):
//
//   effective filter  k_eff = (k - 1) * dilation + 1
//   VALID     out = ceil((in - k_eff + 1) / stride),      pads 0
//   SAME      out = ceil(in / stride),  total = max(0, (out - 1) * stride + k_eff - in),
//             pad_before = total / 2, pad_after = total - pad_before (the extra one at the end)
//   EXPLICIT  out = floor((in + before + after - k_eff) / stride) + 1, pads from
//             explicit_paddings (8 values: [before, after] per NHWC/NCHW dim; batch/depth 0)
//
// Layouts: data_format NHWC ([N, H, W, C], the default) or NCHW ([N, C, H, W]) for input and
// output; filters HWIO [kh, kw, in / groups, out] for Conv2D and [kh, kw, in, multiplier] for
// DepthwiseConv2dNative. A depthwise convolution is the grouped convolution with groups = in
// and one input channel per group; its filter has the same memory layout as the grouped Conv2D
// filter [kh, kw, 1, in * multiplier] (output channel c * multiplier + m), so one geometry and
// one kernel path serve both. Conv2D with in % filter_in == 0 is grouped the same way.
//
// Every error is INVALID_ARGUMENT naming the node (and the op): wrong rank, channel mismatch,
// bad strides/dilations/padding attrs, a negative output size, overflow of a size.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor_shape.h"
#include "tensorflux/node_def.pb.h"

namespace tensorflux {
namespace conv {

enum class Padding { kValid, kSame, kExplicit };
enum class DataFormat { kNHWC, kNCHW };

// The attrs of one conv node, validated once (at kernel construction and in shape inference).
struct ConvAttrs {
  std::string node;                     // node name, for messages
  std::string op;                       // op name, for messages
  DataFormat format = DataFormat::kNHWC;
  Padding padding = Padding::kValid;
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t dilation_rows = 1, dilation_cols = 1;
  // EXPLICIT only: [top, bottom, left, right].
  std::array<int64_t, 4> explicit_pads = {0, 0, 0, 0};

  // Reads strides, dilations (default 1s when the op has none), padding, explicit_paddings and
  // data_format from `def`. INVALID_ARGUMENT for: strides/dilations not of length 4, a batch or
  // depth stride/dilation other than 1, a non-positive one, an unknown padding or data_format
  // string, explicit_paddings not of length 8 (EXPLICIT) or non-empty (otherwise), a negative
  // explicit padding or one on the batch or depth dim.
  static StatusOr<ConvAttrs> FromNodeDef(const NodeDef& def);

  // Index of the H, W and C dims in the input/output layout.
  int RowDim() const { return format == DataFormat::kNHWC ? 1 : 2; }
  int ColDim() const { return format == DataFormat::kNHWC ? 2 : 3; }
  int DepthDim() const { return format == DataFormat::kNHWC ? 3 : 1; }

  // "Conv2D node 'c': " for messages.
  std::string Prefix() const;
};

// Output size and pads of one spatial dim. INVALID_ARGUMENT (naming attrs' node) when the
// sizes overflow or the output size would be negative. in >= 0, k >= 1 assumed validated.
struct WindowedSize {
  int64_t out = 0, pad_before = 0, pad_after = 0;
};
StatusOr<WindowedSize> ComputeWindowedSize(const ConvAttrs& attrs, int64_t in, int64_t k,
                                           int64_t dilation, int64_t stride, int64_t explicit_before,
                                           int64_t explicit_after, std::string_view dim_name);

// Full geometry of one convolution. Channel counts per group: in_depth = groups * group_in,
// out_depth = groups * group_out.
struct ConvGeometry {
  DataFormat format = DataFormat::kNHWC;
  int64_t batch = 0, in_rows = 0, in_cols = 0, in_depth = 0;
  int64_t filter_rows = 0, filter_cols = 0;
  int64_t groups = 1, group_in = 0, group_out = 0, out_depth = 0;
  int64_t out_rows = 0, out_cols = 0;
  int64_t stride_rows = 1, stride_cols = 1, dilation_rows = 1, dilation_cols = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  bool depthwise = false;

  TensorShape InputShape() const;   // in data_format
  TensorShape OutputShape() const;  // in data_format
  TensorShape FilterShape() const;  // HWIO, or [kh, kw, in, multiplier] for depthwise
  // 2 * N * Ho * Wo * kh * kw * group_in * out_depth (multiply-adds counted as 2).
  double Flops() const;
  bool operator==(const ConvGeometry& o) const;
  template <typename H>
  friend H AbslHashValue(H h, const ConvGeometry& g) {
    return H::combine(std::move(h), g.format, g.batch, g.in_rows, g.in_cols, g.in_depth,
                      g.filter_rows, g.filter_cols, g.groups, g.group_in, g.group_out,
                      g.stride_rows, g.stride_cols, g.dilation_rows, g.dilation_cols, g.pad_top,
                      g.pad_bottom, g.pad_left, g.pad_right, g.depthwise);
  }
};

// The geometry from the input shape (in attrs.format) and the filter shape. `depthwise` reads
// the filter as [kh, kw, in, multiplier]. INVALID_ARGUMENT: input or filter not rank 4, a filter
// with a zero dim, in-channel mismatch (Conv2D: input depth not a multiple of the filter's in
// depth, or the filter's out depth not a multiple of the groups; depthwise: input depth !=
// filter dim 2), a negative output size, or an element count that overflows int64.
StatusOr<ConvGeometry> ComputeConvGeometry(const ConvAttrs& attrs, const TensorShape& input,
                                           const TensorShape& filter, bool depthwise);

// Reads an input_sizes / filter_sizes vector (int32 or int64, 1-D) as a shape. `input_sizes`
// may also have 2 elements (the spatial dims, as TF allows), with batch from `out_backprop`
// and depth from the filter (`depth_from_filter`). INVALID_ARGUMENT for a wrong length or a
// negative size.
StatusOr<TensorShape> SizesToShape(const ConvAttrs& attrs, const std::vector<int64_t>& sizes,
                                   std::string_view what);
StatusOr<TensorShape> InputSizesToShape(const ConvAttrs& attrs, const std::vector<int64_t>& sizes,
                                        const TensorShape& out_backprop, int64_t depth_from_filter);

// INVALID_ARGUMENT unless out_backprop's shape is the geometry's output shape.
Status CheckOutBackpropShape(const ConvAttrs& attrs, const ConvGeometry& g,
                             const TensorShape& out_backprop);

}  // namespace conv
}  // namespace tensorflux
