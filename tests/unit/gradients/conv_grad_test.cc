// Numeric gradient checks (float64 central differences) of the Conv2D family
// (gradients/conv_grad.cc): Conv2D and DepthwiseConv2dNative with VALID/SAME/EXPLICIT padding,
// strides, dilations, NCHW and groups, and both backprop ops of each (whose gradients are the
// other two ops of the family), with the int32 sizes inputs as constants. Small shapes keep the
// full Jacobians cheap.
#include <cstdint>
#include <vector>

#include "gradient_checker.h"

namespace tensorflux::gradient_check {
namespace {

Tensor Sizes(std::vector<int32_t> v) {
  return Tensor::FromVector<int32_t>(absl::Span<const int32_t>(v),
                                     TensorShape({static_cast<int64_t>(v.size())}));
}

GradAttrs Attrs(std::vector<int64_t> strides, const char* padding,
                std::vector<int64_t> dilations = {1, 1, 1, 1}, const char* format = "NHWC",
                std::vector<int64_t> pads = {}) {
  GradAttrs a = {{"strides", MakeAttr(absl::Span<const int64_t>(strides))},
                 {"padding", MakeAttr(padding)},
                 {"dilations", MakeAttr(absl::Span<const int64_t>(dilations))},
                 {"data_format", MakeAttr(format)}};
  if (!pads.empty()) a.push_back({"explicit_paddings", MakeAttr(absl::Span<const int64_t>(pads))});
  return a;
}

GradCheckRow Forward(const char* op, const char* label, TensorShape x, TensorShape f,
                     GradAttrs attrs) {
  GradCheckRow r;
  r.op = op;
  r.label = label;
  r.shapes = {x, f};
  r.attrs = std::move(attrs);
  return r;
}

// BackpropInput(input_sizes = const, filter, out_backprop).
GradCheckRow BackpropInput(const char* op, const char* label, std::vector<int32_t> input_sizes,
                           TensorShape f, TensorShape dy, GradAttrs attrs) {
  GradCheckRow r;
  r.op = op;
  r.label = label;
  r.shapes = {f, dy};
  r.consts = {{0, Sizes(std::move(input_sizes))}};
  r.attrs = std::move(attrs);
  return r;
}

// BackpropFilter(input, filter_sizes = const, out_backprop).
GradCheckRow BackpropFilter(const char* op, const char* label, TensorShape x,
                            std::vector<int32_t> filter_sizes, TensorShape dy, GradAttrs attrs) {
  GradCheckRow r;
  r.op = op;
  r.label = label;
  r.shapes = {x, dy};
  r.consts = {{1, Sizes(std::move(filter_sizes))}};
  r.attrs = std::move(attrs);
  return r;
}

const std::vector<GradCheckRow>& ConvRows() {
  static const auto* rows = new std::vector<GradCheckRow>{
      Forward("Conv2D", "valid", {2, 4, 4, 2}, {3, 3, 2, 3}, Attrs({1, 1, 1, 1}, "VALID")),
      Forward("Conv2D", "same_stride2", {1, 5, 4, 2}, {3, 2, 2, 2}, Attrs({1, 2, 2, 1}, "SAME")),
      Forward("Conv2D", "dilated_same", {1, 5, 5, 1}, {2, 3, 1, 2},
              Attrs({1, 1, 1, 1}, "SAME", {1, 2, 2, 1})),
      Forward("Conv2D", "explicit", {1, 3, 4, 2}, {2, 2, 2, 2},
              Attrs({1, 1, 2, 1}, "EXPLICIT", {1, 1, 1, 1}, "NHWC", {0, 0, 1, 2, 0, 1, 0, 0})),
      Forward("Conv2D", "nchw", {1, 2, 4, 3}, {2, 2, 2, 2},
              Attrs({1, 1, 1, 1}, "SAME", {1, 1, 1, 1}, "NCHW")),
      Forward("Conv2D", "grouped", {1, 3, 3, 4}, {2, 2, 2, 4}, Attrs({1, 1, 1, 1}, "SAME")),
      BackpropInput("Conv2DBackpropInput", "same_stride2", {1, 5, 4, 2}, {3, 2, 2, 2},
                    {1, 3, 2, 2}, Attrs({1, 2, 2, 1}, "SAME")),
      BackpropInput("Conv2DBackpropInput", "valid_dilated", {1, 5, 5, 2}, {2, 2, 2, 1},
                    {1, 3, 3, 1}, Attrs({1, 1, 1, 1}, "VALID", {1, 2, 2, 1})),
      BackpropFilter("Conv2DBackpropFilter", "same_stride2", {1, 5, 4, 2}, {3, 2, 2, 2},
                     {1, 3, 2, 2}, Attrs({1, 2, 2, 1}, "SAME")),
      BackpropFilter("Conv2DBackpropFilter", "explicit_nchw", {1, 2, 3, 3}, {2, 2, 2, 2},
                     {1, 2, 3, 3}, Attrs({1, 1, 1, 1}, "EXPLICIT", {1, 1, 1, 1}, "NCHW",
                                         {0, 0, 0, 0, 1, 0, 0, 1})),
      Forward("DepthwiseConv2dNative", "valid_mult2", {2, 4, 4, 2}, {3, 3, 2, 2},
              Attrs({1, 1, 1, 1}, "VALID")),
      Forward("DepthwiseConv2dNative", "same_stride2_dilated", {1, 5, 5, 3}, {2, 2, 3, 1},
              Attrs({1, 2, 2, 1}, "SAME", {1, 2, 1, 1})),
      Forward("DepthwiseConv2dNative", "nchw", {1, 2, 4, 4}, {2, 2, 2, 2},
              Attrs({1, 1, 1, 1}, "SAME", {1, 1, 1, 1}, "NCHW")),
      BackpropInput("DepthwiseConv2dNativeBackpropInput", "same", {1, 4, 4, 2}, {3, 3, 2, 2},
                    {1, 4, 4, 4}, Attrs({1, 1, 1, 1}, "SAME")),
      BackpropFilter("DepthwiseConv2dNativeBackpropFilter", "valid_stride2", {1, 5, 5, 2},
                     {2, 2, 2, 2}, {1, 2, 2, 4}, Attrs({1, 2, 2, 1}, "VALID")),
  };
  return *rows;
}
TX_GRAD_CHECK_ROWS(Conv, ConvRows());

}  // namespace
}  // namespace tensorflux::gradient_check
