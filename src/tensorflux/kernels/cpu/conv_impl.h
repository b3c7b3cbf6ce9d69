// Internal to the Conv2D-family CPU kernels (kernels/cpu/conv_ops.cc): the two compute paths.
//
//   float32: oneDNN convolution primitives (forward, backward_data, backward_weights) in
//            conv_dnnl.cc. Activations are passed to oneDNN in their own layout (NHWC "acdb" or
//            NCHW), the filter as format_tag::any so oneDNN picks its blocked weights layout, and
//            the filter (or filter gradient) is reordered each call; bench/conv_bench.cc measures
//            this against all-`any` layouts with activation reorders (see docs/PERFORMANCE.md).
//            Primitives are cached per kernel instance keyed by the geometry (DnnlConvCache).
//            3x3 stride-1 convolutions with depths that are multiples of 16 and at least 3,136
//            batch x output pixels use oneDNN's Winograd F(4x4, 3x3), with activations reordered
//            to its blocked layout (conv_dnnl.cc, WantsWinograd; TX_ENABLE_WINOGRAD=0: direct).
//   float64: direct loops (conv_reference.cc), single-threaded: oneDNN has no f64 convolution;
//            this path exists so the float64 numeric gradient checks exercise the real ops.
//
// Every function assumes a validated geometry (ops/conv_geometry.h) and non-empty operands.
// Pointer roles: `input` [N,H,W,C] or [N,C,H,W], `filter` HWIO (grouped/depthwise as in the
// geometry), `output` the forward output / out_backprop.
#pragma once

#include <memory>

#include "tensorflux/core/status.h"
#include "tensorflux/kernels/shared/conv_shapes.h"
#include "tensorflux/ops/conv_geometry.h"

namespace tensorflux {
class OpKernelContext;

namespace conv {

// Direction: kernels/shared/conv_shapes.h.

// output = conv(input, filter)  /  input = conv_backprop_input(filter, output)  /
// filter = conv_backprop_filter(input, output): the one of the three that `dir` computes is
// written (overwritten), the other two are read.
void ReferenceConv(Direction dir, const ConvGeometry& g, double* input, double* filter,
                   double* output);

// _FusedConv2D's epilogue inside the forward primitive (oneDNN post-ops), so the output is
// written once: `bias` (one float per output channel; nullptr: none) added to each output
// element, then ReLU when `relu`. The sum is the unfused BiasAdd's (convolution result + bias,
// one rounding), so results equal Conv2D -> BiasAdd -> Relu bit for bit.
struct DnnlEpilogue {
  const float* bias = nullptr;
  bool relu = false;
};

// Per-kernel cache of oneDNN primitives (thread-safe).
class DnnlConvCache {
 public:
  virtual ~DnnlConvCache() = default;
  // As ReferenceConv, in float32 through oneDNN. Scratch buffers come from ctx->allocate_temp.
  // INTERNAL when oneDNN refuses the geometry; RESOURCE_EXHAUSTED from allocation.
  // `epilogue`: forward only (INTERNAL for another direction with a bias).
  virtual Status Run(OpKernelContext* ctx, Direction dir, const ConvGeometry& g, float* input,
                     float* filter, float* output, const DnnlEpilogue& epilogue = {}) = 0;
  // Number of distinct geometries with a cached primitive (for tests).
  virtual int CachedPrimitives() const = 0;
};
// nullptr when built without oneDNN.
std::unique_ptr<DnnlConvCache> NewDnnlConvCache();

}  // namespace conv
}  // namespace tensorflux
