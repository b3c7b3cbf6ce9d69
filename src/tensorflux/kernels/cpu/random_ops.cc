// CPU kernels of the random family: RandomUniform, RandomStandardNormal, TruncatedNormal
// (half, bfloat16, float, double), RandomUniformInt (int32, int64) and RandomShuffle (any
// fixed-size type and string).
//
// Every kernel instance owns a GuardedPhilox seeded from its (seed, seed2) attrs (core/philox.h).
// A Compute call reserves 256 counters per output element under the generator's lock (TF's
// ReserveRandomOutputs), then fills the output without the lock, in parallel by blocks of
// kBlockElements elements. Which words an element uses depends only on its index, never on
// the sharding, so every thread count gives the same bits:
//   - fixed-sample distributions (uniform, normal, uniform int) read the reserved stream in
//     order: output group g (kOutputs elements) uses words [g * kWords, (g + 1) * kWords);
//   - the truncated normal, which redraws a variable number of times, gives each group of
//     kGroup outputs its own sub-stream starting 64 * kGroup counters after the previous one
//     (256 words per output, far more than the ~2.1 words per output it needs on average).
// This follows TF's layout (FillPhiloxRandom, ReserveRandomOutputs): the same seeds give TF's
// bits (tests/conformance/cases/random_ops.py compares them with TF 2.15's).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "tensorflux/core/philox.h"
#include "tensorflux/core/types.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

using random::GuardedPhilox;
using random::Philox4x32;
using random::PhiloxWordStream;

// Elements per parallel work unit; a multiple of every distribution's group size and of 4 words,
// so each block starts on a counter boundary.
constexpr int64_t kBlockElements = 4096;

template <typename T>
inline constexpr bool kIsDouble = std::is_same_v<T, double>;

// Converts a float result to the output type (half and bfloat16 round to nearest even).
template <typename T>
inline T FromFloat(float f) {
  if constexpr (std::is_same_v<T, float>) {
    return f;
  } else {
    return T(f);
  }
}

// ---------------------------------------------------------------- distributions

// Uniform in [0, 1): one word per element (two for double).
template <typename T>
struct UniformDist {
  using Out = T;
  static constexpr bool kVariable = false;
  static constexpr int kOutputs = 1;
  static constexpr int kWords = kIsDouble<T> ? 2 : 1;
  static constexpr int64_t kCostPerElement = 3;  // ns, for sharding
  void operator()(const uint32_t* w, T* out) const {
    if constexpr (kIsDouble<T>) {
      out[0] = random::Uint64ToDouble(w[0], w[1]);
    } else if constexpr (std::is_same_v<T, float>) {
      out[0] = random::Uint32ToFloat(w[0]);
    } else if constexpr (std::is_same_v<T, Half>) {
      out[0] = random::Uint32ToHalf(w[0]);
    } else {
      out[0] = random::Uint32ToBFloat16(w[0]);
    }
  }
};

// Standard normal, Box-Muller pairs: two words per pair (four for double).
template <typename T>
struct NormalDist {
  using Out = T;
  static constexpr bool kVariable = false;
  static constexpr int kOutputs = 2;
  static constexpr int kWords = kIsDouble<T> ? 4 : 2;
  static constexpr int64_t kCostPerElement = 20;
  void operator()(const uint32_t* w, T* out) const {
    if constexpr (kIsDouble<T>) {
      random::BoxMullerDouble(w[0], w[1], w[2], w[3], &out[0], &out[1]);
    } else {
      float f0, f1;
      random::BoxMullerFloat(w[0], w[1], &f0, &f1);
      out[0] = FromFloat<T>(f0);
      out[1] = FromFloat<T>(f1);
    }
  }
};

// Standard normal restricted to (-2, 2): Box-Muller pairs, keeping the values inside, in order,
// until a group of kGroup outputs is full.
template <typename T>
struct TruncatedNormalDist {
  using Out = T;
  static constexpr bool kVariable = true;
  static constexpr int kGroup = kIsDouble<T> ? 2 : 4;
  static constexpr uint64_t kCountersPerGroup = 64 * kGroup;
  static constexpr int64_t kCostPerElement = 25;
  void operator()(PhiloxWordStream& s, T* out) const {
    int n = 0;
    for (;;) {
      double v[2];
      if constexpr (kIsDouble<T>) {
        uint32_t x[4];
        for (uint32_t& w : x) w = s.Next32();
        random::BoxMullerDouble(x[0], x[1], x[2], x[3], &v[0], &v[1]);
      } else {
        const uint32_t x0 = s.Next32();
        const uint32_t x1 = s.Next32();
        float f0, f1;
        random::BoxMullerFloat(x0, x1, &f0, &f1);
        v[0] = f0;
        v[1] = f1;
      }
      for (double x : v) {
        if (std::abs(x) < random::kTruncateValue) {
          if constexpr (kIsDouble<T>) {
            out[n++] = x;
          } else {
            out[n++] = FromFloat<T>(static_cast<float>(x));
          }
          if (n == kGroup) return;
        }
      }
    }
  }
};

// Uniform integer in [lo, lo + range): one word (int32) or two (int64, first word low).
template <typename I>
struct UniformIntDist {
  using Out = I;
  using U = std::make_unsigned_t<I>;
  static constexpr bool kVariable = false;
  static constexpr int kOutputs = 1;
  static constexpr int kWords = sizeof(I) / 4;
  static constexpr int64_t kCostPerElement = 3;
  I lo;
  U range;
  void operator()(const uint32_t* w, I* out) const {
    if constexpr (sizeof(I) == 8) {
      out[0] = random::UniformInt64(uint64_t{w[0]} | (uint64_t{w[1]} << 32), lo, range);
    } else {
      out[0] = random::UniformInt32(w[0], lo, range);
    }
  }
};

// Fills out[begin, end) of a call whose reserved stream starts at `base`. `begin` is a multiple
// of kBlockElements.
template <class Dist>
void FillRange(const Dist& dist, Philox4x32 base, typename Dist::Out* out, int64_t begin,
               int64_t end) {
  using T = typename Dist::Out;
  if constexpr (Dist::kVariable) {
    constexpr int kGroup = Dist::kGroup;
    T tmp[kGroup];
    for (int64_t i = begin; i < end; i += kGroup) {
      Philox4x32 gen = base;
      gen.Skip(static_cast<uint64_t>(i / kGroup) * Dist::kCountersPerGroup);
      PhiloxWordStream s(gen);
      if (end - i >= kGroup) {
        dist(s, out + i);
      } else {
        dist(s, tmp);
        std::copy(tmp, tmp + (end - i), out + i);
      }
    }
  } else {
    // Each counter's 4 words make kGroups groups of kOut outputs. Words before this range:
    // (begin / kOut) * kWords, a multiple of 4 for block starts.
    constexpr int kOut = Dist::kOutputs;
    constexpr int kGroups = 4 / Dist::kWords;
    constexpr int kPerCounter = kGroups * kOut;
    base.Skip(static_cast<uint64_t>(begin / kOut) * Dist::kWords / 4);
    int64_t i = begin;
    for (; end - i >= kPerCounter; i += kPerCounter) {
      const Philox4x32::Result w = base();
      for (int g = 0; g < kGroups; ++g) dist(w.data() + g * Dist::kWords, out + i + g * kOut);
    }
    if (i < end) {
      const Philox4x32::Result w = base();
      T tmp[kPerCounter];
      for (int g = 0; g < kGroups; ++g) dist(w.data() + g * Dist::kWords, tmp + g * kOut);
      std::copy(tmp, tmp + (end - i), out + i);
    }
  }
}

template <class Dist>
void FillRandom(OpKernelContext* ctx, const Dist& dist, const Philox4x32& base,
                typename Dist::Out* out, int64_t n) {
  const int64_t blocks = (n + kBlockElements - 1) / kBlockElements;
  auto fill = [&](int64_t b0, int64_t b1) {
    FillRange(dist, base, out, b0 * kBlockElements, std::min(n, b1 * kBlockElements));
  };
  ThreadPool* pool = ctx->intra_op_thread_pool();
  if (pool == nullptr || blocks <= 1) {
    fill(0, blocks);
  } else {
    pool->ParallelFor(blocks, kBlockElements * Dist::kCostPerElement, fill);
  }
}

// ---------------------------------------------------------------- kernels

Status NodeError(const OpKernel& k, const std::string& message) {
  return errors::InvalidArgument(k.type_string(), " node '", k.name(), "': ", message);
}

// The output shape from the 1-D int32/int64 `shape` input: INVALID_ARGUMENT for another rank,
// a negative dim, more than 8 dims, or an element count that overflows int64.
StatusOr<TensorShape> ShapeFromInput(const OpKernel& k, const Tensor& t) {
  if (t.dims() != 1) {
    return NodeError(k, "shape must be a vector of {int32,int64}, got shape " +
                            t.shape().DebugString());
  }
  std::vector<int64_t> dims(static_cast<size_t>(t.NumElements()));
  for (size_t i = 0; i < dims.size(); ++i) {
    dims[i] = t.dtype() == DT_INT32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
  }
  StatusOr<TensorShape> shape = TensorShape::Make(dims);
  if (!shape.ok()) return NodeError(k, std::string(shape.status().message()));
  return shape;
}

// Seeds a kernel's generator from its seed/seed2 attrs.
void InitGenerator(OpKernelConstruction* ctx, GuardedPhilox* gen) {
  int64_t seed = 0, seed2 = 0;
  Status s = ctx->GetAttr("seed", &seed);
  if (s.ok()) s = ctx->GetAttr("seed2", &seed2);
  if (!s.ok()) {
    ctx->SetStatus(s);
    return;
  }
  gen->Init(seed, seed2);
}

// RandomUniform, RandomStandardNormal, TruncatedNormal.
template <class Dist>
class PhiloxRandomOp : public OpKernel {
 public:
  explicit PhiloxRandomOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    InitGenerator(ctx, &generator_);
  }

  void Compute(OpKernelContext* ctx) override {
    StatusOr<TensorShape> shape = ShapeFromInput(*this, ctx->input(0));
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    const int64_t n = out->NumElements();
    if (n == 0) return;
    const Philox4x32 base = generator_.ReserveForOutputs(static_cast<uint64_t>(n));
    FillRandom(ctx, Dist(), base, out->data<typename Dist::Out>(), n);
  }

 private:
  GuardedPhilox generator_;
};

template <typename I>
class RandomUniformIntOp : public OpKernel {
 public:
  explicit RandomUniformIntOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    InitGenerator(ctx, &generator_);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& minval = ctx->input(1);
    const Tensor& maxval = ctx->input(2);
    OP_REQUIRES(ctx, minval.dims() == 0,
                NodeError(*this, "minval must be 0-D, got shape " + minval.shape().DebugString()));
    OP_REQUIRES(ctx, maxval.dims() == 0,
                NodeError(*this, "maxval must be 0-D, got shape " + maxval.shape().DebugString()));
    StatusOr<TensorShape> shape = ShapeFromInput(*this, ctx->input(0));
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    const int64_t n = out->NumElements();
    // As TF: an empty output needs no valid range.
    if (n == 0) return;
    const I lo = minval.scalar<I>();
    const I hi = maxval.scalar<I>();
    OP_REQUIRES(ctx, lo < hi,
                NodeError(*this, "Need minval < maxval: " + std::to_string(lo) +
                                     " >= " + std::to_string(hi)));
    using U = std::make_unsigned_t<I>;
    const UniformIntDist<I> dist{lo, static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo))};
    const Philox4x32 base = generator_.ReserveForOutputs(static_cast<uint64_t>(n));
    FillRandom(ctx, dist, base, out->data<I>(), n);
  }

 private:
  GuardedPhilox generator_;
};

// RandomShuffle: TF's forward Fisher-Yates permutation of dim 0 (for i = 0 to n-2, swap i with
// j = i + word mod (n - i), one 32-bit word per step), then a copy of the rows in that order, so
// the same seeds give TF's permutation. From 2^31 - 1 rows on, each step takes a 64-bit word
// (TF keeps 32-bit words there and truncates n - i to 32 bits). Scalars and tensors with at most
// one row or element pass through.
class RandomShuffleOp : public OpKernel {
 public:
  explicit RandomShuffleOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    InitGenerator(ctx, &generator_);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const DataType dt = in.dtype();
    OP_REQUIRES(ctx, DataTypeSize(dt) > 0 || dt == DT_STRING,
                NodeError(*this, "dtype " + DataTypeString(dt) + " is not supported"));
    if (in.dims() == 0 || in.NumElements() <= 1 || in.dim_size(0) <= 1) {
      ctx->set_output(0, in);
      return;
    }
    const int64_t n = in.dim_size(0);
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), int64_t{0});
    const uint64_t samples = static_cast<uint64_t>(n - 1);
    if (n < std::numeric_limits<int32_t>::max()) {
      PhiloxWordStream s(generator_.Reserve((samples + 3) / 4));
      for (int64_t i = 0; i < n - 1; ++i) {
        const int64_t j = i + s.Next32() % static_cast<uint32_t>(n - i);
        std::swap(perm[i], perm[j]);
      }
    } else {
      PhiloxWordStream s(generator_.Reserve((2 * samples + 3) / 4));
      for (int64_t i = 0; i < n - 1; ++i) {
        const int64_t j = i + static_cast<int64_t>(s.Next64() % static_cast<uint64_t>(n - i));
        std::swap(perm[i], perm[j]);
      }
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    const int64_t row = in.NumElements() / n;
    auto copy_rows = [&](int64_t r0, int64_t r1) {
      if (dt == DT_STRING) {
        const std::string* src = in.data<std::string>();
        std::string* dst = out->data<std::string>();
        for (int64_t r = r0; r < r1; ++r) {
          std::copy(src + perm[r] * row, src + (perm[r] + 1) * row, dst + r * row);
        }
      } else {
        const size_t row_bytes = static_cast<size_t>(row) * DataTypeSize(dt);
        const char* src = static_cast<const char*>(in.raw_data());
        char* dst = static_cast<char*>(out->raw_data());
        for (int64_t r = r0; r < r1; ++r) {
          std::memcpy(dst + r * row_bytes, src + perm[r] * row_bytes, row_bytes);
        }
      }
    };
    ThreadPool* pool = ctx->intra_op_thread_pool();
    if (pool == nullptr) {
      copy_rows(0, n);
    } else {
      pool->ParallelFor(n, std::max<int64_t>(1, row / 8), copy_rows);
    }
  }

 private:
  GuardedPhilox generator_;
};

#define TX_REGISTER_FLOAT_RANDOM(T)                                                       \
  REGISTER_KERNEL_BUILDER(Name("RandomUniform").Device(DEVICE_CPU).TypeConstraint<T>("dtype"), \
                          PhiloxRandomOp<UniformDist<T>>);                                \
  REGISTER_KERNEL_BUILDER(                                                                \
      Name("RandomStandardNormal").Device(DEVICE_CPU).TypeConstraint<T>("dtype"),         \
      PhiloxRandomOp<NormalDist<T>>);                                                     \
  REGISTER_KERNEL_BUILDER(Name("TruncatedNormal").Device(DEVICE_CPU).TypeConstraint<T>("dtype"), \
                          PhiloxRandomOp<TruncatedNormalDist<T>>)

TX_REGISTER_FLOAT_RANDOM(Half);
TX_REGISTER_FLOAT_RANDOM(BFloat16);
TX_REGISTER_FLOAT_RANDOM(float);
TX_REGISTER_FLOAT_RANDOM(double);
#undef TX_REGISTER_FLOAT_RANDOM

REGISTER_KERNEL_BUILDER(Name("RandomUniformInt").Device(DEVICE_CPU).TypeConstraint<int32_t>("Tout"),
                        RandomUniformIntOp<int32_t>);
REGISTER_KERNEL_BUILDER(Name("RandomUniformInt").Device(DEVICE_CPU).TypeConstraint<int64_t>("Tout"),
                        RandomUniformIntOp<int64_t>);
REGISTER_KERNEL_BUILDER(Name("RandomShuffle").Device(DEVICE_CPU), RandomShuffleOp);

}  // namespace
}  // namespace tensorflux
