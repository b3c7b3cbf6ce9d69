// Kernel-private: what each elementwise op computes, for the templated kernels in
// cwise_ops_common.h. A functor has
//
//   static constexpr int64_t kCost;        rough cost per element in ns (parallel sharding)
//   static auto Eval(const X& x[, const Y& y]);
//                                           an Eigen array expression of the compute type
//                                           (float for half/bfloat16); X, Y are Eigen arrays,
//                                           maps or constants of one scalar type
// and optionally
//   static constexpr bool kWrapsLikeUnsigned = true;
//                                           signed integers compute in the unsigned type of the
//                                           same width (two's-complement wraparound, as TF gives,
//                                           without signed-overflow UB); only for ops whose bits
//                                           agree for signed and unsigned (+, -, *, negation)
//   static T Scalar(const T& a[, const T& b]);
//                                           element by element, for types Eigen cannot hold
//                                           (DT_STRING)
//   template <class T> static Status CheckRhs(absl::Span<const T> y);
//                                           validates the second input before computing
//   template <class T> using Output = ...;  output element type when it is not T (bool for
//                                           comparisons)
// and the hooks documented in cwise_ops_common.h (Init, CheckInput, kSameShape,
// IncompatibleResult). Activation functors and TF's *Grad ops: cwise_functors_nn.h.
#pragma once

// See cwise_ops_common.h: false GCC 12 warnings in AVX-512 intrinsics inlined from Eigen.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>

#include <Eigen/Core>

#include "absl/types/span.h"
#include "tensorflux/core/status.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace cwise {
namespace functor {

// ---------------------------------------------------------------- binary

struct Add {
  static constexpr int64_t kCost = 1;
  static constexpr bool kWrapsLikeUnsigned = true;
  template <typename X, typename Y>
  static auto Eval(const X& x, const Y& y) {
    return x + y;
  }
  static std::string Scalar(const std::string& a, const std::string& b) { return a + b; }
};

struct Sub {
  static constexpr int64_t kCost = 1;
  static constexpr bool kWrapsLikeUnsigned = true;
  template <typename X, typename Y>
  static auto Eval(const X& x, const Y& y) {
    return x - y;
  }
};

// Unsigned types narrower than int promote to (signed) int in C++, so 65535 * 65535 would
// overflow int: multiply those in unsigned int and keep the low bits.
template <typename C>
inline constexpr bool kPromotesToInt = std::is_unsigned_v<C> && sizeof(C) < sizeof(unsigned);

template <typename C>
struct WrappingMul {
  C operator()(const C& a, const C& b) const {
    return static_cast<C>(static_cast<unsigned>(a) * static_cast<unsigned>(b));
  }
};

struct Mul {
  static constexpr int64_t kCost = 1;
  static constexpr bool kWrapsLikeUnsigned = true;
  template <typename X, typename Y>
  static auto Eval(const X& x, const Y& y) {
    using C = typename X::Scalar;
    if constexpr (kPromotesToInt<C>) {
      return x.binaryExpr(y, WrappingMul<C>());
    } else {
      return x * y;
    }
  }
};

// Integer quotient truncated toward zero. A zero divisor is rejected by CheckRhs before any
// element is computed; MIN / -1 wraps to MIN instead of trapping.
template <typename C>
struct SafeIntDiv {
  C operator()(const C& a, const C& b) const {
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return static_cast<C>(0 - static_cast<std::make_unsigned_t<C>>(a));
    }
    return b == 0 ? C(0) : static_cast<C>(a / b);
  }
};

// INVALID_ARGUMENT "Integer division by zero" when an integer divisor holds a 0 (TF's message);
// floating divisors are not checked (IEEE gives inf / NaN).
template <typename T>
Status CheckIntegerDivisor(absl::Span<const T> y) {
  if constexpr (std::is_integral_v<T>) {
    for (const T& v : y) {
      if (v == T(0)) return errors::InvalidArgument("Integer division by zero");
    }
  }
  return OkStatus();
}

// TF's RealDiv: IEEE division for floating types; for integers (which TF's OpDef allows),
// truncating division and INVALID_ARGUMENT "Integer division by zero" as TF's Div gives.
struct RealDiv {
  static constexpr int64_t kCost = 4;
  template <typename X, typename Y>
  static auto Eval(const X& x, const Y& y) {
    using C = typename X::Scalar;
    if constexpr (std::is_integral_v<C>) {
      return x.binaryExpr(y, SafeIntDiv<C>());
    } else {
      return x / y;
    }
  }
  template <typename T>
  static Status CheckRhs(absl::Span<const T> y) {
    return CheckIntegerDivisor(y);
  }
};

// max/min with NaN propagating (a NaN in either input gives NaN), as TF's Maximum/Minimum.
struct Maximum {
  static constexpr int64_t kCost = 1;
  template <typename X, typename Y>
  static auto Eval(const X& x, const Y& y) {
    using C = typename X::Scalar;
    return x.binaryExpr(y, Eigen::internal::scalar_max_op<C, C, Eigen::PropagateNaN>());
  }
};

struct Minimum {
  static constexpr int64_t kCost = 1;
  template <typename X, typename Y>
  static auto Eval(const X& x, const Y& y) {
    using C = typename X::Scalar;
    return x.binaryExpr(y, Eigen::internal::scalar_min_op<C, C, Eigen::PropagateNaN>());
  }
};


// Floor division (toward -inf), as TF's FloorDiv. Integers: a zero divisor is rejected by
// CheckRhs; MIN / -1 wraps to MIN. Floating: floor(x / y).
template <typename C>
struct IntFloorDiv {
  C operator()(const C& a, const C& b) const {
    if (b == 0) return C(0);
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return static_cast<C>(0 - static_cast<std::make_unsigned_t<C>>(a));
      const C q = static_cast<C>(a / b);
      const C r = static_cast<C>(a % b);
      return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<C>(q - 1) : q;
    } else {
      return static_cast<C>(a / b);
    }
  }
};

struct FloorDiv {
  static constexpr int64_t kCost = 4;
  template <typename X, typename Y>
  static auto Eval(const X& x, const Y& y) {
    using C = typename X::Scalar;
    if constexpr (std::is_integral_v<C>) {
      return x.binaryExpr(y, IntFloorDiv<C>());
    } else {
      return (x / y).floor();
    }
  }
  template <typename T>
  static Status CheckRhs(absl::Span<const T> y) {
    return CheckIntegerDivisor(y);
  }
};

// FloorDiv of half and bfloat16 (registered for those types; computed in float): the quotient
// is rounded to the storage type S before flooring, as TF's half arithmetic does (a quotient of
// 2.9995 is 3 in half, so it floors to 3, not 2).
template <typename S>
struct FloorDivRounded {
  static constexpr int64_t kCost = 4;
  template <typename X, typename Y>
  static auto Eval(const X& x, const Y& y) {
    return (x / y).unaryExpr([](float q) { return static_cast<float>(S(q)); }).floor();
  }
};

// Remainder of floor division: the result has the divisor's sign (or is 0), as TF's FloorMod
// and Python's %. x - floor(x / y) * y without the rounding of the product: fmod, then shifted
// by y when the signs differ. Integers: zero divisor rejected; MIN % -1 is 0.
template <typename C>
struct FloorModOp {
  C operator()(const C& a, const C& b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return C(0);
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return C(0);
        const C r = static_cast<C>(a % b);
        return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<C>(r + b) : r;
      } else {
        return static_cast<C>(a % b);
      }
    } else {
      const C r = std::fmod(a, b);
      return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
    }
  }
};

struct FloorMod {
  static constexpr int64_t kCost = 8;
  template <typename X, typename Y>
  static auto Eval(const X& x, const Y& y) {
    return x.binaryExpr(y, FloorModOp<typename X::Scalar>());
  }
  template <typename T>
  static Status CheckRhs(absl::Span<const T> y) {
    return CheckIntegerDivisor(y);
  }
};

// x^y. Floating: std::pow (IEEE special cases: pow(x, 0) = 1, negative x to a non-integer power
// is NaN). Integers: exact by repeated squaring, wrapping like Mul; a negative exponent is
// INVALID_ARGUMENT "Integers to negative integer powers are not allowed", as TF.
template <typename C>
struct PowOp {
  C operator()(const C& a, const C& b) const {
    if constexpr (std::is_integral_v<C>) {  // C is unsigned here (kWrapsLikeUnsigned)
      using W = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, C>;
      W r = 1, base = a;
      C e = b;
      while (e != 0) {
        if (e & 1) r = static_cast<C>(r * base);
        e = static_cast<C>(e >> 1);
        if (e != 0) base = static_cast<C>(base * base);
      }
      return static_cast<C>(r);
    } else {
      return std::pow(a, b);
    }
  }
};

struct Pow {
  static constexpr int64_t kCost = 16;
  static constexpr bool kWrapsLikeUnsigned = true;  // integers only; exponents checked >= 0
  template <typename X, typename Y>
  static auto Eval(const X& x, const Y& y) {
    return x.binaryExpr(y, PowOp<typename X::Scalar>());
  }
  template <typename T>
  static Status CheckRhs(absl::Span<const T> y) {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      for (const T& v : y) {
        if (v < 0)
          return errors::InvalidArgument("Integers to negative integer powers are not allowed");
      }
    }
    return OkStatus();
  }
};

// (x - y)^2; integers wrap.
struct SquaredDifference {
  static constexpr int64_t kCost = 2;
  static constexpr bool kWrapsLikeUnsigned = true;
  template <typename X, typename Y>
  static auto Eval(const X& x, const Y& y) {
    return (x - y).square();
  }
};

// ---------------------------------------------------------------- comparisons (bool output)

#define TX_CWISE_COMPARISON(Name, expr)                                   \
  struct Name {                                                           \
    static constexpr int64_t kCost = 1;                                   \
    template <typename T>                                                 \
    using Output = bool;                                                  \
    template <typename X, typename Y>                                     \
    static auto Eval(const X& x, const Y& y) {                            \
      return expr;                                                        \
    }                                                                     \
  };
TX_CWISE_COMPARISON(Less, x < y)
TX_CWISE_COMPARISON(LessEqual, x <= y)
TX_CWISE_COMPARISON(Greater, x > y)
TX_CWISE_COMPARISON(GreaterEqual, x >= y)
#undef TX_CWISE_COMPARISON

// Equal / NotEqual: every type incl. bool and string; with incompatible_shape_error=false, shapes
// that do not broadcast give a scalar false (Equal) / true (NotEqual) instead of an error.
template <bool kNot>
struct EqualityBase {
  static constexpr int64_t kCost = 1;
  template <typename T>
  using Output = bool;
  template <typename X, typename Y>
  static auto Eval(const X& x, const Y& y) {
    if constexpr (kNot) {
      return x != y;
    } else {
      return x == y;
    }
  }
  static bool Scalar(const std::string& a, const std::string& b) { return (a == b) != kNot; }
  Status Init(OpKernelConstruction* c) {
    return c->GetAttr("incompatible_shape_error", &incompatible_shape_error);
  }
  std::optional<bool> IncompatibleResult() const {
    if (incompatible_shape_error) return std::nullopt;
    return kNot;
  }
  bool incompatible_shape_error = true;
};
using Equal = EqualityBase<false>;
using NotEqual = EqualityBase<true>;

struct LogicalAnd {
  static constexpr int64_t kCost = 1;
  template <typename X, typename Y>
  static auto Eval(const X& x, const Y& y) {
    return x && y;
  }
};

struct LogicalOr {
  static constexpr int64_t kCost = 1;
  template <typename X, typename Y>
  static auto Eval(const X& x, const Y& y) {
    return x || y;
  }
};

// ---------------------------------------------------------------- unary

struct Neg {
  static constexpr int64_t kCost = 1;
  static constexpr bool kWrapsLikeUnsigned = true;
  template <typename X>
  static auto Eval(const X& x) {
    return -x;
  }
};

struct Square {
  static constexpr int64_t kCost = 1;
  static constexpr bool kWrapsLikeUnsigned = true;
  template <typename X>
  static auto Eval(const X& x) {
    using C = typename X::Scalar;
    if constexpr (kPromotesToInt<C>) {
      return x.binaryExpr(x, WrappingMul<C>());
    } else {
      return x.square();
    }
  }
};

struct Sqrt {
  static constexpr int64_t kCost = 4;
  template <typename X>
  static auto Eval(const X& x) {
    return x.sqrt();
  }
};

// exp with correct underflow. Eigen 3.4's vectorized exp (pexp_float / pexp_double) clamps its
// argument below at -88.723f / -709.784, so every packet lane under that returns exp(clamp)
// (about 3e-39f, or 5.6e-309) instead of the subnormal or zero that std::exp (and numpy, and TF
// with a newer Eigen) gives; the scalar tail of an array is exact, so the result depended on an
// element's position and on the packet width (AVX2's 4 doubles vs AVX-512's 8). Packets with a
// lane under the clamp recompute those lanes with std::exp (rare: only deep underflow).
template <typename T>
struct ExpUnderflowOp {
  static constexpr T kLo = std::is_same_v<T, float> ? T(-88.723f) : T(-709.784);
  EIGEN_STRONG_INLINE T operator()(const T& x) const { return std::exp(x); }
  template <typename Packet>
  EIGEN_STRONG_INLINE Packet packetOp(const Packet& x) const {
    namespace ei = Eigen::internal;
    const Packet r = ei::pexp(x);
    if (!ei::predux_any(ei::pcmp_lt(x, ei::pset1<Packet>(kLo)))) return r;
    constexpr int kN = ei::unpacket_traits<Packet>::size;
    T xs[kN], rs[kN];
    ei::pstoreu(xs, x);
    ei::pstoreu(rs, r);
    for (int i = 0; i < kN; ++i) {
      if (xs[i] < kLo) rs[i] = std::exp(xs[i]);
    }
    return ei::ploadu<Packet>(rs);
  }
};

struct Exp {
  static constexpr int64_t kCost = 8;
  template <typename X>
  static auto Eval(const X& x) {
    using T = typename X::Scalar;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      return x.unaryExpr(ExpUnderflowOp<T>());
    } else {
      return x.exp();
    }
  }
};

struct Log {
  static constexpr int64_t kCost = 8;
  template <typename X>
  static auto Eval(const X& x) {
    return x.log();
  }
};


// |x|; integers: |MIN| wraps to MIN (computed in unsigned, no UB).
template <typename C>
struct IntAbs {
  C operator()(const C& a) const {
    if constexpr (std::is_signed_v<C>) {
      return a < 0 ? static_cast<C>(0 - static_cast<std::make_unsigned_t<C>>(a)) : a;
    } else {
      return a;
    }
  }
};

struct Abs {
  static constexpr int64_t kCost = 1;
  template <typename X>
  static auto Eval(const X& x) {
    using C = typename X::Scalar;
    if constexpr (std::is_integral_v<C>) {
      return x.unaryExpr(IntAbs<C>());
    } else {
      return x.abs();
    }
  }
};

// -1, 0 or 1; NaN stays NaN (as TF's kernel, Eigen's sign).
template <typename C>
struct SignOp {
  C operator()(const C& a) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (a != a) return a;
    }
    return static_cast<C>((C(0) < a) - (a < C(0)));
  }
};

struct Sign {
  static constexpr int64_t kCost = 1;
  template <typename X>
  static auto Eval(const X& x) {
    return x.unaryExpr(SignOp<typename X::Scalar>());
  }
};

// 1 / x. Integers: truncated (so 0 unless |x| = 1); a zero is INVALID_ARGUMENT
// "Integer division by zero".
template <typename C>
struct IntReciprocal {
  C operator()(const C& a) const { return a == 0 ? C(0) : static_cast<C>(C(1) / a); }
};

struct Reciprocal {
  static constexpr int64_t kCost = 4;
  template <typename X>
  static auto Eval(const X& x) {
    using C = typename X::Scalar;
    if constexpr (std::is_integral_v<C>) {
      return x.unaryExpr(IntReciprocal<C>());
    } else {
      return x.inverse();
    }
  }
  template <typename T>
  static Status CheckInput(absl::Span<const T> x) {
    return CheckIntegerDivisor(x);
  }
};

// 1 / sqrt(x), correctly rounded sqrt then division (not the approximate rsqrt instruction).
// rsqrt(+-0) = +-inf, as TF's (Eigen's float sqrt maps -0 to +0, so zeros take 1 / x).
struct Rsqrt {
  static constexpr int64_t kCost = 8;
  template <typename X>
  static auto Eval(const X& x) {
    using C = typename X::Scalar;
    return (x == C(0)).select(x.inverse(), x.sqrt().inverse());
  }
};

struct Log1p {
  static constexpr int64_t kCost = 8;
  template <typename X>
  static auto Eval(const X& x) {
    return x.log1p();
  }
};

struct Tanh {
  static constexpr int64_t kCost = 8;
  template <typename X>
  static auto Eval(const X& x) {
    return x.tanh();
  }
};

// 1 / (1 + e^-x); saturates to 0 and 1 without NaN for large |x|.
struct Sigmoid {
  static constexpr int64_t kCost = 8;
  template <typename X>
  static auto Eval(const X& x) {
    return x.logistic();
  }
};

template <typename C>
struct ErfOp {
  C operator()(const C& a) const { return std::erf(a); }
};

struct Erf {
  static constexpr int64_t kCost = 16;
  template <typename X>
  static auto Eval(const X& x) {
    return x.unaryExpr(ErfOp<typename X::Scalar>());
  }
};

struct Cos {
  static constexpr int64_t kCost = 16;
  template <typename X>
  static auto Eval(const X& x) {
    return x.cos();
  }
};

struct Sin {
  static constexpr int64_t kCost = 16;
  template <typename X>
  static auto Eval(const X& x) {
    return x.sin();
  }
};

struct LogicalNot {
  static constexpr int64_t kCost = 1;
  template <typename X>
  static auto Eval(const X& x) {
    return x.unaryExpr(std::logical_not<bool>());
  }
};

}  // namespace functor
}  // namespace cwise
}  // namespace tensorflux

namespace Eigen {
namespace internal {
template <typename T>
struct functor_traits<tensorflux::cwise::functor::ExpUnderflowOp<T>> {
  enum {
    Cost = functor_traits<scalar_exp_op<T>>::Cost,
    PacketAccess = packet_traits<T>::HasExp,
  };
};
}  // namespace internal
}  // namespace Eigen
