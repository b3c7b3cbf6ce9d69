#include "tensorflux/kernels/shared/batch_norm_kernel.h"

#include <string>

namespace tensorflux {

BatchNormBase::BatchNormBase(OpKernelConstruction* ctx) : OpKernel(ctx) {
  std::string format;
  ctx->SetStatus(ctx->GetAttr("epsilon", &epsilon_));
  ctx->SetStatus(ctx->GetAttr("is_training", &is_training_));
  ctx->SetStatus(ctx->GetAttr("data_format", &format));
  if (ctx->HasAttr("exponential_avg_factor")) {
    ctx->SetStatus(ctx->GetAttr("exponential_avg_factor", &factor_));
  }
  if (ctx->status().ok() && format != "NHWC" && format != "NCHW" && format != "NDHWC" &&
      format != "NCDHW") {
    ctx->SetStatus(errors::InvalidArgument(type_string(), ": data_format must be NHWC or NCHW "
                                           "(4-D x), NDHWC or NCDHW (5-D x), got ", format));
  }
  nhwc_ = format == "NHWC" || format == "NDHWC";
  rank_ = format.size() == 5 ? 5 : 4;
  if (ctx->status().ok() && !(epsilon_ >= 0)) {
    ctx->SetStatus(errors::InvalidArgument(type_string(), ": epsilon must be >= 0, got ", epsilon_));
  }
}

Status BatchNormBase::Layout(const Tensor& x, BnLayout* l) const {
  if (x.dims() != rank_) {
    return errors::InvalidArgument(type_string(), ": x must be ", rank_,
                                   "-dimensional for its data_format, got shape ",
                                   x.shape().DebugString());
  }
  // 5-D: the depth and height dims are one dim of the [outer, C, inner] view.
  const int first = nhwc_ ? 1 : 2;
  l->nhwc = nhwc_;
  l->n = x.dim_size(0);
  l->h = x.dim_size(first) * (rank_ == 5 ? x.dim_size(first + 1) : 1);
  l->w = x.dim_size(first + rank_ - 3);
  l->c = x.dim_size(nhwc_ ? rank_ - 1 : 1);
  return OkStatus();
}

Status BatchNormBase::CheckVector(const Tensor& t, const char* name, int64_t channels) const {
  if (t.dims() != 1 || t.dim_size(0) != channels) {
    return errors::InvalidArgument(type_string(), ": ", name, " must be a vector of ", channels,
                                   " elements (the channels of x), got shape ",
                                   t.shape().DebugString());
  }
  return OkStatus();
}

Status BatchNormBase::CheckForwardInputs(OpKernelContext* ctx, BnLayout* l) const {
  TX_RETURN_IF_ERROR(Layout(ctx->input(0), l));
  TX_RETURN_IF_ERROR(CheckVector(ctx->input(1), "scale", l->c));
  TX_RETURN_IF_ERROR(CheckVector(ctx->input(2), "offset", l->c));
  if (UsesStatisticsInputs()) {
    TX_RETURN_IF_ERROR(CheckVector(ctx->input(3), "mean", l->c));
    TX_RETURN_IF_ERROR(CheckVector(ctx->input(4), "variance", l->c));
  }
  return OkStatus();
}

Status BatchNormBase::CheckGradInputs(OpKernelContext* ctx, BnLayout* l) const {
  const Tensor& dy = ctx->input(0);
  const Tensor& x = ctx->input(1);
  TX_RETURN_IF_ERROR(Layout(x, l));
  if (dy.shape() != x.shape()) {
    return errors::InvalidArgument("FusedBatchNormGradV3: y_backprop has shape ",
                                   dy.shape().DebugString(), " but x has shape ",
                                   x.shape().DebugString());
  }
  TX_RETURN_IF_ERROR(CheckVector(ctx->input(2), "scale", l->c));
  TX_RETURN_IF_ERROR(CheckVector(ctx->input(3), "reserve_space_1", l->c));
  TX_RETURN_IF_ERROR(CheckVector(ctx->input(4), "reserve_space_2", l->c));
  return OkStatus();
}

}  // namespace tensorflux
