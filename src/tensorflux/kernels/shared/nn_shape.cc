#include "tensorflux/kernels/shared/nn_shape.h"

namespace tensorflux::nn_kernels {

Status ReadDataFormat(OpKernelConstruction* ctx, bool* nchw) {
  std::string data_format = "NHWC";
  if (ctx->HasAttr("data_format")) TX_RETURN_IF_ERROR(ctx->GetAttr("data_format", &data_format));
  if (data_format != "NHWC" && data_format != "NCHW") {
    return errors::InvalidArgument(ctx->def().op(), " node '", ctx->def().name(),
                                   "': invalid data_format '", data_format,
                                   "' (NHWC or NCHW)");
  }
  *nchw = data_format == "NCHW";
  return OkStatus();
}

Status BiasLayoutOf(const OpKernel& k, const TensorShape& shape, bool nchw, BiasLayout* l) {
  if (shape.dims() < 2) {
    return KernelError(k, "input tensor must be at least 2-D, got shape ", shape.DebugString());
  }
  const int c = nchw ? 1 : shape.dims() - 1;
  *l = BiasLayout();
  l->channels = shape.dim_size(c);
  if (shape.num_elements() == 0) {
    // Nothing to read; the products of the other dims could overflow ([2^40, 2^40, 0, C]).
    l->outer = l->inner = 0;
    return OkStatus();
  }
  for (int d = 0; d < c; ++d) l->outer *= shape.dim_size(d);
  for (int d = c + 1; d < shape.dims(); ++d) l->inner *= shape.dim_size(d);
  return OkStatus();
}

Status CheckBiasAdd(const OpKernel& k, const Tensor& value, const Tensor& bias, bool nchw,
                    BiasLayout* l) {
  TX_RETURN_IF_ERROR(BiasLayoutOf(k, value.shape(), nchw, l));
  if (bias.dims() != 1) {
    return KernelError(k, "bias must be 1-D, got shape ", bias.shape().DebugString());
  }
  if (bias.dim_size(0) != l->channels) {
    return KernelError(k, "must provide as many biases as the channel dimension (",
                       nchw ? "dim 1, NCHW" : "last dim, NHWC", ") of the input: bias shape ",
                       bias.shape().DebugString(), ", value shape ", value.shape().DebugString());
  }
  if (value.dtype() != bias.dtype()) return KernelError(k, "value and bias dtypes differ");
  return OkStatus();
}

Status CheckLogits(const OpKernel& k, const TensorShape& logits) {
  if (logits.dims() < 1) {
    return KernelError(k, "logits must have >= 1 dimension, got shape ", logits.DebugString());
  }
  return OkStatus();
}

Status CheckSparseXent(const OpKernel& k, const Tensor& features, const Tensor& labels,
                       int64_t* batch, int64_t* classes) {
  if (features.dims() != 2) {
    return KernelError(k, "logits (features) must be 2-D [batch, classes], got shape ",
                       features.shape().DebugString());
  }
  if (labels.dims() != 1) {
    return KernelError(k, "labels must be 1-D [batch], got shape ", labels.shape().DebugString());
  }
  *batch = features.dim_size(0);
  *classes = features.dim_size(1);
  if (labels.dim_size(0) != *batch) {
    return KernelError(k, "logits and labels must have the same first dimension, got logits "
                       "shape ", features.shape().DebugString(), " and labels shape ",
                       labels.shape().DebugString());
  }
  if (labels.dtype() != DT_INT32 && labels.dtype() != DT_INT64) {
    return KernelError(k, "labels must be int32 or int64, got ", DataTypeString(labels.dtype()));
  }
  return OkStatus();
}

namespace {
// The [B, C] view of an operand of rank <= 2 broadcast to [batch, classes].
XentView BroadcastView(const TensorShape& s) {
  XentView v;
  const int r = s.dims();
  if (r >= 1 && s.dim_size(r - 1) != 1) v.col_stride = 1;
  if (r == 2 && s.dim_size(0) != 1) v.row_stride = s.dim_size(1);
  return v;
}
}  // namespace

Status CheckXent(const OpKernel& k, const TensorShape& fs, const TensorShape& ls,
                 XentShape* out) {
  if (!(fs.dims() <= 2 && ls.dims() <= 2 && (fs.dims() == 2 || ls.dims() == 2))) {
    return KernelError(k, "logits and labels must be either 2-dimensional, or broadcasted to be "
                       "2-dimensional, got shapes ", fs.DebugString(), " and ", ls.DebugString());
  }
  // NumPy broadcasting of the two shapes, right-aligned to [batch, classes].
  int64_t dims[2];
  for (int d = 0; d < 2; ++d) {
    const int fd = fs.dims() - 2 + d, ld = ls.dims() - 2 + d;
    const int64_t a = fd >= 0 ? fs.dim_size(fd) : 1;
    const int64_t b = ld >= 0 ? ls.dim_size(ld) : 1;
    if (a != b && a != 1 && b != 1) {
      return KernelError(k, "logits and labels must be broadcastable: logits_size=",
                         fs.DebugString(), " labels_size=", ls.DebugString());
    }
    dims[d] = a == 1 ? b : a;
  }
  out->batch = dims[0];
  out->classes = dims[1];
  TX_ASSIGN_OR_RETURN(out->backprop_shape, TensorShape::Make({dims[0], dims[1]}));
  out->features = BroadcastView(fs);
  out->labels = BroadcastView(ls);
  return OkStatus();
}

}  // namespace tensorflux::nn_kernels
