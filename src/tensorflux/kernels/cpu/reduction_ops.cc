// CPU kernels of the reduction family: Sum, Mean, Prod, Max, Min, All, Any (one templated path
// over a Reducer) and ArgMax, ArgMin (one templated path over a comparison).
//
// Axes and grouping: kernels/shared/reduction_shape.h (shared with the GPU kernels).
// Reductions: the input's dims are grouped into runs of adjacent kept or adjacent reduced dims
// (size-1 dims dropped), so any axes set becomes an alternating list of groups. The input is
// read once in memory order; an odometer over the outer groups tracks the output offset and the
// innermost group runs as a contiguous loop (a dot-style accumulate when it is reduced, an
// elementwise accumulate into the output row when it is kept). Accumulation is in the input type
// (integers: in unsigned arithmetic, so a Sum or Prod wraps in the element type as TF's does,
// without overflow UB), except half/bfloat16 (float) and Mean of an integer type, which sums in
// int64 (signed) or uint64 (unsigned), wrapping only there, and divides that sum by the count as
// that type (truncating toward zero) before narrowing, as TF: the mean of 256 uint8 ones is 1.
// Large inputs whose leading group is kept are sharded over that group on the intra-op pool.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/core/threadpool.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/shared/reduction_shape.h"

namespace tensorflux {
namespace {

template <typename T>
struct AccOf {
  using type = T;
};
template <>
struct AccOf<Half> {
  using type = float;
};
template <>
struct AccOf<BFloat16> {
  using type = float;
};

// Unsigned type for wrapping integer arithmetic, at least as wide as unsigned int.
template <typename A>
using WrapOf = std::conditional_t<(sizeof(A) < sizeof(unsigned)), unsigned,
                                  std::make_unsigned_t<A>>;

// The accumulator type of element type T, by default (Reducer::Acc<T> may widen it).
template <typename T>
using DefaultAcc = typename AccOf<T>::type;

struct SumReducer {
  template <typename T>
  using Acc = DefaultAcc<T>;
  template <typename A>
  static A Init() { return A(0); }
  template <typename A>
  static A Op(A a, A b) {
    if constexpr (std::is_integral_v<A>) {
      return static_cast<A>(static_cast<WrapOf<A>>(a) + static_cast<WrapOf<A>>(b));
    } else {
      return a + b;
    }
  }
  template <typename A>
  static A Finalize(A a, int64_t) { return a; }
  template <typename T>
  static constexpr bool kSupports = !std::is_same_v<T, bool>;
};

// Integer means sum in a 64-bit accumulator of the input's signedness, so neither the sum nor
// the count wraps in a small type (TF's Mean does the same; int64/uint64 sums still wrap).
template <typename T>
using WideIntOf = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;

struct MeanReducer : SumReducer {
  template <typename T>
  using Acc = std::conditional_t<std::is_integral_v<T> && !std::is_same_v<T, bool>,
                                 WideIntOf<T>, DefaultAcc<T>>;
  template <typename A>
  static A Finalize(A a, int64_t count) {
    if constexpr (std::is_integral_v<A>) {
      if (count == 0) return A(0);
      if constexpr (std::is_signed_v<A>) {
        return static_cast<A>(static_cast<int64_t>(a) / count);
      } else {
        return static_cast<A>(static_cast<uint64_t>(a) / static_cast<uint64_t>(count));
      }
    } else {
      return a / static_cast<A>(count);
    }
  }
};

struct ProdReducer {
  template <typename T>
  using Acc = DefaultAcc<T>;
  template <typename A>
  static A Init() { return A(1); }
  template <typename A>
  static A Op(A a, A b) {
    if constexpr (std::is_integral_v<A>) {
      return static_cast<A>(static_cast<WrapOf<A>>(a) * static_cast<WrapOf<A>>(b));
    } else {
      return a * b;
    }
  }
  template <typename A>
  static A Finalize(A a, int64_t) { return a; }
  template <typename T>
  static constexpr bool kSupports = !std::is_same_v<T, bool>;
};

template <bool kMax>
struct ExtremeReducer {
  template <typename T>
  using Acc = DefaultAcc<T>;
  template <typename A>
  static A Init() {
    if constexpr (std::is_floating_point_v<A>) {
      return kMax ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
    } else {
      return kMax ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
    }
  }
  // NaN propagates: a NaN accumulator stays, a NaN b replaces.
  template <typename A>
  static A Op(A a, A b) {
    if constexpr (kMax) {
      return (a > b || a != a) ? a : b;
    } else {
      return (a < b || a != a) ? a : b;
    }
  }
  template <typename A>
  static A Finalize(A a, int64_t) { return a; }
  template <typename T>
  static constexpr bool kSupports = !std::is_same_v<T, bool>;
};

template <bool kAll>
struct BoolReducer {
  template <typename T>
  using Acc = DefaultAcc<T>;
  template <typename A>
  static A Init() { return kAll; }
  template <typename A>
  static A Op(A a, A b) { return kAll ? (a && b) : (a || b); }
  template <typename A>
  static A Finalize(A a, int64_t) { return a; }
  template <typename T>
  static constexpr bool kSupports = std::is_same_v<T, bool>;
};

std::string NodeLabel(OpKernelContext* ctx) {
  return absl::StrCat(ctx->op_kernel().type_string(), " node '", ctx->op_kernel().name(), "'");
}

// Accumulates indices [first, last) of group 0 into acc (output offsets are disjoint between
// disjoint ranges when group 0 is kept, so ranges can run in parallel).
template <typename Reducer, typename T, typename A>
void ReduceRange(const T* x, const std::vector<int64_t>& sizes, const std::vector<bool>& reduced,
                 const std::vector<int64_t>& ostride, int64_t first, int64_t last, A* acc) {
  const int k = static_cast<int>(sizes.size());
  if (k == 1) {
    if (reduced[0]) {
      A a = acc[0];
      for (int64_t j = first; j < last; ++j) a = Reducer::Op(a, static_cast<A>(x[j]));
      acc[0] = a;
    } else {
      for (int64_t j = first; j < last; ++j) acc[j] = Reducer::Op(acc[j], static_cast<A>(x[j]));
    }
    return;
  }
  int64_t in_stride0 = 1;
  for (int g = 1; g < k; ++g) in_stride0 *= sizes[g];
  const int64_t inner = sizes[k - 1];
  const bool inner_reduced = reduced[k - 1];
  std::vector<int64_t> idx(k, 0);
  idx[0] = first;
  int64_t o = first * ostride[0];
  const int64_t end = last * in_stride0;
  for (int64_t base = first * in_stride0; base < end; base += inner) {
    const T* row = x + base;
    if (inner_reduced) {
      A a = acc[o];
      for (int64_t j = 0; j < inner; ++j) a = Reducer::Op(a, static_cast<A>(row[j]));
      acc[o] = a;
    } else {
      A* dst = acc + o;
      for (int64_t j = 0; j < inner; ++j) dst[j] = Reducer::Op(dst[j], static_cast<A>(row[j]));
    }
    // Advance the odometer over groups k-2 .. 0.
    for (int g = k - 2; g >= 0; --g) {
      o += ostride[g];
      if (++idx[g] < sizes[g]) break;
      o -= ostride[g] * sizes[g];
      idx[g] = 0;
    }
  }
}

// Work below this many input elements runs on the calling thread.
constexpr int64_t kMinParallelElements = 32768;

template <typename Reducer, typename T>
void ReduceTyped(const T* x, const std::vector<int64_t>& sizes, const std::vector<bool>& reduced,
                 int64_t in_n, int64_t out_n, T* out, ThreadPool* pool) {
  using A = typename Reducer::template Acc<T>;
  // Not std::vector: vector<bool> has no data().
  std::unique_ptr<A[]> acc(new A[static_cast<size_t>(out_n)]);
  std::fill(acc.get(), acc.get() + out_n, Reducer::template Init<A>());
  const int k = static_cast<int>(sizes.size());
  if (in_n > 0) {
    // Output stride of each group (0 for reduced groups).
    std::vector<int64_t> ostride(k, 0);
    int64_t s = 1;
    for (int g = k - 1; g >= 0; --g) {
      if (!reduced[g]) {
        ostride[g] = s;
        s *= sizes[g];
      }
    }
    A* a = acc.get();
    if (pool != nullptr && pool->NumThreads() > 1 && k >= 2 && !reduced[0] &&
        in_n >= kMinParallelElements) {
      pool->ParallelFor(sizes[0], in_n / sizes[0], [&](int64_t b, int64_t e) {
        ReduceRange<Reducer, T, A>(x, sizes, reduced, ostride, b, e, a);
      });
    } else {
      ReduceRange<Reducer, T, A>(x, sizes, reduced, ostride, 0, k == 1 ? in_n : sizes[0], a);
    }
  }
  const int64_t count = out_n > 0 ? in_n / out_n : 0;
  for (int64_t i = 0; i < out_n; ++i) {
    out[i] = static_cast<T>(Reducer::Finalize(acc[i], count));
  }
}

template <typename Reducer>
class ReductionOp : public OpKernel {
 public:
  explicit ReductionOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("keep_dims", &keep_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    ReductionShape r;
    OP_REQUIRES_OK(ctx, ComputeReductionShape(*this, input.shape(), ctx->input(1), keep_dims_, &r));
    if (SetIdentityReduction(ctx, input, r)) return;
    const std::vector<int64_t>& sizes = r.sizes;
    const std::vector<bool>& reduced = r.reduced;
    const int64_t in_n = input.NumElements();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, r.out_shape, &out));
    const int64_t out_n = r.out_shape.num_elements();
    OP_REQUIRES_OK(ctx, VisitPodType(input.dtype(), type_string(), [&](auto tag) -> Status {
                     using T = typename decltype(tag)::type;
                     if constexpr (Reducer::template kSupports<T>) {
                       ReduceTyped<Reducer, T>(input.data<T>(), sizes, reduced, in_n, out_n,
                                               out->data<T>(), ctx->intra_op_thread_pool());
                       return OkStatus();
                     } else {
                       return errors::InvalidArgument(type_string(), " does not support dtype ",
                                                      DataTypeString(input.dtype()));
                     }
                   }));
  }

 private:
  bool keep_dims_ = false;
};

REGISTER_KERNEL_BUILDER(Name("Sum").Device(DEVICE_CPU), ReductionOp<SumReducer>);
REGISTER_KERNEL_BUILDER(Name("Mean").Device(DEVICE_CPU), ReductionOp<MeanReducer>);
REGISTER_KERNEL_BUILDER(Name("Prod").Device(DEVICE_CPU), ReductionOp<ProdReducer>);
REGISTER_KERNEL_BUILDER(Name("Max").Device(DEVICE_CPU), ReductionOp<ExtremeReducer<true>>);
REGISTER_KERNEL_BUILDER(Name("Min").Device(DEVICE_CPU), ReductionOp<ExtremeReducer<false>>);
REGISTER_KERNEL_BUILDER(Name("All").Device(DEVICE_CPU), ReductionOp<BoolReducer<true>>);
REGISTER_KERNEL_BUILDER(Name("Any").Device(DEVICE_CPU), ReductionOp<BoolReducer<false>>);

// ---------------------------------------------------------------- ArgMax / ArgMin

// The lowest (kMax) or highest finite value of T, as the accumulation type A.
template <typename T, typename A, bool kMax>
A ArgStart() {
  if constexpr (std::is_same_v<T, Half>) {
    return kMax ? A(-65504.0f) : A(65504.0f);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return kMax ? A(-3.38953139e38f) : A(3.38953139e38f);  // bfloat16 0x7f7f
  } else {
    return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
}

template <bool kMax>
class ArgOp : public OpKernel {
 public:
  explicit ArgOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& dim_t = ctx->input(1);
    OP_REQUIRES(ctx, dim_t.dims() == 0,
                errors::InvalidArgument("dimension must be a scalar, not ",
                                        dim_t.shape().DebugString(), " (", NodeLabel(ctx), ")"));
    const int rank = input.dims();
    OP_REQUIRES(ctx, rank >= 1,
                errors::InvalidArgument("Expected input of rank >= 1, got a scalar (",
                                        NodeLabel(ctx), ")"));
    const int64_t a =
        dim_t.dtype() == DT_INT32 ? int64_t{dim_t.data<int32_t>()[0]} : dim_t.data<int64_t>()[0];
    OP_REQUIRES(ctx, a >= -rank && a < rank,
                errors::InvalidArgument("Expected dimension in the range [", -rank, ", ", rank,
                                        "), but got ", a, " (", NodeLabel(ctx), ")"));
    const int axis = static_cast<int>(a < 0 ? a + rank : a);
    std::vector<int64_t> out_dims;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < rank; ++d) {
      if (d == axis) continue;
      out_dims.push_back(input.dim_size(d));
      (d < axis ? outer : inner) *= input.dim_size(d);
    }
    const int64_t n = input.dim_size(axis);
    auto out_shape = TensorShape::Make(out_dims);
    OP_REQUIRES_OK(ctx, out_shape.status());
    OP_REQUIRES(ctx, n > 0 || out_shape->num_elements() == 0,
                errors::InvalidArgument("Reduction axis ", axis, " is empty in shape ",
                                        input.shape().DebugString(), " (", NodeLabel(ctx), ")"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *out_shape, &out));
    const bool out64 = out->dtype() == DT_INT64;
    OP_REQUIRES(ctx, out64 || n <= std::numeric_limits<int32_t>::max(),
                errors::InvalidArgument("Reduced dimension of size ", n,
                                        " does not fit output_type int32 (", NodeLabel(ctx), ")"));
    OP_REQUIRES_OK(ctx, VisitPodType(input.dtype(), type_string(), [&](auto tag) -> Status {
                     using T = typename decltype(tag)::type;
                     if constexpr (std::is_same_v<T, bool>) {
                       return errors::InvalidArgument(type_string(), " does not support bool");
                     } else {
                       using A = typename AccOf<T>::type;
                       const T* x = input.data<T>();
                       const A start = ArgStart<T, A, kMax>();
                       for (int64_t o = 0; o < outer; ++o) {
                         for (int64_t i = 0; i < inner; ++i) {
                           const T* p = x + o * n * inner + i;
                           // As TF's (Eigen's ArgMax/ArgMinTupleReducer): from index 0 holding
                           // the lowest (highest) finite value, a strictly better value wins.
                           // So ties go to the first, NaN never wins (all NaN: 0), and -inf
                           // (+inf) only when nothing else is there (index 0).
                           A best = start;
                           int64_t best_j = 0;
                           for (int64_t j = 0; j < n; ++j) {
                             const A v = static_cast<A>(p[j * inner]);
                             if (kMax ? v > best : v < best) {
                               best = v;
                               best_j = j;
                             }
                           }
                           const int64_t k = o * inner + i;
                           if (out64) {
                             out->data<int64_t>()[k] = best_j;
                           } else {
                             out->data<int32_t>()[k] = static_cast<int32_t>(best_j);
                           }
                         }
                       }
                       return OkStatus();
                     }
                   }));
  }
};

REGISTER_KERNEL_BUILDER(Name("ArgMax").Device(DEVICE_CPU), ArgOp<true>);
REGISTER_KERNEL_BUILDER(Name("ArgMin").Device(DEVICE_CPU), ArgOp<false>);

}  // namespace
}  // namespace tensorflux
