// CPU kernels of BiasAdd and BiasAddGrad (TensorFlow's ops; see ops/nn_ops.cc).
//
// Both view the value as [outer, C, inner] (kernels/shared/nn_shape.h). BiasAdd adds bias[c] to
// every element of channel c (bias_add_util.h, shared with the fused kernels' epilogue), sharded
// over `outer` on the intra-op pool, writing in place when the value's buffer can be forwarded. BiasAddGrad sums every element of channel c: fixed blocks of
// outer rows (their size does not depend on the thread count) are summed in parallel into
// per-block partial sums that are then added in block order, so the result is bit-identical for
// any number of threads. Sums accumulate in double for floating types and in wrapping unsigned
// arithmetic for integers (no signed-overflow UB), as does BiasAdd for integers.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "tensorflux/core/threadpool.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/bias_add_util.h"
#include "tensorflux/kernels/cpu/nn_kernel_util.h"

namespace tensorflux {
namespace {

using nn_kernels::KernelError;

// Accumulator of sums of T: double for floating types, wrapping unsigned for integers.
template <typename T, bool = std::is_integral_v<T>>
struct SumOf {
  using type = double;
};
template <typename T>
struct SumOf<T, true> {
  using type =
      std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
};
template <typename T>
using SumT = typename SumOf<T>::type;

template <typename T>
SumT<T> ToSum(T v) {
  if constexpr (std::is_integral_v<T> || std::is_floating_point_v<T>) {
    return static_cast<SumT<T>>(v);
  } else {
    return static_cast<double>(static_cast<float>(v));  // half, bfloat16: exact
  }
}

template <typename T>
T FromSum(SumT<T> s) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(s));
  } else {
    return static_cast<T>(s);
  }
}

using Layout = nn_kernels::BiasLayout;

template <typename T>
void AddBias(const T* x, const T* bias, T* out, const Layout& l, ThreadPool* pool) {
  auto run = [&](int64_t o0, int64_t o1) { nn_kernels::AddBiasRows(x, bias, out, l, o0, o1); };
  if (pool == nullptr) {
    run(0, l.outer);
  } else {
    pool->ParallelFor(l.outer, l.channels * l.inner, run);
  }
}

class BiasAddOp : public OpKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(nn_kernels::ReadDataFormat(ctx, &nchw_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    Layout l;
    OP_REQUIRES_OK(ctx, nn_kernels::CheckBiasAdd(*this, value, bias, nchw_, &l));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, value.shape(), &out));
    if (value.NumElements() == 0) return;
    OP_REQUIRES_OK(ctx, VisitPodType(value.dtype(), type_string(), [&](auto tag) -> Status {
                     using T = typename decltype(tag)::type;
                     if constexpr (std::is_same_v<T, bool>) {
                       return KernelError(*this, "dtype bool is not supported");
                     } else {
                       AddBias<T>(value.data<T>(), bias.data<T>(), out->data<T>(), l,
                                  ctx->intra_op_thread_pool());
                       return OkStatus();
                     }
                   }));
  }

 private:
  bool nchw_ = false;
};

// Sum of channel c over outer rows [o0, o1), into part[c].
template <typename T>
void SumChannels(const T* x, const Layout& l, int64_t o0, int64_t o1, SumT<T>* part) {
  const int64_t row = l.channels * l.inner;
  for (int64_t o = o0; o < o1; ++o) {
    const T* xr = x + o * row;
    if (l.inner == 1) {
      for (int64_t c = 0; c < l.channels; ++c) part[c] += ToSum(xr[c]);
    } else {
      for (int64_t c = 0; c < l.channels; ++c) {
        const T* xi = xr + c * l.inner;
        SumT<T> s = 0;
        for (int64_t i = 0; i < l.inner; ++i) s += ToSum(xi[i]);
        part[c] += s;
      }
    }
  }
}

// Elements per block of outer rows: fixed, so results do not depend on the thread count.
constexpr int64_t kBlockElements = 16384;
// Estimated ns per element of the sum (ParallelFor's cost unit), as 1 / kElementsPerNs: the
// channel loop (inner == 1) runs in AVX-512 float -> double packets (CMakeLists.txt gives this
// file GCC's dynamic vector cost model), about 0.1 ns an element; [128, 256] (an MLP layer's
// gradient, 32k elements) then stays on the calling thread, where a hand-off to the pool cost
// more than the sum itself (13 vs 26 us a call through Session::Run, load 8).
constexpr int64_t kElementsPerNs = 8;

template <typename T>
void ReduceToChannels(const T* x, const Layout& l, T* out, ThreadPool* pool) {
  const int64_t row = std::max<int64_t>(1, l.channels * l.inner);
  const int64_t rows_per_block = std::max<int64_t>(1, kBlockElements / row);
  const int64_t blocks = (l.outer + rows_per_block - 1) / rows_per_block;
  std::vector<SumT<T>> part(static_cast<size_t>(std::max<int64_t>(blocks, 1) * l.channels),
                            SumT<T>(0));
  auto run = [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      SumChannels<T>(x, l, b * rows_per_block, std::min(l.outer, (b + 1) * rows_per_block),
                     part.data() + b * l.channels);
    }
  };
  if (pool == nullptr || blocks < 2) {
    run(0, blocks);
  } else {
    pool->ParallelFor(blocks, std::max<int64_t>(1, rows_per_block * row / kElementsPerNs), run);
  }
  for (int64_t c = 0; c < l.channels; ++c) {
    SumT<T> s = 0;
    for (int64_t b = 0; b < blocks; ++b) s += part[b * l.channels + c];
    out[c] = FromSum<T>(s);
  }
}

class BiasAddGradOp : public OpKernel {
 public:
  explicit BiasAddGradOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(nn_kernels::ReadDataFormat(ctx, &nchw_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    Layout l;
    OP_REQUIRES_OK(ctx, nn_kernels::BiasLayoutOf(*this, g.shape(), nchw_, &l));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({l.channels}), &out));
    if (l.channels == 0) return;
    OP_REQUIRES_OK(ctx, VisitPodType(g.dtype(), type_string(), [&](auto tag) -> Status {
                     using T = typename decltype(tag)::type;
                     if constexpr (std::is_same_v<T, bool>) {
                       return KernelError(*this, "dtype bool is not supported");
                     } else {
                       ReduceToChannels<T>(g.data<T>(), l, out->data<T>(),
                                           ctx->intra_op_thread_pool());
                       return OkStatus();
                     }
                   }));
  }

 private:
  bool nchw_ = false;
};

REGISTER_KERNEL_BUILDER(Name("BiasAdd").Device(DEVICE_CPU), BiasAddOp);
REGISTER_KERNEL_BUILDER(Name("BiasAddGrad").Device(DEVICE_CPU), BiasAddGradOp);

}  // namespace
}  // namespace tensorflux
