// The pooling kernels' shared base (MaxPool, AvgPool, MaxPoolGrad, AvgPoolGrad,
// MaxPoolGradGrad), used by the CPU kernels (kernels/cpu/pooling_ops.cc) and the GPU kernels
// (kernels/cuda/pooling_ops.cc): the attrs read and validated once at construction
// (ops/pool_window.h), the window of an input shape, and the shape checks of the gradients, all
// INVALID_ARGUMENT naming the op.
#pragma once

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/ops/pool_window.h"

namespace tensorflux {

class PoolKernelBase : public OpKernel {
 public:
  explicit PoolKernelBase(OpKernelConstruction* ctx);

 protected:
  // The window for an input of `shape`, or an error for a bad rank or a window that does not fit.
  Status Window(const TensorShape& shape, PoolWindow* w) const;
  // The window of orig_input (input 0), checking that orig_output (input 1) has the pooled
  // shape: the shared first step of MaxPoolGrad and MaxPoolGradGrad.
  Status OrigWindow(OpKernelContext* ctx, PoolWindow* w, TensorShape* pooled) const;
  // MaxPoolGrad's inputs: the window, and grad (input 2) of the pooled shape.
  Status MaxPoolGradWindow(OpKernelContext* ctx, PoolWindow* w) const;
  // AvgPoolGrad's inputs: orig_input_shape (input 0: 4 non-negative int32 in host memory) as
  // *in_shape, its window, and grad (input 1) of the pooled shape.
  Status AvgPoolGradWindow(OpKernelContext* ctx, TensorShape* in_shape, PoolWindow* w) const;
  static TensorShape PooledShape(const PoolWindow& w);

  PoolAttrs attrs_;
};

}  // namespace tensorflux
