// The 2-D convolution family with TensorFlow's names, inputs, attrs and semantics:
//   Conv2D(input, filter)                                   -> output
//   Conv2DBackpropInput(input_sizes, filter, out_backprop)  -> d(output)/d(input) applied to it
//   Conv2DBackpropFilter(input, filter_sizes, out_backprop) -> d(output)/d(filter) applied to it
//   DepthwiseConv2dNative(input, filter) and its BackpropInput / BackpropFilter, same inputs.
// Layouts: input/output NHWC (default) or NCHW per data_format; Conv2D filter HWIO
// [kh, kw, in / groups, out]; depthwise filter [kh, kw, in, channel_multiplier] with output
// channel c * channel_multiplier + m. input_sizes / filter_sizes are int32 vectors (4 elements;
// input_sizes may have 2, the spatial dims). Geometry and validation: ops/conv_geometry.h.
// CPU kernels: kernels/cpu/conv_ops.cc (float32 through oneDNN, half/bfloat16 widened to float32
// around it, float64 direct loops; no int32 kernel). Errors: INVALID_ARGUMENT naming the node.
// Gradients: gradients/conv_grad.cc.
//   _FusedConv2D(input, filter, args; Conv2D's attrs, num_args, fused_ops, epsilon,
//     leakyrelu_alpha): TF's op made by the remapper (passes/remapper.cc): Conv2D followed by
//     fused_ops (ops/fused_ops_spec.h: BiasAdd with args = [bias [out channels]], optionally
//     Relu/Relu6/Elu/LeakyRelu). No gradient: fusion runs after autodiff.
#include <vector>

#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"
#include "tensorflux/ops/array_shape_util.h"
#include "tensorflux/ops/conv_geometry.h"
#include "tensorflux/ops/fused_ops_spec.h"

namespace tensorflux {
namespace {

using conv::ConvAttrs;

// Output shape of a forward conv from partial input/filter shapes: unknown dims stay unknown;
// everything known is validated as the kernel validates it.
Status ForwardShape(InferenceContext* c, bool depthwise) {
  TX_ASSIGN_OR_RETURN(ConvAttrs a, ConvAttrs::FromNodeDef(c->node_def()));
  TX_RETURN_IF_ERROR(c->WithRank(0, 4));
  TX_RETURN_IF_ERROR(c->WithRank(1, 4));
  const PartialTensorShape& in = c->input(0);
  const PartialTensorShape& f = c->input(1);
  if (in.IsFullyDefined() && f.IsFullyDefined()) {
    TX_ASSIGN_OR_RETURN(TensorShape is, in.AsTensorShape());
    TX_ASSIGN_OR_RETURN(TensorShape fs, f.AsTensorShape());
    TX_ASSIGN_OR_RETURN(conv::ConvGeometry g, conv::ComputeConvGeometry(a, is, fs, depthwise));
    c->set_output(0, g.OutputShape());
    return OkStatus();
  }
  auto dim = [](const PartialTensorShape& s, int d) -> int64_t {
    return s.unknown_rank() ? -1 : s.dim_size(d);
  };
  int64_t depth = -1;
  if (depthwise) {
    const int64_t in_d = dim(in, a.DepthDim()), f_in = dim(f, 2), mult = dim(f, 3);
    if (in_d >= 0 && f_in >= 0 && in_d != f_in) {
      return c->Error(a.Prefix(), "input depth ", in_d, " must equal the filter's in depth ", f_in);
    }
    const int64_t channels = in_d >= 0 ? in_d : f_in;
    if (channels >= 0 && mult >= 0) depth = channels * mult;
  } else {
    const int64_t in_d = dim(in, a.DepthDim()), f_in = dim(f, 2);
    if (in_d >= 0 && f_in > 0 && in_d % f_in != 0) {
      return c->Error(a.Prefix(), "input depth ", in_d,
                      " must be evenly divisible by the filter's in depth ", f_in);
    }
    depth = dim(f, 3);
  }
  int64_t spatial[2] = {-1, -1};
  const int64_t strides[2] = {a.stride_rows, a.stride_cols};
  const int64_t dilations[2] = {a.dilation_rows, a.dilation_cols};
  const int in_dims[2] = {a.RowDim(), a.ColDim()};
  for (int i = 0; i < 2; ++i) {
    const int64_t n = dim(in, in_dims[i]), k = dim(f, i);
    if (n < 0 || k < 0) continue;
    if (k == 0) return c->Error(a.Prefix(), "filter must not have zero elements");
    TX_ASSIGN_OR_RETURN(conv::WindowedSize w,
                        conv::ComputeWindowedSize(a, n, k, dilations[i], strides[i],
                                                  a.explicit_pads[2 * i],
                                                  a.explicit_pads[2 * i + 1],
                                                  i == 0 ? "rows" : "cols"));
    spatial[i] = w.out;
  }
  std::vector<int64_t> out(4);
  out[0] = dim(in, 0);
  out[a.RowDim()] = spatial[0];
  out[a.ColDim()] = spatial[1];
  out[a.DepthDim()] = depth;
  c->set_output(0, PartialTensorShape(out));
  return OkStatus();
}

Status Conv2DShape(InferenceContext* c) { return ForwardShape(c, /*depthwise=*/false); }

// Conv2D's shape, and the bias against its output channels.
Status FusedConv2DShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(Conv2DShape(c));
  TX_RETURN_IF_ERROR(FusedOpsSpec::FromNodeDef(c->node_def()).status());
  TX_ASSIGN_OR_RETURN(ConvAttrs a, ConvAttrs::FromNodeDef(c->node_def()));
  const PartialTensorShape& out = c->output(0);
  return CheckFusedBiasShape(c->node_def(), c->input(2),
                             out.unknown_rank() ? -1 : out.dim_size(a.DepthDim()));
}
Status DepthwiseShape(InferenceContext* c) { return ForwardShape(c, /*depthwise=*/true); }

// Backprop ops: the output has the shape named by the constant sizes input (`sizes_input`),
// else rank 4 with unknown dims.
Status BackpropShape(InferenceContext* c, int sizes_input, bool is_input_sizes) {
  TX_ASSIGN_OR_RETURN(ConvAttrs a, ConvAttrs::FromNodeDef(c->node_def()));
  const PartialTensorShape& sizes_shape = c->input(sizes_input);
  if (!sizes_shape.unknown_rank() && sizes_shape.dims() != 1) {
    return c->Error(a.Prefix(), "input ", sizes_input, " (sizes) must be 1-D, got shape ",
                    sizes_shape.DebugString());
  }
  TX_RETURN_IF_ERROR(c->WithRank(2, 4));
  TX_RETURN_IF_ERROR(c->WithRank(is_input_sizes ? 1 : 0, 4));
  const Tensor* sizes_t = c->input_tensor(sizes_input);
  if (sizes_t == nullptr) {
    // TF's Conv2DBackpropInput takes the batch from out_backprop (and, for 2 sizes, the depth
    // from the filter); the depthwise op and the filter gradients leave every dim unknown.
    std::vector<int64_t> out(4, -1);
    if (is_input_sizes && c->node_def().op() == "Conv2DBackpropInput") {
      const PartialTensorShape& f = c->input(1);
      const PartialTensorShape& dy = c->input(2);
      if (!dy.unknown_rank()) out[0] = dy.dim_size(0);
      if (!sizes_shape.unknown_rank() && sizes_shape.dim_size(0) == 2 && !f.unknown_rank()) {
        out[a.DepthDim()] = f.dim_size(2);
      }
    }
    c->set_output(0, PartialTensorShape(out));
    return OkStatus();
  }
  std::vector<int64_t> sizes;
  TX_RETURN_IF_ERROR(array_util::IntValues(*sizes_t, a.Prefix() + "sizes", &sizes));
  if (is_input_sizes && sizes.size() == 2) {
    // Batch from out_backprop, depth from the filter (dim 2; depthwise: also dim 2).
    const PartialTensorShape& f = c->input(1);
    const PartialTensorShape& dy = c->input(2);
    std::vector<int64_t> out(4);
    out[0] = dy.unknown_rank() ? -1 : dy.dim_size(0);
    out[a.RowDim()] = sizes[0];
    out[a.ColDim()] = sizes[1];
    out[a.DepthDim()] = f.unknown_rank() ? -1 : f.dim_size(2);
    for (int64_t s : sizes) {
      if (s < 0) return c->Error(a.Prefix(), "input_sizes must be non-negative");
    }
    c->set_output(0, PartialTensorShape(out));
    return OkStatus();
  }
  TX_ASSIGN_OR_RETURN(TensorShape s, conv::SizesToShape(a, sizes, is_input_sizes
                                                                      ? "input_sizes"
                                                                      : "filter_sizes"));
  c->set_output(0, s);
  return OkStatus();
}

Status BackpropInputShape(InferenceContext* c) { return BackpropShape(c, 0, true); }
Status BackpropFilterShape(InferenceContext* c) { return BackpropShape(c, 1, false); }

}  // namespace

#define TX_CONV_COMMON_ATTRS                                                                   \
  Attr("strides: list(int)")                                                                   \
      .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")                                          \
      .Attr("explicit_paddings: list(int) = []")                                               \
      .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")                                          \
      .Attr("dilations: list(int) = [1, 1, 1, 1]")

REGISTER_OP("Conv2D")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double, int32}")
    .Attr("use_cudnn_on_gpu: bool = true")
    .TX_CONV_COMMON_ATTRS
    .SetShapeFn(Conv2DShape)
    .Doc("2-D convolution (cross-correlation) of input [N,H,W,C] (NHWC; or NCHW) with filter "
         "[kh,kw,C/groups,out]; strides, dilations and SAME/VALID/EXPLICIT padding as in TF.");

REGISTER_OP("_FusedConv2D")
    .Input("input: T")
    .Input("filter: T")
    .Input("args: num_args * T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("num_args: int >= 0")
    .TX_CONV_COMMON_ATTRS
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("fused_ops: list(string) = []")
    .Attr("epsilon: float = 0.0001")
    .Attr("leakyrelu_alpha: float = 0.2")
    .SetShapeFn(FusedConv2DShape)
    .Doc("Conv2D followed by fused_ops (BiasAdd, optionally an activation); made by the "
         "remapper pass, not written by hand.");

REGISTER_OP("Conv2DBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double, int32}")
    .Attr("use_cudnn_on_gpu: bool = true")
    .TX_CONV_COMMON_ATTRS
    .SetShapeFn(BackpropInputShape)
    .Doc("Gradient of Conv2D with respect to its input, of shape input_sizes.");

REGISTER_OP("Conv2DBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("use_cudnn_on_gpu: bool = true")
    .TX_CONV_COMMON_ATTRS
    .SetShapeFn(BackpropFilterShape)
    .Doc("Gradient of Conv2D with respect to its filter, of shape filter_sizes.");

REGISTER_OP("DepthwiseConv2dNative")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .TX_CONV_COMMON_ATTRS
    .SetShapeFn(DepthwiseShape)
    .Doc("Depthwise 2-D convolution: input [N,H,W,C] (NHWC; or NCHW), filter "
         "[kh,kw,C,multiplier]; output channel c*multiplier+m convolves input channel c only.");

REGISTER_OP("DepthwiseConv2dNativeBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .TX_CONV_COMMON_ATTRS
    .SetShapeFn(BackpropInputShape)
    .Doc("Gradient of DepthwiseConv2dNative with respect to its input, of shape input_sizes.");

REGISTER_OP("DepthwiseConv2dNativeBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .TX_CONV_COMMON_ATTRS
    .SetShapeFn(BackpropFilterShape)
    .Doc("Gradient of DepthwiseConv2dNative with respect to its filter, of shape filter_sizes.");

#undef TX_CONV_COMMON_ATTRS

}  // namespace tensorflux
