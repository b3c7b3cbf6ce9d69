// 2-D pooling ops, TensorFlow's names, attrs and input order: MaxPool, AvgPool and the backward
// ops their gradients use, MaxPoolGrad and AvgPoolGrad. Layout NHWC:
//   MaxPool / AvgPool:  value [N, H, W, C] -> output [N, out_rows, out_cols, C]
//   MaxPoolGrad:        (orig_input [N,H,W,C], orig_output, grad [N,out_rows,out_cols,C]) -> [N,H,W,C]
//   AvgPoolGrad:        (orig_input_shape int32 [4], grad) -> [orig_input_shape]
//   MaxPoolGradGrad:    (orig_input, orig_output, grad [N,H,W,C]) -> [N,out_rows,out_cols,C]
//   _FusedMaxPoolGrad:  (orig_input, orig_output, grad) -> (backprops [N,H,W,C], bias_backprop [C])
// Window geometry and attr validation: ops/pool_window.h. Kernels: kernels/cpu/pooling_ops.cc.
#include <vector>

#include "absl/strings/str_cat.h"

#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"
#include "tensorflux/ops/pool_window.h"

namespace tensorflux {
namespace {

Status ReadPoolAttrs(const InferenceContext* c, PoolAttrs* a) {
  TX_RETURN_IF_ERROR(c->GetAttr("ksize", &a->ksize));
  TX_RETURN_IF_ERROR(c->GetAttr("strides", &a->strides));
  TX_RETURN_IF_ERROR(c->GetAttr("padding", &a->padding));
  TX_RETURN_IF_ERROR(c->GetAttr("data_format", &a->data_format));
  a->explicit_paddings.clear();
  if (FindAttr(c->node_def(), "explicit_paddings") != nullptr) {
    TX_RETURN_IF_ERROR(c->GetAttr("explicit_paddings", &a->explicit_paddings));
  }
  return OkStatus();
}

// `s` with the node named; its code is kept (UNIMPLEMENTED for pooling over the batch or depth
// dims, as TF's kernels report it).
Status WithNode(const InferenceContext* c, Status s) {
  if (s.ok()) return s;
  return Status(s.code(), absl::StrCat(s.message(), " for '", c->node_def().name(), "' (op: '",
                                       c->node_def().op(), "')"));
}

// The pooled shape of an input shape (unknown rank or dims give unknown output dims).
Status PooledShape(InferenceContext* c, const PartialTensorShape& in, PartialTensorShape* out) {
  PoolAttrs a;
  TX_RETURN_IF_ERROR(ReadPoolAttrs(c, &a));
  std::vector<int64_t> dims(4, -1);
  if (!in.unknown_rank()) dims.assign(in.dim_sizes().begin(), in.dim_sizes().end());
  PoolWindow w;
  TX_RETURN_IF_ERROR(WithNode(c, ComputePoolWindow(c->node_def().op(), a, dims, &w)));
  *out = PartialTensorShape({w.batch, w.out_rows, w.out_cols, w.depth});
  return OkStatus();
}

Status PoolShape(InferenceContext* c) {
  PartialTensorShape out;
  TX_RETURN_IF_ERROR(PooledShape(c, c->input(0), &out));
  c->set_output(0, out);
  return OkStatus();
}

// MaxPoolGrad: output has orig_input's shape; grad and orig_output must be the pooled shape.
Status MaxPoolGradShape(InferenceContext* c) {
  PartialTensorShape pooled;
  TX_RETURN_IF_ERROR(PooledShape(c, c->input(0), &pooled));
  for (int i : {1, 2}) {
    if (!c->input(i).IsCompatibleWith(pooled)) {
      return errors::InvalidArgument(c->node_def().op(), " input ", i, " has shape ",
                                     c->input(i).DebugString(), " but the pooled shape is ",
                                     pooled.DebugString(), " for '", c->node_def().name(), "'");
    }
  }
  c->set_output(0, c->input(0).unknown_rank() ? PartialTensorShape({-1, -1, -1, -1})
                                              : c->input(0));
  return OkStatus();
}

// _FusedMaxPoolGrad: MaxPoolGrad's checks; backprops has orig_input's shape, bias_backprop [C].
Status FusedMaxPoolGradShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(MaxPoolGradShape(c));
  const PartialTensorShape in = c->input(0);
  c->set_output(1, PartialTensorShape({in.unknown_rank() ? -1 : in.dim_size(3)}));
  return OkStatus();
}

// MaxPoolGradGrad: output has the pooled shape; grad must have orig_input's shape.
Status MaxPoolGradGradShape(InferenceContext* c) {
  PartialTensorShape pooled;
  TX_RETURN_IF_ERROR(PooledShape(c, c->input(0), &pooled));
  if (!c->input(1).IsCompatibleWith(pooled) || !c->input(2).IsCompatibleWith(c->input(0))) {
    return errors::InvalidArgument("MaxPoolGradGrad: orig_output ", c->input(1).DebugString(),
                                   " must have the pooled shape ", pooled.DebugString(),
                                   " and grad ", c->input(2).DebugString(),
                                   " orig_input's shape for '", c->node_def().name(), "'");
  }
  c->set_output(0, pooled);
  return OkStatus();
}

// AvgPoolGrad: output shape is the value of orig_input_shape when it is a constant.
Status AvgPoolGradShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRank(0, 1));
  const Tensor* shape = c->input_tensor(0);
  if (shape == nullptr) {
    c->set_output(0, PartialTensorShape({-1, -1, -1, -1}));
    return OkStatus();
  }
  TX_ASSIGN_OR_RETURN(PartialTensorShape out, shape_inference::ShapeFromTensor(*shape));
  if (out.dims() != 4) {
    return errors::InvalidArgument("AvgPoolGrad: orig_input_shape must have 4 elements, got ",
                                   out.DebugString(), " for '", c->node_def().name(), "'");
  }
  PartialTensorShape pooled;
  TX_RETURN_IF_ERROR(PooledShape(c, out, &pooled));
  if (!c->input(1).IsCompatibleWith(pooled)) {
    return errors::InvalidArgument("AvgPoolGrad: grad has shape ", c->input(1).DebugString(),
                                   " but the pooled shape is ", pooled.DebugString(), " for '",
                                   c->node_def().name(), "'");
  }
  c->set_output(0, out);
  return OkStatus();
}

}  // namespace

REGISTER_OP("MaxPool")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16, qint8} = DT_FLOAT")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .SetShapeFn(PoolShape)
    .Doc("Max over each ksize window of an NHWC input, moved by strides; SAME pads so the output "
         "is ceil(in / stride), padding never wins the max.");

REGISTER_OP("AvgPool")
    .Input("value: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(PoolShape)
    .Doc("Mean over each ksize window of an NHWC input; with SAME padding the mean is over the "
         "window's valid (non-padded) elements only.");

REGISTER_OP("MaxPoolGrad")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16} = DT_FLOAT")
    .SetShapeFn(MaxPoolGradShape)
    .Doc("Gradient of MaxPool: each grad element goes to the position of its window's maximum in "
         "orig_input (the first one in row-major window order on ties); output orig_input's shape.");

// Made by the remapper pass (passes/remapper.cc) from MaxPoolGrad -> ReluGrad [-> BiasAddGrad]
// where orig_input is the ReLU's output (a ReLU followed by max pooling); not a TensorFlow op.
// Kernel: kernels/cpu/fused_pool_grad_op.cc.
REGISTER_OP("_FusedMaxPoolGrad")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Output("backprops: T")
    .Output("bias_backprop: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {float, double}")
    .SetShapeFn(FusedMaxPoolGradShape)
    .Doc("backprops = ReluGrad(MaxPoolGrad(orig_input, orig_output, grad), orig_input) and "
         "bias_backprop = BiasAddGrad(backprops) (NHWC) in one pass, for windows that do not "
         "overlap (strides >= ksize); made by the remapper pass, not written by hand.");

REGISTER_OP("MaxPoolGradGrad")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16}")
    .SetShapeFn(MaxPoolGradGradShape)
    .Doc("Gradient of MaxPoolGrad with respect to its grad input: for each window of orig_input, "
         "the element of grad (orig_input-shaped) at the window's first maximum.");

REGISTER_OP("AvgPoolGrad")
    .Input("orig_input_shape: int32")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(AvgPoolGradShape)
    .Doc("Gradient of AvgPool: each grad element is spread evenly over the valid input elements of "
         "its window; output shape orig_input_shape.");

}  // namespace tensorflux
