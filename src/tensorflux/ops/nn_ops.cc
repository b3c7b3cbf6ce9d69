// NN ops other than convolution, pooling and batch norm, with TensorFlow's names, inputs, attrs
// and shape functions (TF's nn_ops.cc):
//
//   BiasAdd(value: T, bias: T; data_format = "NHWC") -> output: T
//       value rank >= 2 (NHWC: channels last) or >= 3 (NCHW: channels at dim 1); bias [C].
//   BiasAddGrad(out_backprop: T; data_format) -> output: T [C]   (sum over all but the channel dim)
//   Softmax(logits: T) -> softmax: T,  LogSoftmax(logits: T) -> logsoftmax: T
//       over the last axis; logits rank >= 1.
//   SparseSoftmaxCrossEntropyWithLogits(features: T [B, C], labels: Tlabels [B])
//       -> loss: T [B], backprop: T [B, C]; labels int32/int64 in [0, C).
//   SoftmaxCrossEntropyWithLogits(features: T, labels: T) -> loss: T [B], backprop: T [B, C]
//       features and labels broadcast (NumPy rules) to a rank-2 [B, C].
//   L2Loss(t: T) -> output: T scalar, sum(t^2) / 2.
//
// T is {half, bfloat16, float, double} except for BiasAdd/BiasAddGrad (real number types).
// Errors: INVALID_ARGUMENT naming the node for a wrong rank, a bias size that is not the channel
// size, incompatible shapes or a bad data_format. CPU kernels: kernels/cpu/bias_add_op.cc,
// softmax_op.cc, xent_ops.cc, l2loss_op.cc; gradients: gradients/nn_grad.cc.
#include <string>

#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

constexpr const char* kFloatTypes = "T: {half, bfloat16, float, double}";
constexpr const char* kRealNumberTypes =
    "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, "
    "uint64}";

std::string Where(InferenceContext* c) {
  return "node '" + c->node_def().name() + "' (op: '" + c->node_def().op() + "')";
}

// The channel dim of a rank-`rank` tensor in `data_format`, or INVALID_ARGUMENT.
Status ChannelDim(InferenceContext* c, int rank, int* dim) {
  std::string data_format;
  TX_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
  const bool nchw = data_format == "NCHW";
  if (!nchw && data_format != "NHWC") {
    return c->Error("Invalid data_format '", data_format, "' (NHWC or NCHW) for ", Where(c));
  }
  const int min_rank = nchw ? 3 : 2;
  if (rank >= 0 && rank < min_rank) {
    return c->Error("Shape must be at least rank ", min_rank, " but is rank ", rank, " for ",
                    Where(c), " input 0");
  }
  *dim = nchw ? 1 : rank - 1;
  return OkStatus();
}

Status BiasAddShape(InferenceContext* c) {
  const PartialTensorShape& value = c->input(0);
  const PartialTensorShape& bias = c->input(1);
  if (!bias.unknown_rank() && bias.dims() != 1) {
    return c->Error("Shape must be rank 1 but is rank ", bias.dims(), " for ", Where(c),
                    " input 1 (bias)");
  }
  int channel = 0;
  TX_RETURN_IF_ERROR(ChannelDim(c, value.dims(), &channel));
  if (value.unknown_rank()) {
    c->set_output(0, value);
    return OkStatus();
  }
  std::vector<int64_t> dims(value.dim_sizes().begin(), value.dim_sizes().end());
  const int64_t b = bias.unknown_rank() ? -1 : bias.dim_size(0);
  if (dims[channel] >= 0 && b >= 0 && dims[channel] != b) {
    return c->Error("Dimensions must be equal, but are ", dims[channel], " and ", b, " for ",
                    Where(c), " with input shapes: ", value.DebugString(), ", ",
                    bias.DebugString());
  }
  if (dims[channel] < 0) dims[channel] = b;
  c->set_output(0, PartialTensorShape(dims));
  return OkStatus();
}

Status BiasAddGradShape(InferenceContext* c) {
  const PartialTensorShape& g = c->input(0);
  int channel = 0;
  TX_RETURN_IF_ERROR(ChannelDim(c, g.dims(), &channel));
  c->set_output(0, PartialTensorShape({g.unknown_rank() ? -1 : g.dim_size(channel)}));
  return OkStatus();
}

Status SoftmaxShape(InferenceContext* c) {
  const PartialTensorShape& logits = c->input(0);
  if (!logits.unknown_rank() && logits.dims() < 1) {
    return c->Error("Shape must be at least rank 1 but is rank 0 for ", Where(c),
                    " input 0 (logits)");
  }
  c->set_output(0, logits);
  return OkStatus();
}

Status SparseXentShape(InferenceContext* c) {
  const PartialTensorShape& features = c->input(0);
  const PartialTensorShape& labels = c->input(1);
  if (!features.unknown_rank() && features.dims() != 2) {
    return c->Error("Shape must be rank 2 but is rank ", features.dims(), " for ", Where(c),
                    " input 0 (features / logits)");
  }
  if (!labels.unknown_rank() && labels.dims() != 1) {
    return c->Error("Shape must be rank 1 but is rank ", labels.dims(), " for ", Where(c),
                    " input 1 (labels)");
  }
  int64_t batch = features.unknown_rank() ? -1 : features.dim_size(0);
  const int64_t lb = labels.unknown_rank() ? -1 : labels.dim_size(0);
  if (batch >= 0 && lb >= 0 && batch != lb) {
    return c->Error("Dimensions must be equal, but are ", batch, " and ", lb, " for ", Where(c),
                    " with input shapes: ", features.DebugString(), ", ", labels.DebugString());
  }
  if (batch < 0) batch = lb;
  const int64_t classes = features.unknown_rank() ? -1 : features.dim_size(1);
  c->set_output(0, PartialTensorShape({batch}));
  c->set_output(1, PartialTensorShape({batch, classes}));
  return OkStatus();
}

Status XentShape(InferenceContext* c) {
  TX_ASSIGN_OR_RETURN(PartialTensorShape both,
                      shape_inference::BroadcastShapes(c->input(0), c->input(1)));
  if (both.unknown_rank()) {
    c->set_output(0, PartialTensorShape({-1}));
    c->set_output(1, PartialTensorShape({-1, -1}));
    return OkStatus();
  }
  if (both.dims() != 2) {
    return c->Error("Shape must be broadcasted with rank 2, but is rank ", both.dims(), " for ",
                    Where(c), " with input shapes: ", c->input(0).DebugString(), ", ",
                    c->input(1).DebugString());
  }
  c->set_output(0, PartialTensorShape({both.dim_size(0)}));
  c->set_output(1, both);
  return OkStatus();
}

}  // namespace

REGISTER_OP("BiasAdd")
    .Input("value: T")
    .Input("bias: T")
    .Output("output: T")
    .Attr(kRealNumberTypes)
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .SetShapeFn(BiasAddShape)
    .Doc("value + bias along the channel dim (last for NHWC, dim 1 for NCHW); bias is 1-D [C].");

REGISTER_OP("BiasAddGrad")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr(kRealNumberTypes)
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .SetShapeFn(BiasAddGradShape)
    .Doc("out_backprop summed over every dim but the channel dim: [C].");

REGISTER_OP("Softmax")
    .Input("logits: T")
    .Output("softmax: T")
    .Attr(kFloatTypes)
    .SetShapeFn(SoftmaxShape)
    .Doc("exp(logits) / sum(exp(logits)) over the last axis.");

REGISTER_OP("LogSoftmax")
    .Input("logits: T")
    .Output("logsoftmax: T")
    .Attr(kFloatTypes)
    .SetShapeFn(SoftmaxShape)
    .Doc("logits - log(sum(exp(logits))) over the last axis.");

REGISTER_OP("SparseSoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: Tlabels")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr(kFloatTypes)
    .Attr("Tlabels: {int32, int64} = DT_INT64")
    .SetShapeFn(SparseXentShape)
    .Doc("Per-row cross entropy of softmax(features [B, C]) against class indices labels [B]; "
         "backprop = softmax - one_hot(labels).");

REGISTER_OP("SoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: T")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr(kFloatTypes)
    .SetShapeFn(XentShape)
    .Doc("Per-row cross entropy of softmax(features) against the distributions labels (both "
         "broadcast to [B, C]); backprop = softmax - labels.");

REGISTER_OP("L2Loss")
    .Input("t: T")
    .Output("output: T")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_inference::ScalarShape)
    .Doc("sum(t ** 2) / 2, a scalar.");

}  // namespace tensorflux
