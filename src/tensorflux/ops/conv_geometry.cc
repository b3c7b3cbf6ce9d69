#include "tensorflux/ops/conv_geometry.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tensorflux/framework/node_def_util.h"

namespace tensorflux {
namespace conv {
namespace {

// Largest size or count we accept anywhere (leaves headroom so products of two checked values
// cannot wrap before they are checked).
constexpr int64_t kMaxSize = int64_t{1} << 40;

Status ReadFourInts(const NodeDef& def, const ConvAttrs& a, const char* name, int64_t default_hw,
                    int64_t* rows, int64_t* cols) {
  if (FindAttr(def, name) == nullptr) {  // ops without dilations
    *rows = *cols = default_hw;
    return OkStatus();
  }
  std::vector<int64_t> v;
  TX_RETURN_IF_ERROR(GetNodeAttr(def, name, &v));
  if (v.size() != 4) {
    return errors::InvalidArgument(a.Prefix(), name, " must have 4 elements (one per dim), got ",
                                   v.size());
  }
  const int n = 0, c = a.DepthDim();
  if (v[n] != 1 || v[c] != 1) {
    return errors::Unimplemented(a.Prefix(), "current implementation does not support ", name,
                                   " in the batch and depth dimensions (", name, " = [",
                                   absl::StrJoin(v, ", "), "])");
  }
  *rows = v[a.RowDim()];
  *cols = v[a.ColDim()];
  if (*rows <= 0 || *cols <= 0 || *rows > kMaxSize || *cols > kMaxSize) {
    return errors::InvalidArgument(a.Prefix(), name, " must be positive (and at most 2^40), got [",
                                   absl::StrJoin(v, ", "), "]");
  }
  return OkStatus();
}

}  // namespace

std::string ConvAttrs::Prefix() const { return absl::StrCat(op, " node '", node, "': "); }

StatusOr<ConvAttrs> ConvAttrs::FromNodeDef(const NodeDef& def) {
  ConvAttrs a;
  a.node = def.name();
  a.op = def.op();
  std::string format = "NHWC";
  if (FindAttr(def, "data_format") != nullptr) {
    TX_RETURN_IF_ERROR(GetNodeAttr(def, "data_format", &format));
  }
  if (format == "NHWC") {
    a.format = DataFormat::kNHWC;
  } else if (format == "NCHW") {
    a.format = DataFormat::kNCHW;
  } else {
    return errors::InvalidArgument(a.Prefix(), "invalid data_format '", format,
                                   "' (expected NHWC or NCHW)");
  }
  std::string padding;
  TX_RETURN_IF_ERROR(GetNodeAttr(def, "padding", &padding));
  if (padding == "VALID") {
    a.padding = Padding::kValid;
  } else if (padding == "SAME") {
    a.padding = Padding::kSame;
  } else if (padding == "EXPLICIT") {
    a.padding = Padding::kExplicit;
  } else {
    return errors::InvalidArgument(a.Prefix(), "invalid padding '", padding,
                                   "' (expected SAME, VALID or EXPLICIT)");
  }
  TX_RETURN_IF_ERROR(ReadFourInts(def, a, "strides", 1, &a.stride_rows, &a.stride_cols));
  TX_RETURN_IF_ERROR(ReadFourInts(def, a, "dilations", 1, &a.dilation_rows, &a.dilation_cols));
  std::vector<int64_t> pads;
  if (FindAttr(def, "explicit_paddings") != nullptr) {
    TX_RETURN_IF_ERROR(GetNodeAttr(def, "explicit_paddings", &pads));
  }
  if (a.padding == Padding::kExplicit) {
    if (pads.size() != 8) {
      return errors::InvalidArgument(a.Prefix(),
                                     "explicit_paddings must have 8 elements (before and after "
                                     "for each of the 4 dims) with padding EXPLICIT, got ",
                                     pads.size());
    }
    for (int64_t p : pads) {
      if (p < 0 || p > kMaxSize) {
        return errors::InvalidArgument(a.Prefix(), "explicit_paddings must be non-negative (and "
                                       "at most 2^40), got [", absl::StrJoin(pads, ", "), "]");
      }
    }
    const int c = a.DepthDim();
    if (pads[0] != 0 || pads[1] != 0 || pads[2 * c] != 0 || pads[2 * c + 1] != 0) {
      return errors::InvalidArgument(a.Prefix(), "explicit_paddings must be zero for the batch "
                                     "and depth dims, got [", absl::StrJoin(pads, ", "), "]");
    }
    a.explicit_pads = {pads[2 * a.RowDim()], pads[2 * a.RowDim() + 1], pads[2 * a.ColDim()],
                       pads[2 * a.ColDim() + 1]};
  } else if (!pads.empty()) {
    return errors::InvalidArgument(a.Prefix(), "explicit_paddings must be empty unless padding "
                                   "is EXPLICIT, got ", pads.size(), " elements");
  }
  return a;
}

StatusOr<WindowedSize> ComputeWindowedSize(const ConvAttrs& attrs, int64_t in, int64_t k,
                                           int64_t dilation, int64_t stride, int64_t explicit_before,
                                           int64_t explicit_after, std::string_view dim_name) {
  if (in > kMaxSize || k > kMaxSize) {
    return errors::InvalidArgument(attrs.Prefix(), dim_name, " size too large: input ", in,
                                   ", filter ", k);
  }
  // (k - 1) * dilation + 1 with both below 2^40 may exceed int64: check in double first.
  if (static_cast<double>(k - 1) * static_cast<double>(dilation) > static_cast<double>(kMaxSize)) {
    return errors::InvalidArgument(attrs.Prefix(), "effective filter size (", k, " - 1) * ",
                                   dilation, " + 1 too large in ", dim_name);
  }
  const int64_t k_eff = (k - 1) * dilation + 1;
  WindowedSize w;
  switch (attrs.padding) {
    case Padding::kValid:
      // (in - k_eff + stride) / stride; an error when the filter does not fit even once (TF's
      // shape function refuses in < k_eff, though the formula would give 0 for the last stride).
      w.out = in - k_eff < 0 ? -1 : (in - k_eff + stride) / stride;
      break;
    case Padding::kSame: {
      w.out = (in + stride - 1) / stride;
      const int64_t total = std::max<int64_t>(0, (w.out - 1) * stride + k_eff - in);
      w.pad_before = total / 2;
      w.pad_after = total - w.pad_before;
      break;
    }
    case Padding::kExplicit: {
      const int64_t padded = in + explicit_before + explicit_after;
      w.out = padded - k_eff < 0 ? -1 : (padded - k_eff + stride) / stride;
      w.pad_before = explicit_before;
      w.pad_after = explicit_after;
      break;
    }
  }
  if (w.out < 0) {
    return errors::InvalidArgument(attrs.Prefix(), "computed output size would be negative in ",
                                   dim_name, ": input ", in, ", effective filter ", k_eff,
                                   ", stride ", stride, ", pads ", w.pad_before, "/", w.pad_after);
  }
  return w;
}

TensorShape ConvGeometry::InputShape() const {
  return format == DataFormat::kNHWC ? TensorShape({batch, in_rows, in_cols, in_depth})
                                     : TensorShape({batch, in_depth, in_rows, in_cols});
}

TensorShape ConvGeometry::OutputShape() const {
  return format == DataFormat::kNHWC ? TensorShape({batch, out_rows, out_cols, out_depth})
                                     : TensorShape({batch, out_depth, out_rows, out_cols});
}

TensorShape ConvGeometry::FilterShape() const {
  if (depthwise) return TensorShape({filter_rows, filter_cols, in_depth, group_out});
  return TensorShape({filter_rows, filter_cols, group_in, out_depth});
}

double ConvGeometry::Flops() const {
  return 2.0 * static_cast<double>(batch) * static_cast<double>(out_rows) *
         static_cast<double>(out_cols) * static_cast<double>(filter_rows) *
         static_cast<double>(filter_cols) * static_cast<double>(group_in) *
         static_cast<double>(out_depth);
}

bool ConvGeometry::operator==(const ConvGeometry& o) const {
  return format == o.format && batch == o.batch && in_rows == o.in_rows && in_cols == o.in_cols &&
         in_depth == o.in_depth && filter_rows == o.filter_rows && filter_cols == o.filter_cols &&
         groups == o.groups && group_in == o.group_in && group_out == o.group_out &&
         stride_rows == o.stride_rows && stride_cols == o.stride_cols &&
         dilation_rows == o.dilation_rows && dilation_cols == o.dilation_cols &&
         pad_top == o.pad_top && pad_bottom == o.pad_bottom && pad_left == o.pad_left &&
         pad_right == o.pad_right && depthwise == o.depthwise;
}

StatusOr<ConvGeometry> ComputeConvGeometry(const ConvAttrs& attrs, const TensorShape& input,
                                           const TensorShape& filter, bool depthwise) {
  if (input.dims() != 4) {
    return errors::InvalidArgument(attrs.Prefix(), "input must be 4-dimensional, got shape ",
                                   input.DebugString());
  }
  if (filter.dims() != 4) {
    return errors::InvalidArgument(attrs.Prefix(), "filter must be 4-dimensional, got shape ",
                                   filter.DebugString());
  }
  // A Conv2D filter with no output channels (dim 3) gives an empty output, as in TF.
  for (int d = 0; d < (depthwise ? 4 : 3); ++d) {
    if (filter.dim_size(d) == 0) {
      return errors::InvalidArgument(attrs.Prefix(), "filter must not have zero elements (all "
                                     "dims must be non-zero), got shape ", filter.DebugString());
    }
  }
  ConvGeometry g;
  g.format = attrs.format;
  g.depthwise = depthwise;
  g.batch = input.dim_size(0);
  g.in_rows = input.dim_size(attrs.RowDim());
  g.in_cols = input.dim_size(attrs.ColDim());
  g.in_depth = input.dim_size(attrs.DepthDim());
  g.filter_rows = filter.dim_size(0);
  g.filter_cols = filter.dim_size(1);
  if (depthwise) {
    if (filter.dim_size(2) != g.in_depth) {
      return errors::InvalidArgument(attrs.Prefix(), "input depth ", g.in_depth,
                                     " must equal the filter's in depth (dim 2) ",
                                     filter.dim_size(2), "; input ", input.DebugString(),
                                     ", filter ", filter.DebugString());
    }
    g.groups = g.in_depth;
    g.group_in = 1;
    g.group_out = filter.dim_size(3);
  } else {
    const int64_t patch_depth = filter.dim_size(2);
    if (g.in_depth % patch_depth != 0) {
      return errors::InvalidArgument(attrs.Prefix(), "input depth ", g.in_depth,
                                     " must be evenly divisible by the filter's in depth ",
                                     patch_depth, "; input ", input.DebugString(), ", filter ",
                                     filter.DebugString());
    }
    g.groups = g.in_depth / patch_depth;
    g.group_in = patch_depth;
    if (filter.dim_size(3) % g.groups != 0) {
      return errors::InvalidArgument(attrs.Prefix(), "filter out depth ", filter.dim_size(3),
                                     " must be evenly divisible by the number of groups ",
                                     g.groups, " (input depth / filter in depth)");
    }
    g.group_out = filter.dim_size(3) / g.groups;
  }
  // in_depth == 0 (an empty channel dim): groups 0 would divide by zero below; no work anyway.
  if (g.groups == 0) {
    return errors::InvalidArgument(attrs.Prefix(), "input depth must be positive, got shape ",
                                   input.DebugString());
  }
  g.out_depth = g.groups * g.group_out;  // <= filter elements, no overflow
  g.stride_rows = attrs.stride_rows;
  g.stride_cols = attrs.stride_cols;
  g.dilation_rows = attrs.dilation_rows;
  g.dilation_cols = attrs.dilation_cols;
  TX_ASSIGN_OR_RETURN(WindowedSize r,
                      ComputeWindowedSize(attrs, g.in_rows, g.filter_rows, g.dilation_rows,
                                          g.stride_rows, attrs.explicit_pads[0],
                                          attrs.explicit_pads[1], "rows"));
  TX_ASSIGN_OR_RETURN(WindowedSize c,
                      ComputeWindowedSize(attrs, g.in_cols, g.filter_cols, g.dilation_cols,
                                          g.stride_cols, attrs.explicit_pads[2],
                                          attrs.explicit_pads[3], "cols"));
  g.out_rows = r.out;
  g.pad_top = r.pad_before;
  g.pad_bottom = r.pad_after;
  g.out_cols = c.out;
  g.pad_left = c.pad_before;
  g.pad_right = c.pad_after;
  const int64_t out_dims[] = {g.batch, g.out_rows, g.out_cols, g.out_depth};
  if (!TensorShape::Make(out_dims).ok()) {
    return errors::InvalidArgument(attrs.Prefix(), "output shape [", absl::StrJoin(out_dims, ", "),
                                   "] has too many elements");
  }
  return g;
}

StatusOr<TensorShape> SizesToShape(const ConvAttrs& attrs, const std::vector<int64_t>& sizes,
                                   std::string_view what) {
  if (sizes.size() != 4) {
    return errors::InvalidArgument(attrs.Prefix(), what, " must have 4 elements, got ",
                                   sizes.size());
  }
  for (int64_t s : sizes) {
    if (s < 0) {
      return errors::InvalidArgument(attrs.Prefix(), what, " must be non-negative, got [",
                                     absl::StrJoin(sizes, ", "), "]");
    }
  }
  auto shape = TensorShape::Make(sizes);
  if (!shape.ok()) {
    return errors::InvalidArgument(attrs.Prefix(), what, " [", absl::StrJoin(sizes, ", "),
                                   "] has too many elements");
  }
  return *shape;
}

StatusOr<TensorShape> InputSizesToShape(const ConvAttrs& attrs, const std::vector<int64_t>& sizes,
                                        const TensorShape& out_backprop,
                                        int64_t depth_from_filter) {
  if (sizes.size() != 2) return SizesToShape(attrs, sizes, "input_sizes");
  if (out_backprop.dims() != 4) {
    return errors::InvalidArgument(attrs.Prefix(), "out_backprop must be 4-dimensional, got ",
                                   out_backprop.DebugString());
  }
  std::vector<int64_t> full(4);
  full[0] = out_backprop.dim_size(0);
  full[attrs.RowDim()] = sizes[0];
  full[attrs.ColDim()] = sizes[1];
  full[attrs.DepthDim()] = depth_from_filter;
  return SizesToShape(attrs, full, "input_sizes");
}

Status CheckOutBackpropShape(const ConvAttrs& attrs, const ConvGeometry& g,
                             const TensorShape& out_backprop) {
  if (out_backprop != g.OutputShape()) {
    return errors::InvalidArgument(attrs.Prefix(), "out_backprop shape ",
                                   out_backprop.DebugString(),
                                   " does not match the computed output shape ",
                                   g.OutputShape().DebugString());
  }
  return OkStatus();
}

}  // namespace conv
}  // namespace tensorflux
