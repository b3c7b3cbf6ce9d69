#include "tensorflux/kernels/shared/pool_kernel.h"

#include <vector>

namespace tensorflux {

PoolKernelBase::PoolKernelBase(OpKernelConstruction* ctx) : OpKernel(ctx) {
  ctx->SetStatus(ctx->GetAttr("ksize", &attrs_.ksize));
  ctx->SetStatus(ctx->GetAttr("strides", &attrs_.strides));
  ctx->SetStatus(ctx->GetAttr("padding", &attrs_.padding));
  ctx->SetStatus(ctx->GetAttr("data_format", &attrs_.data_format));
  if (ctx->HasAttr("explicit_paddings")) {
    ctx->SetStatus(ctx->GetAttr("explicit_paddings", &attrs_.explicit_paddings));
  }
  if (ctx->status().ok()) ctx->SetStatus(ValidatePoolAttrs(type_string(), attrs_));
}

Status PoolKernelBase::Window(const TensorShape& shape, PoolWindow* w) const {
  if (shape.dims() != 4) {
    return errors::InvalidArgument(type_string(), ": input must be 4-dimensional (NHWC), got ",
                                   shape.DebugString());
  }
  std::vector<int64_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
  return ComputePoolWindow(type_string(), attrs_, dims, w);
}

Status PoolKernelBase::OrigWindow(OpKernelContext* ctx, PoolWindow* w, TensorShape* pooled) const {
  TX_RETURN_IF_ERROR(Window(ctx->input(0).shape(), w));
  *pooled = PooledShape(*w);
  if (ctx->input(1).shape() != *pooled) {
    return errors::InvalidArgument(type_string(), ": orig_output has shape ",
                                   ctx->input(1).shape().DebugString(),
                                   ", expected the pooled shape ", pooled->DebugString());
  }
  return OkStatus();
}

Status PoolKernelBase::MaxPoolGradWindow(OpKernelContext* ctx, PoolWindow* w) const {
  TensorShape pooled;
  TX_RETURN_IF_ERROR(OrigWindow(ctx, w, &pooled));
  const Tensor& grad = ctx->input(2);
  if (grad.shape() != pooled) {
    return errors::InvalidArgument("MaxPoolGrad: grad has shape ", grad.shape().DebugString(),
                                   ", expected the pooled shape ", pooled.DebugString());
  }
  return OkStatus();
}

Status PoolKernelBase::AvgPoolGradWindow(OpKernelContext* ctx, TensorShape* in_shape,
                                         PoolWindow* w) const {
  const Tensor& shape_t = ctx->input(0);
  const Tensor& grad = ctx->input(1);
  if (shape_t.dims() != 1 || shape_t.NumElements() != 4 || shape_t.dtype() != DT_INT32) {
    return errors::InvalidArgument("AvgPoolGrad: orig_input_shape must be a vector of 4 int32 "
                                   "elements, got shape ", shape_t.shape().DebugString());
  }
  std::vector<int64_t> dims(4);
  for (int i = 0; i < 4; ++i) {
    dims[i] = shape_t.data<int32_t>()[i];
    if (dims[i] < 0) {
      return errors::InvalidArgument("AvgPoolGrad: orig_input_shape has a negative dimension: ",
                                     dims[i]);
    }
  }
  TX_ASSIGN_OR_RETURN(*in_shape, TensorShape::Make(dims));
  TX_RETURN_IF_ERROR(Window(*in_shape, w));
  const TensorShape pooled = PooledShape(*w);
  if (grad.shape() != pooled) {
    return errors::InvalidArgument("AvgPoolGrad: grad has shape ", grad.shape().DebugString(),
                                   ", expected the pooled shape ", pooled.DebugString());
  }
  return OkStatus();
}

TensorShape PoolKernelBase::PooledShape(const PoolWindow& w) {
  return TensorShape({w.batch, w.out_rows, w.out_cols, w.depth});
}

}  // namespace tensorflux
