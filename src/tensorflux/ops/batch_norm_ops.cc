// Batch normalization ops, TensorFlow's names, attrs and input order: FusedBatchNormV3 and its
// backward op FusedBatchNormGradV3. x is 4-D, NHWC ([N, H, W, C]) or NCHW, or 5-D, NDHWC or
// NCDHW (the statistics then run over N*D*H*W elements per channel); the per-channel
// vectors (scale, offset, mean, variance, the statistics) have C elements.
//
// Semantics (TF's CPU kernels), with n = N*H*W (N*D*H*W) and a per-channel batch mean m and
// BIASED batch variance v (divided by n):
//   training:  y = (x - m) / sqrt(v + epsilon) * scale + offset;
//              batch_mean = m, batch_variance = v * n / (n - 1) (unbiased; v when n == 1); when
//              exponential_avg_factor f != 1 both are blended with the inputs:
//              (1 - f) * mean + f * m, (1 - f) * variance + f * unbiased v;
//              reserve_space_1 = m, reserve_space_2 = v (what FusedBatchNormGradV3 takes);
//              mean and variance may be empty when f == 1.
//   inference: y uses the given mean and variance; batch_mean and batch_variance are copies of
//              them, reserve_space_1 and reserve_space_2 zeros (as TF's CPU kernel).
//   reserve_space_3 is a scalar placeholder, zero (as on TF's CPU; its static shape is unknown, as
//   TF's shape function leaves it). An empty x gives NaN batch statistics and zero reserve
//   spaces.
// Dtypes: T (x, y) half, bfloat16, float and, beyond TF, double; U (the vectors) float and, beyond
// TF, double (double x with double U: the numeric gradient checker runs in float64).
// TF declares FusedBatchNormGradV3's scale as float; here it is U (the same for TF's U = float).
#include <string>

#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

// The channel count of x (-1 unknown) from data_format; checks the rank.
Status Channels(InferenceContext* c, int x_input, int64_t* channels) {
  std::string format;
  TX_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  if (format != "NHWC" && format != "NCHW" && format != "NDHWC" && format != "NCDHW") {
    return errors::InvalidArgument(c->node_def().op(), ": data_format must be NHWC, NCHW, NDHWC ",
                                   "or NCDHW, got ", format, " for '", c->node_def().name(), "'");
  }
  const int rank = format.size() == 5 ? 5 : 4;
  const PartialTensorShape& x = c->input(x_input);
  *channels = -1;
  if (x.unknown_rank()) return OkStatus();
  if (x.dims() != rank) {
    return errors::InvalidArgument(c->node_def().op(), ": x must be ", rank,
                                   "-dimensional for data_format ", format, ", got ",
                                   x.DebugString(), " for '", c->node_def().name(), "'");
  }
  *channels = x.dim_size(format[1] == 'C' ? 1 : rank - 1);
  return OkStatus();
}

// x's shape when only its data_format is known: rank 4 or 5, unknown dims.
PartialTensorShape UnknownX(InferenceContext* c) {
  std::string format;
  if (c->GetAttr("data_format", &format).ok() && format.size() == 5) {
    return PartialTensorShape({-1, -1, -1, -1, -1});
  }
  return PartialTensorShape({-1, -1, -1, -1});
}

// Input i must be a vector of `channels` elements (any length when channels is -1).
Status ChannelVector(InferenceContext* c, int i, const char* name, int64_t* channels) {
  const PartialTensorShape& s = c->input(i);
  if (s.unknown_rank()) return OkStatus();
  if (s.dims() != 1) {
    return errors::InvalidArgument(c->node_def().op(), ": ", name, " must be 1-dimensional, got ",
                                   s.DebugString(), " for '", c->node_def().name(), "'");
  }
  const int64_t d = s.dim_size(0);
  if (d >= 0 && *channels >= 0 && d != *channels) {
    return errors::InvalidArgument(c->node_def().op(), ": ", name, " has ", d,
                                   " elements but x has ", *channels, " channels for '",
                                   c->node_def().name(), "'");
  }
  if (*channels < 0) *channels = d;
  return OkStatus();
}

Status FusedBatchNormShape(InferenceContext* c) {
  int64_t channels;
  TX_RETURN_IF_ERROR(Channels(c, 0, &channels));
  TX_RETURN_IF_ERROR(ChannelVector(c, 1, "scale", &channels));
  TX_RETURN_IF_ERROR(ChannelVector(c, 2, "offset", &channels));
  bool is_training = true;
  float factor = 1;
  TX_RETURN_IF_ERROR(c->GetAttr("is_training", &is_training));
  TX_RETURN_IF_ERROR(c->GetAttr("exponential_avg_factor", &factor));
  if (!is_training || factor != 1) {
    TX_RETURN_IF_ERROR(ChannelVector(c, 3, "mean", &channels));
    TX_RETURN_IF_ERROR(ChannelVector(c, 4, "variance", &channels));
  }
  c->set_output(0, c->input(0).unknown_rank() ? UnknownX(c) : c->input(0));
  for (int i = 1; i < 5; ++i) c->set_output(i, PartialTensorShape({channels}));
  c->set_output(5, PartialTensorShape::UnknownRank());
  return OkStatus();
}

Status FusedBatchNormGradShape(InferenceContext* c) {
  int64_t channels;
  TX_RETURN_IF_ERROR(Channels(c, 1, &channels));
  if (!c->input(0).IsCompatibleWith(c->input(1))) {
    return errors::InvalidArgument("FusedBatchNormGradV3: y_backprop ",
                                   c->input(0).DebugString(), " and x ",
                                   c->input(1).DebugString(), " must have the same shape for '",
                                   c->node_def().name(), "'");
  }
  TX_RETURN_IF_ERROR(ChannelVector(c, 2, "scale", &channels));
  TX_RETURN_IF_ERROR(ChannelVector(c, 3, "reserve_space_1", &channels));
  TX_RETURN_IF_ERROR(ChannelVector(c, 4, "reserve_space_2", &channels));
  c->set_output(0, c->input(1).unknown_rank() ? UnknownX(c) : c->input(1));
  c->set_output(1, PartialTensorShape({channels}));
  c->set_output(2, PartialTensorShape({channels}));
  c->set_output(3, PartialTensorShape({0}));
  c->set_output(4, PartialTensorShape({0}));
  return OkStatus();
}

}  // namespace

REGISTER_OP("FusedBatchNormV3")
    .Input("x: T")
    .Input("scale: U")
    .Input("offset: U")
    .Input("mean: U")
    .Input("variance: U")
    .Output("y: T")
    .Output("batch_mean: U")
    .Output("batch_variance: U")
    .Output("reserve_space_1: U")
    .Output("reserve_space_2: U")
    .Output("reserve_space_3: U")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("U: {float, double}")
    .Attr("epsilon: float = 0.0001")
    .Attr("exponential_avg_factor: float = 1.0")
    .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormShape)
    .Doc("Batch normalization of a 4-D x per channel, with batch statistics (training) or the "
         "given mean and variance (inference); see ops/batch_norm_ops.cc for the outputs.");

REGISTER_OP("FusedBatchNormGradV3")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: U")
    .Input("reserve_space_1: U")
    .Input("reserve_space_2: U")
    .Input("reserve_space_3: U")
    .Output("x_backprop: T")
    .Output("scale_backprop: U")
    .Output("offset_backprop: U")
    .Output("reserve_space_4: U")
    .Output("reserve_space_5: U")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("U: {float, double}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormGradShape)
    .Doc("Gradient of FusedBatchNormV3 given reserve_space_1/2 (training: batch mean and biased "
         "variance; inference: the population mean and variance); reserve_space_4/5 are empty.");

}  // namespace tensorflux
