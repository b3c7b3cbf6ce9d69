// CPU kernels: Abs, Sign, Reciprocal, Rsqrt, Log1p, Tanh, Sigmoid, Erf, Cos,
// Sin. One line per
// (op, dtypes).

#include "tensorflux/kernels/cpu/cwise_functors.h"
#include "tensorflux/kernels/cpu/cwise_ops_common.h"

namespace tensorflux {
namespace cwise {
namespace {

[[maybe_unused]] const bool kRegistered = [] {
  RegisterUnary<functor::Abs>("Abs", FloatTypes{}, SignedIntTypes{});
  RegisterUnary<functor::Sign>("Sign", FloatTypes{}, SignedIntTypes{});
  RegisterUnary<functor::Reciprocal>("Reciprocal", FloatTypes{}, SignedIntTypes{});
  RegisterUnary<functor::Rsqrt>("Rsqrt", FloatTypes{});
  RegisterUnary<functor::Log1p>("Log1p", FloatTypes{});
  RegisterUnary<functor::Tanh>("Tanh", FloatTypes{});
  RegisterUnary<functor::Sigmoid>("Sigmoid", FloatTypes{});
  RegisterUnary<functor::Erf>("Erf", FloatTypes{});
  RegisterUnary<functor::Cos>("Cos", FloatTypes{});
  RegisterUnary<functor::Sin>("Sin", FloatTypes{});
  return true;
}();

}  // namespace
}  // namespace cwise
}  // namespace tensorflux
