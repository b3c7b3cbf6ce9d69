// The batch-norm kernels' shared base (FusedBatchNormV3 and FusedBatchNormGradV3; semantics in
// ops/batch_norm_ops.cc), used by the CPU kernels (kernels/cpu/batch_norm_ops.cc) and the GPU
// kernels (kernels/cuda/batch_norm_ops.cc): the attrs (epsilon >= 0, is_training, data_format
// NHWC, NCHW, NDHWC or NCDHW, exponential_avg_factor) read at construction and the input checks, all
// INVALID_ARGUMENT naming the op.
#pragma once

#include <cstdint>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {

// x viewed as [outer, C, inner]: NHWC is [N*H*W, C, 1], NCHW is [N, C, H*W]; a 5-D x (NDHWC,
// NCDHW) is the 4-D one with h = D*H.
struct BnLayout {
  int64_t n = 0, h = 0, w = 0, c = 0;
  bool nhwc = true;
  int64_t outer() const { return nhwc ? n * h * w : n; }
  int64_t inner() const { return nhwc ? 1 : h * w; }
  int64_t count() const { return n * h * w; }  // elements per channel
  int64_t size() const { return n * h * w * c; }
};

class BatchNormBase : public OpKernel {
 public:
  explicit BatchNormBase(OpKernelConstruction* ctx);

 protected:
  // x rank 4 (NHWC, NCHW) or 5 (NDHWC, NCDHW).
  Status Layout(const Tensor& x, BnLayout* l) const;
  // `t` a vector of `channels` elements.
  Status CheckVector(const Tensor& t, const char* name, int64_t channels) const;
  // FusedBatchNormV3's inputs (x, scale, offset, mean, variance): x's layout, scale and offset
  // of C elements, and mean and variance too when they are read (inference, or a factor != 1).
  Status CheckForwardInputs(OpKernelContext* ctx, BnLayout* l) const;
  // FusedBatchNormGradV3's inputs (y_backprop, x, scale, reserve_space_1, reserve_space_2):
  // y_backprop of x's shape, the others vectors of C elements.
  Status CheckGradInputs(OpKernelContext* ctx, BnLayout* l) const;
  // Whether the forward op reads its mean and variance inputs.
  bool UsesStatisticsInputs() const { return !is_training_ || factor_ != 1.0f; }

  float epsilon_ = 1e-4f;
  float factor_ = 1.0f;
  bool is_training_ = true;
  bool nhwc_ = true;  // channels last
  int rank_ = 4;      // 5 for NDHWC and NCDHW
};

}  // namespace tensorflux
