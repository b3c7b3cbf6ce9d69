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
#pragma once

// See cwise_ops_common.h: false GCC 12 warnings in AVX-512 intrinsics inlined from Eigen.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cstdint>
#include <string>
#include <type_traits>

#include <Eigen/Core>

#include "absl/types/span.h"
#include "tensorflux/core/status.h"

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
    if constexpr (std::is_integral_v<T>) {
      for (const T& v : y) {
        if (v == T(0)) return errors::InvalidArgument("Integer division by zero");
      }
    }
    return OkStatus();
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

struct Exp {
  static constexpr int64_t kCost = 8;
  template <typename X>
  static auto Eval(const X& x) {
    return x.exp();
  }
};

struct Log {
  static constexpr int64_t kCost = 8;
  template <typename X>
  static auto Eval(const X& x) {
    return x.log();
  }
};

}  // namespace functor
}  // namespace cwise
}  // namespace tensorflux
