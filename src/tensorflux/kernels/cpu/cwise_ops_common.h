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
// tensors over the device's intra-op pool. Outputs of 32 MiB and more that do not reuse an input
// buffer are written with streaming stores (see kStreamingStoreBytes).
#pragma once

// GCC 12 reports false -Wmaybe-uninitialized warnings inside its AVX-512 intrinsics when it
// inlines Eigen's vectorized exp/log. The pragma must precede the first Eigen include of the
// .cc file, so cwise_functors.h carries it too; only kernel .cc files include these headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <Eigen/Core>
#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/tensor_shape.h"
#include "tensorflux/core/threadpool.h"
#include "tensorflux/core/types.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/cwise_half_convert.h"
#include "tensorflux/kernels/shared/cwise_shape.h"

namespace tensorflux {
namespace cwise {

// ---------------------------------------------------------------- broadcasting

// BinaryBroadcast and ComputeBinaryBroadcast: kernels/shared/cwise_shape.h.

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

// Functors with `static constexpr bool kSameShape = true` (TF's *Grad ops) take inputs of equal
// shapes only: no broadcasting, no scalar operand.
template <typename F>
inline constexpr bool kSameShapeOnly = requires { requires F::kSameShape; };

// Elements converted per block on the half/bfloat16 path (stack buffers).
inline constexpr int64_t kConvertBlock = 512;

// Work below this many cost units runs on the calling thread. The functors' kCost (about ns per
// element, scalar) overstates the packet loops several times over (ReluGrad: kCost 1, about
// 0.1 ns an element measured), and a hand-off to the pool costs microseconds (more when the
// other core is busy): 128K units is about 10-25 us of real work, ThreadPool::ParallelFor's own
// threshold. (At 32768, an MLP layer's [128, 256] ReluGrad was sharded: 2 us of work.)
inline constexpr int64_t kMinParallelCost = 131072;

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

// ---------------------------------------------------------------- streaming stores

// Flat outputs at least this large are written with non-temporal (streaming) stores when no
// input buffer was forwarded: they do not fit in the caches anyway, and streaming skips the
// read-for-ownership of each output line (a third less memory traffic for a unary op, a quarter
// for a binary one). Smaller outputs stay cached for their consumers.
inline constexpr int64_t kStreamingStoreBytes = int64_t{32} << 20;
// Bytes computed into an L1-resident block before being streamed out.
inline constexpr int64_t kStreamBlockBytes = 8192;

// Copies n bytes to dst, with 32-byte streaming stores where dst is aligned.
inline void StreamCopy(void* dst, const void* src, size_t n) {
#if defined(__AVX__)
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  const size_t head = std::min(n, (32 - (reinterpret_cast<uintptr_t>(d) & 31)) & 31);
  std::memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  for (; n >= 32; n -= 32, d += 32, s += 32) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
  }
  std::memcpy(d, s, n);
#else
  std::memcpy(dst, src, n);
#endif
}

// z[begin, end) computed block by block by compute(offset, block, m) into a stack block, then
// streamed to z; ends with a store fence so the pool's hand-off publishes the data.
template <typename Out, typename Compute>
void StreamedRange(Out* z, int64_t begin, int64_t end, Compute&& compute) {
  constexpr int64_t kBlock = kStreamBlockBytes / static_cast<int64_t>(sizeof(Out));
  alignas(64) Out block[kBlock];
  for (int64_t off = begin; off < end; off += kBlock) {
    const int64_t m = std::min(kBlock, end - off);
    compute(off, block, m);
    StreamCopy(z + off, block, static_cast<size_t>(m) * sizeof(Out));
  }
#if defined(__AVX__)
  _mm_sfence();
#endif
}

// Whether a flat output of `total` elements written to `out` should be streamed (see above).
template <typename Out>
bool UseStreamingStores(int64_t total, const void* out, const void* in0, const void* in1) {
  if constexpr (!std::is_trivially_copyable_v<Out>) {
    return false;
  } else {
    return total * static_cast<int64_t>(sizeof(Out)) >= kStreamingStoreBytes && out != in0 &&
           out != in1;
  }
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
void BinaryRun(const F& f, const T* x, bool x_scalar, const T* y, bool y_scalar, Out* z,
               int64_t n) {
  using C = typename ComputeTypeOf<F, T>::type;
  if constexpr (kIsScalarOnly<T>) {
    for (int64_t i = 0; i < n; ++i) z[i] = f.Scalar(x[x_scalar ? 0 : i], y[y_scalar ? 0 : i]);
  } else if constexpr (!kIsHalfLike<T>) {
    // T and C have the same representation (C may be T's unsigned twin).
    using OC = std::conditional_t<std::is_same_v<Out, T>, C, Out>;
    const C* xc = reinterpret_cast<const C*>(x);
    const C* yc = reinterpret_cast<const C*>(y);
    ArrMap<OC> zm(reinterpret_cast<OC*>(z), n);
    if constexpr (kSameShapeOnly<F>) {  // never broadcast: one instantiation only
      zm = f.Eval(ConstArrMap<C>(xc, n), ConstArrMap<C>(yc, n));
    } else if (x_scalar) {
      zm = f.Eval(Arr<C>::Constant(n, *xc), ConstArrMap<C>(yc, n));
    } else if (y_scalar) {
      zm = f.Eval(ConstArrMap<C>(xc, n), Arr<C>::Constant(n, *yc));
    } else {
      zm = f.Eval(ConstArrMap<C>(xc, n), ConstArrMap<C>(yc, n));
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
      if constexpr (kSameShapeOnly<F>) {
        zm = f.Eval(ConstArrMap<float>(xb, m), ConstArrMap<float>(yb, m));
      } else if (x_scalar) {
        zm = f.Eval(Arr<float>::Constant(m, xs), ConstArrMap<float>(yb, m));
      } else if (y_scalar) {
        zm = f.Eval(ConstArrMap<float>(xb, m), Arr<float>::Constant(m, ys));
      } else {
        zm = f.Eval(ConstArrMap<float>(xb, m), ConstArrMap<float>(yb, m));
      }
      StoreBlock(zb, z + off, m);
    }
  }
}

// y[0, n) = f(x[0, n)).
template <typename F, typename T, typename Out>
void UnaryRun(const F& f, const T* x, Out* y, int64_t n) {
  using C = typename ComputeTypeOf<F, T>::type;
  if constexpr (kIsScalarOnly<T>) {
    for (int64_t i = 0; i < n; ++i) y[i] = f.Scalar(x[i]);
  } else if constexpr (!kIsHalfLike<T>) {
    using OC = std::conditional_t<std::is_same_v<Out, T>, C, Out>;
    ArrMap<OC>(reinterpret_cast<OC*>(y), n) =
        f.Eval(ConstArrMap<C>(reinterpret_cast<const C*>(x), n));
  } else {
    using OC = std::conditional_t<std::is_same_v<Out, T>, float, Out>;
    float xb[kConvertBlock];
    OC yb[kConvertBlock];
    for (int64_t off = 0; off < n; off += kConvertBlock) {
      const int64_t m = std::min(kConvertBlock, n - off);
      ToFloat(x + off, xb, m);
      ArrMap<OC>(yb, m) = f.Eval(ConstArrMap<float>(xb, m));
      StoreBlock(yb, y + off, m);
    }
  }
}

// ---------------------------------------------------------------- kernels

// Optional functor hooks the kernels call when present (see cwise_functors.h):
//   Status Init(OpKernelConstruction*)   reads attrs (LeakyRelu's alpha); kernels hold one
//                                         functor instance and call Eval/Scalar on it
//   CheckRhs<T>(span) / CheckInput<T>(span)
//                                         validate the second (binary) / only (unary) input
//   static constexpr bool kSameShape      inputs must have equal shapes, no broadcasting
//                                         (TF's *Grad ops)
//   std::optional<bool> IncompatibleResult() const
//                                         the scalar result for shapes that do not broadcast
//                                         instead of an error (Equal/NotEqual with
//                                         incompatible_shape_error=false)
template <typename T>
Status CheckInputTypes(const OpKernel& k, OpKernelContext* ctx) {
  return CheckInputDtypes(k, ctx, DataTypeToEnum<T>::value);
}

template <typename F>
void InitFunctor(OpKernelConstruction* c, F* f) {
  if constexpr (requires { f->Init(c); }) c->SetStatus(f->Init(c));
}

template <typename F, typename T>
class BinaryOp : public OpKernel {
 public:
  using Out = typename OutputTypeOf<F, T>::type;

  explicit BinaryOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
    InitFunctor(c, &f_);
  }

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckInputTypes<T>(*this, ctx));
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    // Flat cases (same shape, or a rank-0 operand) skip the broadcast machinery: they are the
    // common ones, and the executor's per-node overhead budget is a fraction of a microsecond.
    const bool same = x.shape() == y.shape();
    if constexpr (kSameShapeOnly<F>) {
      OP_REQUIRES_OK(ctx, CheckSameShape(*this, x.shape(), 1, y.shape()));
    }
    const bool x_scalar = !same && x.dims() == 0;
    const bool y_scalar = !same && !x_scalar && y.dims() == 0;
    const bool flat = same || x_scalar || y_scalar;
    BinaryBroadcast bc;
    if (!flat) {
      Status s = ComputeBinaryBroadcast(x.shape(), y.shape(), &bc);
      if constexpr (requires { f_.IncompatibleResult(); }) {
        if (!s.ok() && f_.IncompatibleResult().has_value()) {
          Tensor* z = nullptr;
          OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &z));
          z->data<Out>()[0] = *f_.IncompatibleResult();
          return;
        }
      }
      OP_REQUIRES_OK(ctx, s);
    }
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
    const F& f = f_;
    if (flat) {
      auto run = [&](int64_t off, Out* dst, int64_t m) {
        BinaryRun<F, T, Out>(f, xp + (x_scalar ? 0 : off), x_scalar, yp + (y_scalar ? 0 : off),
                             y_scalar, dst, m);
      };
      const bool stream = UseStreamingStores<Out>(total, zp, xp, yp);
      ParallelShards(ctx, total, F::kCost, [&](int64_t begin, int64_t end) {
        if (stream) {
          StreamedRange(zp, begin, end, run);
        } else {
          run(begin, zp + begin, end - begin);
        }
      });
      return;
    }
    const bool x_inner_bcast = bc.x_strides.back() == 0;
    const bool y_inner_bcast = bc.y_strides.back() == 0;
    ParallelShards(ctx, total, F::kCost, [&](int64_t begin, int64_t end) {
      ForEachInnerRun(bc, begin, end, [&](int64_t zo, int64_t xo, int64_t yo, int64_t len) {
        BinaryRun<F, T, Out>(f, xp + xo, x_inner_bcast, yp + yo, y_inner_bcast, zp + zo, len);
      });
    });
  }

 private:
  F f_;
};

template <typename F, typename T>
class UnaryOp : public OpKernel {
 public:
  using Out = typename OutputTypeOf<F, T>::type;

  explicit UnaryOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
    InitFunctor(c, &f_);
  }

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckInputTypes<T>(*this, ctx));
    const Tensor& x = ctx->input(0);
    const TensorShape shape = x.shape();
    if constexpr (requires { F::template CheckInput<T>(std::declval<absl::Span<const T>>()); }) {
      OP_REQUIRES_OK(ctx, F::template CheckInput<T>(x.flat<T>()));
    }
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
    const F& f = f_;
    auto run = [&](int64_t off, Out* dst, int64_t m) {
      UnaryRun<F, T, Out>(f, xp + off, dst, m);
    };
    const bool stream = UseStreamingStores<Out>(total, yp, xp, xp);
    ParallelShards(ctx, total, F::kCost, [&](int64_t begin, int64_t end) {
      if (stream) {
        StreamedRange(yp, begin, end, run);
      } else {
        run(begin, yp + begin, end - begin);
      }
    });
  }

 private:
  F f_;
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

// For ops whose OpDef fixes the element type (LogicalAnd, LogicalNot: bool, no "T" attr).
template <template <typename, typename> class Kernel, typename F, typename T>
void RegisterCwiseFixedType(const char* op) {
  KernelRegistry::Global()->Register(
      KernelDefBuilder(op).Device(DEVICE_CPU),
      [](OpKernelConstruction* c) -> OpKernel* { return new Kernel<F, T>(c); });
}

}  // namespace cwise
}  // namespace tensorflux
