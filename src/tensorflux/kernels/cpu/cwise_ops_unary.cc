// CPU kernels: Neg, Square, Sqrt, Exp, Log. One line per (op, dtypes).

#include "tensorflux/kernels/cpu/cwise_functors.h"
#include "tensorflux/kernels/cpu/cwise_ops_common.h"

namespace tensorflux {
namespace cwise {
namespace {

[[maybe_unused]] const bool kRegistered = [] {
  RegisterUnary<functor::Neg>("Neg", FloatTypes{}, SignedIntTypes{});
  RegisterUnary<functor::Square>("Square", FloatTypes{}, IntTypes{});
  RegisterUnary<functor::Sqrt>("Sqrt", FloatTypes{});
  RegisterUnary<functor::Exp>("Exp", FloatTypes{});
  RegisterUnary<functor::Log>("Log", FloatTypes{});
  return true;
}();

}  // namespace
}  // namespace cwise
}  // namespace tensorflux
