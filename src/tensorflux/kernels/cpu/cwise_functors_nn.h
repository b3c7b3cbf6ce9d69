// Kernel-private: activation functors (Relu family, Elu, Selu, Softplus) and the functors of
// TensorFlow's elementwise backward ops (*Grad), for the templated kernels in
// cwise_ops_common.h. Same contract as cwise_functors.h.
//
// Backward ops take two same-shape inputs (kSameShape) in TF's order:
//   ReluGrad, Relu6Grad, LeakyReluGrad, SoftplusGrad (gradients, features)
//   EluGrad, SeluGrad                                 (gradients, outputs)
//   TanhGrad, SigmoidGrad, RsqrtGrad, SqrtGrad, ReciprocalGrad
//                                                     (y, dy), y = the forward output
#pragma once

// See cwise_ops_common.h: false GCC 12 warnings in AVX-512 intrinsics inlined from Eigen.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cstdint>
#include <type_traits>

#include <Eigen/Core>

#include "tensorflux/core/status.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace cwise {
namespace functor {

// SELU's constants (Klambauer et al. 2017), as TF uses them.
inline constexpr double kSeluScale = 1.0507009873554804934193349852946;
inline constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

// ---------------------------------------------------------------- activations (unary)

// max(x, v) / min(x, v) with NaN in x propagating (Eigen 3.4's scalar max/min do not take the
// NaN policy).
template <typename X>
auto MaxNaN(const X& x, typename X::Scalar v) {
  using C = typename X::Scalar;
  return x.binaryExpr(Eigen::Array<C, Eigen::Dynamic, 1>::Constant(x.size(), v),
                      Eigen::internal::scalar_max_op<C, C, Eigen::PropagateNaN>());
}
template <typename X>
auto MinNaN(const X& x, typename X::Scalar v) {
  using C = typename X::Scalar;
  return x.binaryExpr(Eigen::Array<C, Eigen::Dynamic, 1>::Constant(x.size(), v),
                      Eigen::internal::scalar_min_op<C, C, Eigen::PropagateNaN>());
}

// max(x, 0); NaN stays NaN.
struct Relu {
  static constexpr int64_t kCost = 1;
  template <typename X>
  static auto Eval(const X& x) {
    using C = typename X::Scalar;
    return MaxNaN(x, C(0));
  }
};

// min(max(x, 0), 6); NaN stays NaN.
struct Relu6 {
  static constexpr int64_t kCost = 1;
  template <typename X>
  static auto Eval(const X& x) {
    using C = typename X::Scalar;
    return MinNaN(MaxNaN(x, C(0)), C(6));
  }
};

// x > 0 ? x : alpha * x, alpha from the node's attr (default 0.2).
struct LeakyRelu {
  static constexpr int64_t kCost = 1;
  Status Init(OpKernelConstruction* c) { return c->GetAttr("alpha", &alpha); }
  template <typename X>
  auto Eval(const X& x) const {
    using C = typename X::Scalar;
    return (x > C(0)).select(x, x * C(alpha));
  }
  float alpha = 0.2f;
};

// x < 0 ? e^x - 1 : x.
struct Elu {
  static constexpr int64_t kCost = 8;
  template <typename X>
  static auto Eval(const X& x) {
    using C = typename X::Scalar;
    return (x < C(0)).select(x.expm1(), x);
  }
};

// scale * (x < 0 ? alpha * (e^x - 1) : x).
struct Selu {
  static constexpr int64_t kCost = 8;
  template <typename X>
  static auto Eval(const X& x) {
    using C = typename X::Scalar;
    return (x < C(0)).select(x.expm1() * C(kSeluScale * kSeluAlpha), x * C(kSeluScale));
  }
};

// log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x, no underflow to 0 before
// e^x does for very negative x.
struct Softplus {
  static constexpr int64_t kCost = 16;
  template <typename X>
  static auto Eval(const X& x) {
    using C = typename X::Scalar;
    return x.max(C(0)) + (-x.abs()).exp().log1p();
  }
};

// ---------------------------------------------------------------- backward ops (binary)

// Eigen binary functor (g, f) -> 0 < f && f < hi ? g : 0 (hi = +inf unless given). Eigen 3.4's
// comparisons have no packet path (functor_traits<scalar_cmp_op>::PacketAccess is false), so
// `(f > 0).select(g, 0)` ran one element at a time with a data-dependent branch, mispredicted on
// about half of a ReLU mask: ReluGrad was 17% of the CPU time of a CNN training step. This one
// compares packets and ands the mask into g (floating-point types; others stay scalar).
template <typename C>
struct GradWhereInside {
  GradWhereInside() = default;
  explicit GradWhereInside(C upper) : hi(upper), has_hi(true) {}
  C operator()(const C& g, const C& f) const {
    return (f > C(0) && (!has_hi || f < hi)) ? g : C(0);
  }
  template <typename P>
  P packetOp(const P& g, const P& f) const {
    namespace ei = Eigen::internal;
    P mask = ei::pcmp_lt(ei::pzero(f), f);
    if (has_hi) mask = ei::pand(mask, ei::pcmp_lt(f, ei::pset1<P>(hi)));
    return ei::pand(mask, g);
  }
  C hi = C(0);
  bool has_hi = false;
};

#define TX_CWISE_GRAD(Name, cost, expr)        \
  struct Name {                                \
    static constexpr int64_t kCost = cost;     \
    static constexpr bool kSameShape = true;   \
    template <typename X, typename Y>          \
    static auto Eval(const X& x, const Y& y) { \
      using C = typename X::Scalar;            \
      return expr;                             \
    }                                          \
  };

// (gradients, features): g where 0 < f (< 6 for Relu6Grad), else 0; NaN features give 0.
TX_CWISE_GRAD(ReluGrad, 1, x.binaryExpr(y, GradWhereInside<C>()))
TX_CWISE_GRAD(Relu6Grad, 1, x.binaryExpr(y, GradWhereInside<C>(C(6))))
TX_CWISE_GRAD(SoftplusGrad, 8, x / ((-y).exp() + C(1)))
// (gradients, outputs)
TX_CWISE_GRAD(EluGrad, 2, (y < C(0)).select(x * (y + C(1)), x))
TX_CWISE_GRAD(SeluGrad, 2,
              (y < C(0)).select(x * (y + C(kSeluScale * kSeluAlpha)), x * C(kSeluScale)))
// (y, dy)
TX_CWISE_GRAD(TanhGrad, 2, y * (C(1) - x.square()))
TX_CWISE_GRAD(SigmoidGrad, 2, y * x * (C(1) - x))
TX_CWISE_GRAD(RsqrtGrad, 2, y * x.cube() * C(-0.5))
TX_CWISE_GRAD(SqrtGrad, 4, y * C(0.5) / x)
TX_CWISE_GRAD(ReciprocalGrad, 2, y * x.square() * C(-1))
#undef TX_CWISE_GRAD

// (gradients, features), alpha attr: features > 0 ? gradients : alpha * gradients.
struct LeakyReluGrad {
  static constexpr int64_t kCost = 1;
  static constexpr bool kSameShape = true;
  Status Init(OpKernelConstruction* c) { return c->GetAttr("alpha", &alpha); }
  template <typename X, typename Y>
  auto Eval(const X& x, const Y& y) const {
    using C = typename X::Scalar;
    return (y > C(0)).select(x, x * C(alpha));
  }
  float alpha = 0.2f;
};

}  // namespace functor
}  // namespace cwise
}  // namespace tensorflux

template <typename C>
struct Eigen::internal::functor_traits<tensorflux::cwise::functor::GradWhereInside<C>> {
  enum {
    Cost = 2 * NumTraits<C>::AddCost,
    PacketAccess = std::is_floating_point_v<C> && packet_traits<C>::HasCmp
  };
};
