// Internal to kernels/cpu: the epilogue of the fused contraction kernels (_FusedMatMul in
// matmul_op.cc, _FusedConv2D in conv_ops.cc). After the GEMM / convolution has written its
// output, one pass over that output adds the bias (bias_add_util.h, as BiasAdd does) and applies
// the activation of fused_ops (ops/fused_ops_spec.h) to each block of rows while it is in cache,
// with the Relu/Relu6/Elu/LeakyRelu functors of the standalone kernels (cwise_functors_nn.h).
// Results equal the unfused MatMul/Conv2D -> BiasAdd -> activation chain bit for bit, except Elu,
// whose vectorized expm1 may round an element differently depending on where a block starts.
#pragma once

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/ops/fused_ops_spec.h"

namespace tensorflux::fused {

class Epilogue {
 public:
  // Reads fused_ops (UNIMPLEMENTED / INVALID_ARGUMENT from FusedOpsSpec) and data_format (NHWC
  // when the op has none, as for MatMul whose channels are the last dim).
  Status Init(OpKernelConstruction* ctx);

  // out = act(out + bias) over the [outer, C, inner] view of `out`, on the kernel's intra-op
  // pool. `bias` is input 2; INVALID_ARGUMENT naming the node unless it is 1-D with one entry per
  // output channel and of out's dtype. T: float, double, Half, BFloat16.
  template <typename T>
  Status Apply(const OpKernel& kernel, OpKernelContext* ctx, const Tensor& bias,
               Tensor* out) const;

  // Apply's checks of `bias` against `out` alone, for a kernel that adds the bias itself
  // (_FusedConv2D inside oneDNN's primitive, conv_impl.h's DnnlEpilogue).
  Status CheckBias(const OpKernel& kernel, const Tensor& bias, const Tensor& out) const;

  const FusedOpsSpec& spec() const { return spec_; }

 private:
  FusedOpsSpec spec_;
  bool nchw_ = false;
};

}  // namespace tensorflux::fused
