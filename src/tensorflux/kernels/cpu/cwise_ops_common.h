// Kernel-private: the one templated CPU path for elementwise ops (TensorFlow's cwise_ops family).
//
//   UnaryOp<Functor, T>   y = f(x)                       (Neg, Exp, ...)
//   BinaryOp<Functor, T>  z = f(x, y), NumPy broadcasting (Add, Mul, Maximum, ...)
//
// A functor (cwise_functors.h) says what to compute on Eigen array expressions; this file says
// how: broadcasting, buffer forwarding, half/bfloat16 in float, and parallel shards. Register a
// functor for a list of dtypes with one line (see cwise_ops_*.cc):
//
//   RegisterBinary<functor::Add>("AddV2", FloatTypes{}, IntTypes{});
//
// Broadcasting: the two shapes are aligned on the right, dims of size 1 stretch, and adjacent
// dims with the same pattern (both present, x broadcast, y broadcast) are collapsed, so [8,1,5,6]
// + [5,6] runs as a 2-d loop over [8, 30] with x stride 30 and y stride 0 in dim 0. The innermost
// collapsed dim is always contiguous (stride 1) or broadcast (stride 0) in each input, and is
// evaluated by one vectorized Eigen expression.
//
// Kernels here are cheap (IsExpensive() is false: the executor runs them inline) and split large
// tensors over the device's intra-op pool.
#pragma once

// GCC 12 reports false -Wmaybe-uninitialized warnings inside its AVX-512 intrinsics when it
// inlines Eigen's vectorized exp/log. The pragma must precede the first Eigen include of the
// .cc file, so cwise_functors.h carries it too; only kernel .cc files include these headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include <Eigen/Core>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/tensor_shape.h"
#include "tensorflux/core/threadpool.h"
#include "tensorflux/core/types.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/cwise_half_convert.h"

namespace tensorflux {
namespace cwise {

// ---------------------------------------------------------------- broadcasting

// The iteration space of z = f(x, y) after NumPy broadcasting and dim collapsing.
struct BinaryBroadcast {
  TensorShape out_shape;
  // Collapsed dims, outermost first; never empty. Their product is out_shape.num_elements().
  absl::InlinedVector<int64_t, 6> dims;
  // Element strides of x and y along `dims`; 0 where that input is broadcast.
  absl::InlinedVector<int64_t, 6> x_strides, y_strides;
};

// INVALID_ARGUMENT "Incompatible shapes: [2,3] vs. [4]" when a dim pair is neither equal nor has
// a 1, or when the broadcast element count overflows int64.
Status ComputeBinaryBroadcast(const TensorShape& x, const TensorShape& y, BinaryBroadcast* out);

// Calls run(z_offset, x_offset, y_offset, len) for each contiguous innermost run of output
// elements in [begin, end), in order.
template <typename Run>
void ForEachInnerRun(const BinaryBroadcast& bc, int64_t begin, int64_t end, Run&& run) {
  const int r = static_cast<int>(bc.dims.size());
  const int64_t inner = bc.dims[r - 1];
  const int64_t xs_in = bc.x_strides[r - 1], ys_in = bc.y_strides[r - 1];
  int64_t col = begin % inner;
  int64_t rem = begin / inner;
  absl::InlinedVector<int64_t, 6> idx(r, 0);
  int64_t xo = 0, yo = 0;
  for (int d = r - 2; d >= 0; --d) {
    idx[d] = rem % bc.dims[d];
    rem /= bc.dims[d];
    xo += idx[d] * bc.x_strides[d];
    yo += idx[d] * bc.y_strides[d];
  }
  int64_t pos = begin;
  while (pos < end) {
    const int64_t len = std::min(inner - col, end - pos);
    run(pos, xo + col * xs_in, yo + col * ys_in, len);
    pos += len;
    col = 0;
    for (int d = r - 2; d >= 0; --d) {  // odometer over the outer dims
      xo += bc.x_strides[d];
      yo += bc.y_strides[d];
      if (++idx[d] < bc.dims[d]) break;
      xo -= bc.dims[d] * bc.x_strides[d];
      yo -= bc.dims[d] * bc.y_strides[d];
      idx[d] = 0;
    }
  }
}

// ---------------------------------------------------------------- element types

// The type a functor computes in: float for half and bfloat16; for the signed integers, the
// unsigned type of the same width when the functor wraps (Add, Mul, Neg...: two's-complement
// results without signed-overflow UB); T otherwise.
template <typename F, typename T>
struct ComputeTypeOf {
  using type = T;
};
template <typename F>
struct ComputeTypeOf<F, Half> {
  using type = float;
};
template <typename F>
struct ComputeTypeOf<F, BFloat16> {
  using type = float;
};
template <typename F, typename T>
  requires(std::is_integral_v<T> && std::is_signed_v<T> && F::kWrapsLikeUnsigned)
struct ComputeTypeOf<F, T> {
  using type = std::make_unsigned_t<T>;
};

// The output element type: T unless the functor declares `template <class T> using Output`
// (comparisons will produce bool).
template <typename F, typename T>
struct OutputTypeOf {
  using type = T;
};
template <typename F, typename T>
  requires requires { typename F::template Output<T>; }
struct OutputTypeOf<F, T> {
  using type = typename F::template Output<T>;
};

template <typename T>
inline constexpr bool kIsHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Types Eigen cannot compute on: the functor's Scalar(a, b) runs element by element.
template <typename T>
inline constexpr bool kIsScalarOnly = std::is_same_v<T, std::string>;

template <typename C>
using Arr = Eigen::Array<C, Eigen::Dynamic, 1>;
template <typename C>
using ConstArrMap = Eigen::Map<const Arr<C>>;
template <typename C>
using ArrMap = Eigen::Map<Arr<C>>;

// Elements converted per block on the half/bfloat16 path (stack buffers).
inline constexpr int64_t kConvertBlock = 512;

// Work below this many cost units (about ns) runs on the calling thread.
inline constexpr int64_t kMinParallelCost = 32768;

// Runs fn(begin, end) over [0, total), sharded over the pool when the work is large enough.
template <typename Fn>
void ParallelShards(OpKernelContext* ctx, int64_t total, int64_t cost_per_unit, Fn&& fn) {
  ThreadPool* pool =
      total * cost_per_unit < kMinParallelCost ? nullptr : ctx->intra_op_thread_pool();
  if (pool == nullptr || pool->NumThreads() <= 1) {
    fn(int64_t{0}, total);
    return;
  }
  pool->ParallelFor(total, cost_per_unit, [&fn](int64_t b, int64_t e) { fn(b, e); });
}

// ---------------------------------------------------------------- inner runs

// Stores a computed block: float results into half/bfloat16 (round to nearest even), anything
// else (bool results of comparisons) as is.
template <typename OC, typename Out>
void StoreBlock(const OC* src, Out* dst, int64_t m) {
  if constexpr (kIsHalfLike<Out>) {
    FromFloat(src, dst, m);
  } else {
    std::copy(src, src + m, dst);
  }
}

// z[0, n) = f(x, y), where x (resp. y) is one element broadcast when x_scalar (resp. y_scalar),
// else n contiguous elements.
template <typename F, typename T, typename Out>
void BinaryRun(const T* x, bool x_scalar, const T* y, bool y_scalar, Out* z, int64_t n) {
  using C = typename ComputeTypeOf<F, T>::type;
  if constexpr (kIsScalarOnly<T>) {
    for (int64_t i = 0; i < n; ++i) z[i] = F::Scalar(x[x_scalar ? 0 : i], y[y_scalar ? 0 : i]);
  } else if constexpr (!kIsHalfLike<T>) {
    // T and C have the same representation (C may be T's unsigned twin).
    using OC = std::conditional_t<std::is_same_v<Out, T>, C, Out>;
    const C* xc = reinterpret_cast<const C*>(x);
    const C* yc = reinterpret_cast<const C*>(y);
    ArrMap<OC> zm(reinterpret_cast<OC*>(z), n);
    if (x_scalar) {
      zm = F::Eval(Arr<C>::Constant(n, *xc), ConstArrMap<C>(yc, n));
    } else if (y_scalar) {
      zm = F::Eval(ConstArrMap<C>(xc, n), Arr<C>::Constant(n, *yc));
    } else {
      zm = F::Eval(ConstArrMap<C>(xc, n), ConstArrMap<C>(yc, n));
    }
  } else {
    // Half and bfloat16: convert a block to float, compute, convert back.
    using OC = std::conditional_t<std::is_same_v<Out, T>, float, Out>;
    float xb[kConvertBlock], yb[kConvertBlock];
    OC zb[kConvertBlock];
    const float xs = x_scalar ? static_cast<float>(x[0]) : 0.f;
    const float ys = y_scalar ? static_cast<float>(y[0]) : 0.f;
    for (int64_t off = 0; off < n; off += kConvertBlock) {
      const int64_t m = std::min(kConvertBlock, n - off);
      if (!x_scalar) ToFloat(x + off, xb, m);
      if (!y_scalar) ToFloat(y + off, yb, m);
      ArrMap<OC> zm(zb, m);
      if (x_scalar) {
        zm = F::Eval(Arr<float>::Constant(m, xs), ConstArrMap<float>(yb, m));
      } else if (y_scalar) {
        zm = F::Eval(ConstArrMap<float>(xb, m), Arr<float>::Constant(m, ys));
      } else {
        zm = F::Eval(ConstArrMap<float>(xb, m), ConstArrMap<float>(yb, m));
      }
      StoreBlock(zb, z + off, m);
    }
  }
}

// y[0, n) = f(x[0, n)).
template <typename F, typename T, typename Out>
void UnaryRun(const T* x, Out* y, int64_t n) {
  using C = typename ComputeTypeOf<F, T>::type;
  if constexpr (kIsScalarOnly<T>) {
    for (int64_t i = 0; i < n; ++i) y[i] = F::Scalar(x[i]);
  } else if constexpr (!kIsHalfLike<T>) {
    using OC = std::conditional_t<std::is_same_v<Out, T>, C, Out>;
    ArrMap<OC>(reinterpret_cast<OC*>(y), n) =
        F::Eval(ConstArrMap<C>(reinterpret_cast<const C*>(x), n));
  } else {
    using OC = std::conditional_t<std::is_same_v<Out, T>, float, Out>;
    float xb[kConvertBlock];
    OC yb[kConvertBlock];
    for (int64_t off = 0; off < n; off += kConvertBlock) {
      const int64_t m = std::min(kConvertBlock, n - off);
      ToFloat(x + off, xb, m);
      ArrMap<OC>(yb, m) = F::Eval(ConstArrMap<float>(xb, m));
      StoreBlock(yb, y + off, m);
    }
  }
}

// ---------------------------------------------------------------- kernels

template <typename F, typename T>
class BinaryOp : public OpKernel {
 public:
  using Out = typename OutputTypeOf<F, T>::type;

  explicit BinaryOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    // Flat cases (same shape, or a rank-0 operand) skip the broadcast machinery: they are the
    // common ones, and the executor's per-node overhead budget is a fraction of a microsecond.
    const bool same = x.shape() == y.shape();
    const bool x_scalar = !same && x.dims() == 0;
    const bool y_scalar = !same && !x_scalar && y.dims() == 0;
    const bool flat = same || x_scalar || y_scalar;
    BinaryBroadcast bc;
    if (!flat) OP_REQUIRES_OK(ctx, ComputeBinaryBroadcast(x.shape(), y.shape(), &bc));
    const TensorShape out_shape = !flat ? bc.out_shape : (x_scalar ? y.shape() : x.shape());
    const int64_t total = out_shape.num_elements();
    if constexpr (requires { F::template CheckRhs<T>(std::declval<absl::Span<const T>>()); }) {
      if (total > 0) OP_REQUIRES_OK(ctx, F::template CheckRhs<T>(y.flat<T>()));
    }
    // Take the input pointers before forwarding may hand an input's buffer to the output.
    const T* xp = x.data<T>();
    const T* yp = y.data<T>();
    Tensor* z = nullptr;
    if constexpr (std::is_same_v<Out, T>) {
      OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, out_shape, &z));
    } else {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &z));
    }
    if (total == 0) return;
    Out* zp = z->data<Out>();
    if (flat) {
      ParallelShards(ctx, total, F::kCost, [&](int64_t begin, int64_t end) {
        BinaryRun<F, T, Out>(xp + (x_scalar ? 0 : begin), x_scalar, yp + (y_scalar ? 0 : begin),
                             y_scalar, zp + begin, end - begin);
      });
      return;
    }
    const bool x_inner_bcast = bc.x_strides.back() == 0;
    const bool y_inner_bcast = bc.y_strides.back() == 0;
    ParallelShards(ctx, total, F::kCost, [&](int64_t begin, int64_t end) {
      ForEachInnerRun(bc, begin, end, [&](int64_t zo, int64_t xo, int64_t yo, int64_t len) {
        BinaryRun<F, T, Out>(xp + xo, x_inner_bcast, yp + yo, y_inner_bcast, zp + zo, len);
      });
    });
  }
};

template <typename F, typename T>
class UnaryOp : public OpKernel {
 public:
  using Out = typename OutputTypeOf<F, T>::type;

  explicit UnaryOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const TensorShape shape = x.shape();
    const T* xp = x.data<T>();  // before forwarding may hand x's buffer to the output
    Tensor* y = nullptr;
    if constexpr (std::is_same_v<Out, T>) {
      OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, shape, &y));
    } else {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &y));
    }
    const int64_t total = shape.num_elements();
    if (total == 0) return;
    Out* yp = y->data<Out>();
    ParallelShards(ctx, total, F::kCost, [&](int64_t begin, int64_t end) {
      UnaryRun<F, T, Out>(xp + begin, yp + begin, end - begin);
    });
  }
};

// ---------------------------------------------------------------- registration

template <typename... Ts>
struct TypeList {};

using HalfTypes = TypeList<Half, BFloat16>;
using FloatTypes = TypeList<Half, BFloat16, float, double>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

// Registers Kernel<F, T> as the CPU kernel of `op` for T = every type in the lists.
template <template <typename, typename> class Kernel, typename F, typename... Ts>
void RegisterCwiseTypes(const char* op, TypeList<Ts...>) {
  (KernelRegistry::Global()->Register(
       KernelDefBuilder(op).Device(DEVICE_CPU).TypeConstraint<Ts>("T"),
       [](OpKernelConstruction* c) -> OpKernel* { return new Kernel<F, Ts>(c); }),
   ...);
}

template <typename F, typename... Lists>
void RegisterBinary(const char* op, Lists... lists) {
  (RegisterCwiseTypes<BinaryOp, F>(op, lists), ...);
}

template <typename F, typename... Lists>
void RegisterUnary(const char* op, Lists... lists) {
  (RegisterCwiseTypes<UnaryOp, F>(op, lists), ...);
}

}  // namespace cwise
}  // namespace tensorflux
