// ResizeBilinear's CPU kernel (ops/image_ops.cc), TF's sampling: for output index i along an axis
// of input size n and output size m, scale = (n - 1) / (m - 1) with align_corners (and m > 1),
// else n / m; the source coordinate is (i + 0.5) * scale - 0.5 with half_pixel_centers, else
// i * scale; it interpolates between floor (clamped to >= 0) and ceil (clamped to <= n - 1) with
// weight coordinate - floor. Output is float for every input type.
#include <cmath>
#include <vector>

#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

struct Tap {
  int64_t lower, upper;
  float lerp;
};

std::vector<Tap> Taps(int64_t in, int64_t out, bool align_corners, bool half_pixel) {
  const float scale = (align_corners && out > 1) ? static_cast<float>(in - 1) / (out - 1)
                                                 : static_cast<float>(in) / out;
  std::vector<Tap> taps(out);
  for (int64_t i = 0; i < out; ++i) {
    const float x = half_pixel ? (i + 0.5f) * scale - 0.5f : i * scale;
    const float fl = std::floor(x);
    taps[i].lower = std::max<int64_t>(static_cast<int64_t>(fl), 0);
    taps[i].upper = std::min<int64_t>(static_cast<int64_t>(std::ceil(x)), in - 1);
    taps[i].lerp = x - fl;
  }
  return taps;
}

class ResizeBilinearOp : public OpKernel {
 public:
  explicit ResizeBilinearOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("align_corners", &align_corners_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("half_pixel_centers", &half_pixel_));
    OP_REQUIRES(ctx, !(align_corners_ && half_pixel_),
                errors::InvalidArgument("ResizeBilinear: align_corners and half_pixel_centers "
                                        "cannot both be true"));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    const Tensor& size = ctx->input(1);
    OP_REQUIRES(ctx, images.dims() == 4,
                errors::InvalidArgument("ResizeBilinear: images must be 4-D [batch, height, "
                                        "width, channels], got shape ",
                                        images.shape().DebugString()));
    OP_REQUIRES(ctx, size.dims() == 1 && size.NumElements() == 2,
                errors::InvalidArgument("ResizeBilinear: size must be [new_height, new_width], "
                                        "got shape ", size.shape().DebugString()));
    const int64_t b = images.dim_size(0), h = images.dim_size(1), w = images.dim_size(2),
                  c = images.dim_size(3);
    const int64_t oh = size.flat<int32_t>()[0], ow = size.flat<int32_t>()[1];
    OP_REQUIRES(ctx, oh > 0 && ow > 0,
                errors::InvalidArgument("ResizeBilinear: size must be positive, got [", oh, ", ",
                                        ow, "]"));
    OP_REQUIRES(ctx, h > 0 && w > 0,
                errors::InvalidArgument("ResizeBilinear: input images must have a non-empty "
                                        "height and width, got shape ",
                                        images.shape().DebugString()));
    OP_REQUIRES(ctx, c > 0,
                errors::InvalidArgument("ResizeBilinear: images must have at least one channel, "
                                        "got shape ", images.shape().DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({b, oh, ow, c}), &out));
    const std::vector<Tap> ys = Taps(h, oh, align_corners_, half_pixel_);
    const std::vector<Tap> xs = Taps(w, ow, align_corners_, half_pixel_);
    OP_REQUIRES_OK(ctx, VisitPodType(images.dtype(), "ResizeBilinear", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = images.flat<T>().data();
      float* o = out->flat<float>().data();
      auto at = [&](int64_t n, int64_t y, int64_t x, int64_t k) {
        return static_cast<float>(in[((n * h + y) * w + x) * c + k]);
      };
      for (int64_t n = 0; n < b; ++n)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x)
            for (int64_t k = 0; k < c; ++k) {
              const Tap& ty = ys[y];
              const Tap& tx = xs[x];
              const float top = at(n, ty.lower, tx.lower, k) +
                                (at(n, ty.lower, tx.upper, k) - at(n, ty.lower, tx.lower, k)) * tx.lerp;
              const float bottom = at(n, ty.upper, tx.lower, k) +
                                   (at(n, ty.upper, tx.upper, k) - at(n, ty.upper, tx.lower, k)) * tx.lerp;
              *o++ = top + (bottom - top) * ty.lerp;
            }
      return OkStatus();
    }));
  }

 private:
  bool align_corners_ = false, half_pixel_ = false;
};
REGISTER_KERNEL_BUILDER(Name("ResizeBilinear").Device(DEVICE_CPU), ResizeBilinearOp);

}  // namespace
}  // namespace tensorflux
