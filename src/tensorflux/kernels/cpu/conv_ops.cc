// CPU kernels of the Conv2D family (ops/conv_ops.cc): Conv2D, Conv2DBackpropInput,
// Conv2DBackpropFilter, DepthwiseConv2dNative(+BackpropInput/Filter), and _FusedConv2D (Conv2D,
// then BiasAdd [+ activation] in one pass over its output, fused_epilogue.h, so that it gives
// the unfused Conv2D -> BiasAdd [-> Relu] chain's bits on every CPU). One kernel template,
// ConvOp<T, direction, depthwise>, validates (ops/conv_geometry.h, read by role in
// kernels/shared/conv_shapes.h, shared with the GPU kernels) and dispatches to the float32
// oneDNN path (half and bfloat16 widened to float32 around it) or the float64 direct loops
// (kernels/cpu/conv_impl.h). Data formats NHWC and NCHW
// are both supported; grouped Conv2D (input depth a multiple of the filter's in depth) too.
// Zero-size operands: an empty result returns at once; an empty operand with a non-empty
// result (e.g. an input with a zero spatial dim padded to a non-empty output) gives zeros.
#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/conv_impl.h"
#include "tensorflux/kernels/cpu/fused_epilogue.h"
#include "tensorflux/ops/conv_geometry.h"

namespace tensorflux {
namespace {

using conv::ConvAttrs;
using conv::ConvGeometry;
using conv::Direction;

// kFused: _FusedConv2D, the forward Conv2D followed by its fused_ops (fused_epilogue.h).
template <typename T, Direction kDir, bool kDepthwise, bool kFused = false>
class ConvOp : public OpKernel {
 public:
  explicit ConvOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    auto attrs = ConvAttrs::FromNodeDef(ctx->def());
    if (!attrs.ok()) {
      ctx->SetStatus(attrs.status());
      return;
    }
    attrs_ = *attrs;
    if constexpr (!std::is_same_v<T, double>) dnnl_ = conv::NewDnnlConvCache();
    if constexpr (kFused) ctx->SetStatus(epilogue_.Init(ctx));
  }

  void Compute(OpKernelContext* ctx) override {
    Tensor* result = nullptr;
    if constexpr (kFused && std::is_same_v<T, float>) {
      // NHWC BiasAdd [+ Relu]: the plain primitive, then the epilogue pass (ComputeConv with
      // the bias; see there). Other formats and activations take the general path below.
      const FusedActivation act = epilogue_.spec().activation;
      if (dnnl_ != nullptr && attrs_.format == conv::DataFormat::kNHWC &&
          (act == FusedActivation::kNone || act == FusedActivation::kRelu)) {
        ComputeConv(ctx, &result, &ctx->input(2));
        return;
      }
    }
    ComputeConv(ctx, &result);
    if constexpr (kFused) {
      if (!ctx->status().ok()) return;
      OP_REQUIRES_OK(ctx, epilogue_.Apply<T>(*this, ctx, ctx->input(2), result));
    }
  }

  // Validates, allocates *result_out (output 0) and computes the convolution into it; with
  // `bias` (float32 _FusedConv2D only), also the epilogue (checked like Epilogue::Apply).
  void ComputeConv(OpKernelContext* ctx, Tensor** result_out, const Tensor* bias = nullptr) {
    conv::ConvOperands ops;
    OP_REQUIRES_OK(ctx, conv::ReadConvOperands(ctx, attrs_, kDir, kDepthwise, &ops));
    const ConvGeometry& g = ops.g;
    const Tensor* input = ops.input;
    const Tensor* filter = ops.filter;
    const Tensor* out_backprop = ops.out_backprop;
    const TensorShape& result_shape = ops.result_shape;
    Tensor*& result = *result_out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, result_shape, &result));
    if (bias != nullptr) OP_REQUIRES_OK(ctx, epilogue_.CheckBias(*this, *bias, *result));
    if (result->NumElements() == 0) return;
    // The two operands; the result's slot is filled below.
    T* ptrs[3] = {input ? Mutable(input) : nullptr, filter ? Mutable(filter) : nullptr,
                  out_backprop ? Mutable(out_backprop) : nullptr};
    const int computed = kDir == Direction::kForward ? 2 : kDir == Direction::kBackwardInput ? 0 : 1;
    ptrs[computed] = result->data<T>();
    const int64_t sizes[3] = {g.InputShape().num_elements(), g.FilterShape().num_elements(),
                              g.OutputShape().num_elements()};
    for (int i = 0; i < 3; ++i) {
      if (i != computed && sizes[i] == 0) {  // an empty sum: zeros
        std::fill_n(result->data<T>(), result->NumElements(), T(0));
        if (bias != nullptr) OP_REQUIRES_OK(ctx, epilogue_.Apply<T>(*this, ctx, *bias, result));
        return;
      }
    }
    if constexpr (std::is_same_v<T, double>) {
      conv::ReferenceConv(kDir, g, ptrs[0], ptrs[1], ptrs[2]);
    } else {
      OP_REQUIRES(ctx, dnnl_ != nullptr,
                  errors::Unimplemented(attrs_.Prefix(), "float32 convolution needs oneDNN, "
                                        "which this build does not have"));
      if constexpr (std::is_same_v<T, float>) {
        // BiasAdd [+ Relu] in the epilogue pass, not as oneDNN post-ops: oneDNN's AVX2 kernels
        // add a fused bias in another order than the plain primitive followed by BiasAdd (1 ULP
        // apart on an AVX2-only CPU, where the fused and unfused graphs then disagree); the pass
        // gives the unfused chain's bits on every CPU for one extra pass over the output.
        OP_REQUIRES_OK(ctx, dnnl_->Run(ctx, kDir, g, ptrs[0], ptrs[1], ptrs[2]));
        if (bias != nullptr) OP_REQUIRES_OK(ctx, epilogue_.Apply<T>(*this, ctx, *bias, result));
      } else {
        OP_REQUIRES_OK(ctx, WidenedRun(ctx, g, ptrs, sizes, computed));
      }
    }
  }

 private:
  // half / bfloat16: the operands widened to float32, the float32 oneDNN path, the result
  // rounded once (as TF's CPU kernels compute these types).
  Status WidenedRun(OpKernelContext* ctx, const ConvGeometry& g, T* const ptrs[3],
                    const int64_t sizes[3], int computed) {
    Tensor wide[3];
    float* wp[3];
    for (int i = 0; i < 3; ++i) {
      TX_RETURN_IF_ERROR(ctx->allocate_temp(DT_FLOAT, TensorShape({sizes[i]}), &wide[i]));
      wp[i] = wide[i].data<float>();
      if (i == computed) continue;
      for (int64_t j = 0; j < sizes[i]; ++j) wp[i][j] = static_cast<float>(ptrs[i][j]);
    }
    TX_RETURN_IF_ERROR(dnnl_->Run(ctx, kDir, g, wp[0], wp[1], wp[2]));
    for (int64_t j = 0; j < sizes[computed]; ++j) ptrs[computed][j] = T(wp[computed][j]);
    return OkStatus();
  }

  // The operands are only read; the implementations take non-const pointers so that one
  // signature serves all three directions.
  static T* Mutable(const Tensor* t) { return const_cast<T*>(t->data<T>()); }

  ConvAttrs attrs_;
  std::unique_ptr<conv::DnnlConvCache> dnnl_;
  fused::Epilogue epilogue_;  // kFused only
};

#define TX_REGISTER_CONV(T)                                                                    \
  REGISTER_KERNEL_BUILDER(Name("Conv2D").Device(DEVICE_CPU).TypeConstraint<T>("T"),           \
                          ConvOp<T, Direction::kForward, false>);                              \
  REGISTER_KERNEL_BUILDER(                                                                     \
      Name("Conv2DBackpropInput").Device(DEVICE_CPU).TypeConstraint<T>("T"),                   \
      ConvOp<T, Direction::kBackwardInput, false>);                                            \
  REGISTER_KERNEL_BUILDER(                                                                     \
      Name("Conv2DBackpropFilter").Device(DEVICE_CPU).TypeConstraint<T>("T"),                  \
      ConvOp<T, Direction::kBackwardFilter, false>);                                           \
  REGISTER_KERNEL_BUILDER(                                                                     \
      Name("DepthwiseConv2dNative").Device(DEVICE_CPU).TypeConstraint<T>("T"),                 \
      ConvOp<T, Direction::kForward, true>);                                                   \
  REGISTER_KERNEL_BUILDER(                                                                     \
      Name("DepthwiseConv2dNativeBackpropInput").Device(DEVICE_CPU).TypeConstraint<T>("T"),    \
      ConvOp<T, Direction::kBackwardInput, true>);                                             \
  REGISTER_KERNEL_BUILDER(                                                                     \
      Name("DepthwiseConv2dNativeBackpropFilter").Device(DEVICE_CPU).TypeConstraint<T>("T"),   \
      ConvOp<T, Direction::kBackwardFilter, true>);                                            \
  REGISTER_KERNEL_BUILDER(Name("_FusedConv2D").Device(DEVICE_CPU).TypeConstraint<T>("T"),      \
                          ConvOp<T, Direction::kForward, false, true>)

#ifdef TX_HAVE_DNNL
TX_REGISTER_CONV(float);
TX_REGISTER_CONV(Half);
TX_REGISTER_CONV(BFloat16);
#endif
TX_REGISTER_CONV(double);
#undef TX_REGISTER_CONV

}  // namespace
}  // namespace tensorflux
