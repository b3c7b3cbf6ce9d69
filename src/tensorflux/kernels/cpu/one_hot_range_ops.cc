// CPU kernels that make tensors from a few scalars: OneHot (every dtype; on/off values copied as
// storage-type elements) and Range (numeric; element i is start + i * delta, computed in double
// like numpy.arange).
#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/array_copy.h"
#include "tensorflux/ops/array_shape_util.h"

namespace tensorflux {
namespace {

class OneHotOp : public OpKernel {
 public:
  explicit OneHotOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& depth_t = ctx->input(1);
    const Tensor& on = ctx->input(2);
    const Tensor& off = ctx->input(3);
    const int rank = indices.dims();
    OP_REQUIRES(ctx, axis_ == -1 || (axis_ >= 0 && axis_ <= rank),
                errors::InvalidArgument("Expected axis to be -1 or between [0, ", rank,
                                        "].  But received: ", axis_));
    OP_REQUIRES(ctx, depth_t.dims() == 0,
                errors::InvalidArgument("depth must be a scalar, but got shape ",
                                        depth_t.shape().DebugString()));
    OP_REQUIRES(ctx, on.dims() == 0 && off.dims() == 0,
                errors::InvalidArgument("on_value and off_value must be scalars, but got shapes ",
                                        on.shape().DebugString(), " and ",
                                        off.shape().DebugString()));
    const int64_t depth = depth_t.scalar<int32_t>();
    OP_REQUIRES(ctx, depth >= 0,
                errors::InvalidArgument("depth must be non-negative, got: ", depth));
    const int axis = axis_ == -1 ? rank : static_cast<int>(axis_);
    TensorShape shape = indices.shape();
    OP_REQUIRES_OK(ctx, shape.AddDimWithStatus(depth));  // checks rank and overflow
    shape = indices.shape();
    shape.InsertDim(axis, depth);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return;
    std::vector<int64_t> idx;
    OP_REQUIRES_OK(ctx, array_util::IntegerValues(indices, "indices", &idx));
    int64_t suffix = 1;
    for (int d = axis; d < rank; ++d) suffix *= indices.dim_size(d);
    OP_REQUIRES_OK(ctx, array_copy::VisitElementType(on.dtype(), "OneHot", [&](auto tag) {
      using S = typename decltype(tag)::type;
      S* dst = array_copy::Elements<S>(*out);
      array_copy::FillElements<S>(ctx->intra_op_thread_pool(), dst, out->NumElements(),
                                  *array_copy::Elements<S>(off));
      const S& on_value = *array_copy::Elements<S>(on);
      // Output viewed as [prefix, depth, suffix]; index i = p * suffix + s.
      for (size_t i = 0; i < idx.size(); ++i) {
        if (idx[i] < 0 || idx[i] >= depth) continue;  // out of range: all off_value
        const int64_t p = static_cast<int64_t>(i) / suffix, s = static_cast<int64_t>(i) % suffix;
        dst[(p * depth + idx[i]) * suffix + s] = on_value;
      }
      return OkStatus();
    }));
  }

 private:
  int64_t axis_ = -1;
};
REGISTER_KERNEL_BUILDER(Name("OneHot").Device(DEVICE_CPU), OneHotOp);

class RangeOp : public OpKernel {
 public:
  explicit RangeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < 3; ++i) {
      OP_REQUIRES(ctx, ctx->input(i).dims() == 0,
                  errors::InvalidArgument(i == 0 ? "start" : i == 1 ? "limit" : "delta",
                                          " must be a scalar, not shape ",
                                          ctx->input(i).shape().DebugString()));
    }
    OP_REQUIRES_OK(ctx, VisitPodType(ctx->input(0).dtype(), "Range", [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, bool>) {
        return errors::InvalidArgument("Range does not support bool");
      } else {
        // Compute type: int64 for integers, double for floating types.
        using C = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
        auto get = [&](int i) -> C {
          const T v = ctx->input(i).scalar<T>();
          if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
            return static_cast<float>(v);
          } else {
            return static_cast<C>(v);
          }
        };
        const C start = get(0), limit = get(1), delta = get(2);
        int64_t size = 0;
        if constexpr (std::is_integral_v<T>) {
          TX_RETURN_IF_ERROR(array_util::RangeSize<int64_t>(start, limit, delta, &size));
        } else {
          TX_RETURN_IF_ERROR(array_util::RangeSize<double>(start, limit, delta, &size));
        }
        TX_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Make({size}));
        Tensor* out = nullptr;
        TX_RETURN_IF_ERROR(ctx->allocate_output(0, shape, &out));
        T* p = out->data<T>();
        for (int64_t i = 0; i < size; ++i) {
          if constexpr (std::is_integral_v<T>) {
            // Modular arithmetic: the true value lies in [start, limit) and fits T.
            p[i] = static_cast<T>(static_cast<uint64_t>(start) +
                                  static_cast<uint64_t>(i) * static_cast<uint64_t>(delta));
          } else {
            const double v = start + static_cast<double>(i) * delta;
            if constexpr (std::is_same_v<T, double>) {
              p[i] = v;
            } else {
              p[i] = static_cast<T>(static_cast<float>(v));
            }
          }
        }
        return OkStatus();
      }
    }));
  }
};
REGISTER_KERNEL_BUILDER(Name("Range").Device(DEVICE_CPU), RangeOp);

}  // namespace
}  // namespace tensorflux
