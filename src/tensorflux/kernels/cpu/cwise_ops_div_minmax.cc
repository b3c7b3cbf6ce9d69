// CPU kernels: RealDiv, Maximum, Minimum. One line per (op, dtypes).

#include "tensorflux/kernels/cpu/cwise_functors.h"
#include "tensorflux/kernels/cpu/cwise_ops_common.h"

namespace tensorflux {
namespace cwise {
namespace {

[[maybe_unused]] const bool kRegistered = [] {
  RegisterBinary<functor::RealDiv>("RealDiv", FloatTypes{}, IntTypes{});
  RegisterBinary<functor::Maximum>("Maximum", FloatTypes{}, IntTypes{});
  RegisterBinary<functor::Minimum>("Minimum", FloatTypes{}, IntTypes{});
  return true;
}();

}  // namespace
}  // namespace cwise
}  // namespace tensorflux
