// CPU kernels of the Conv2D family (ops/conv_ops.cc): Conv2D, Conv2DBackpropInput,
// Conv2DBackpropFilter, DepthwiseConv2dNative(+BackpropInput/Filter). One kernel template,
// ConvOp<T, direction, depthwise>, validates (ops/conv_geometry.h) and dispatches to the float32
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
#include "tensorflux/ops/array_shape_util.h"
#include "tensorflux/ops/conv_geometry.h"

namespace tensorflux {
namespace {

using conv::ConvAttrs;
using conv::ConvGeometry;
using conv::Direction;

template <typename T, Direction kDir, bool kDepthwise>
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
  }

  void Compute(OpKernelContext* ctx) override {
    // Inputs by role: forward (input, filter); backprop input (input_sizes, filter, out_backprop);
    // backprop filter (input, filter_sizes, out_backprop).
    TensorShape input_shape, filter_shape;
    const Tensor* input = nullptr;
    const Tensor* filter = nullptr;
    const Tensor* out_backprop = nullptr;
    if (kDir == Direction::kForward) {
      input = &ctx->input(0);
      filter = &ctx->input(1);
      input_shape = input->shape();
      filter_shape = filter->shape();
    } else if (kDir == Direction::kBackwardInput) {
      filter = &ctx->input(1);
      out_backprop = &ctx->input(2);
      filter_shape = filter->shape();
      std::vector<int64_t> sizes;
      OP_REQUIRES_OK(ctx, ReadSizes(ctx->input(0), "input_sizes", &sizes));
      const int64_t depth = filter_shape.dims() == 4 ? filter_shape.dim_size(2) : 0;
      auto s = conv::InputSizesToShape(attrs_, sizes, out_backprop->shape(), depth);
      OP_REQUIRES_OK(ctx, s.status());
      input_shape = *s;
    } else {
      input = &ctx->input(0);
      out_backprop = &ctx->input(2);
      input_shape = input->shape();
      std::vector<int64_t> sizes;
      OP_REQUIRES_OK(ctx, ReadSizes(ctx->input(1), "filter_sizes", &sizes));
      auto s = conv::SizesToShape(attrs_, sizes, "filter_sizes");
      OP_REQUIRES_OK(ctx, s.status());
      filter_shape = *s;
    }
    auto geometry = conv::ComputeConvGeometry(attrs_, input_shape, filter_shape, kDepthwise);
    OP_REQUIRES_OK(ctx, geometry.status());
    const ConvGeometry& g = *geometry;
    if (out_backprop != nullptr) {
      OP_REQUIRES_OK(ctx, conv::CheckOutBackpropShape(attrs_, g, out_backprop->shape()));
    }
    const TensorShape& result_shape = kDir == Direction::kForward         ? g.OutputShape()
                                      : kDir == Direction::kBackwardInput ? input_shape
                                                                          : filter_shape;
    Tensor* result = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, result_shape, &result));
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
        OP_REQUIRES_OK(ctx, dnnl_->Run(ctx, kDir, g, ptrs[0], ptrs[1], ptrs[2]));
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

  Status ReadSizes(const Tensor& t, const char* what, std::vector<int64_t>* out) const {
    if (t.dims() != 1) {
      return errors::InvalidArgument(attrs_.Prefix(), what, " must be 1-dimensional, got shape ",
                                     t.shape().DebugString());
    }
    return array_util::IntValues(t, what, out);
  }

  ConvAttrs attrs_;
  std::unique_ptr<conv::DnnlConvCache> dnnl_;
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
      ConvOp<T, Direction::kBackwardFilter, true>)

#ifdef TX_HAVE_DNNL
TX_REGISTER_CONV(float);
TX_REGISTER_CONV(Half);
TX_REGISTER_CONV(BFloat16);
#endif
TX_REGISTER_CONV(double);
#undef TX_REGISTER_CONV

}  // namespace
}  // namespace tensorflux
