// CPU kernels: FloorDiv, FloorMod, Pow, SquaredDifference. One line per (op, dtypes).

#include "tensorflux/kernels/cpu/cwise_functors.h"
#include "tensorflux/kernels/cpu/cwise_ops_common.h"

namespace tensorflux {
namespace cwise {
namespace {

[[maybe_unused]] const bool kRegistered = [] {
  RegisterBinary<functor::FloorDiv>("FloorDiv", FloatTypes{}, IntTypes{});
  RegisterBinary<functor::FloorMod>("FloorMod", FloatTypes{}, IntTypes{});
  RegisterBinary<functor::Pow>("Pow", FloatTypes{}, SignedIntTypes{});
  RegisterBinary<functor::SquaredDifference>("SquaredDifference", FloatTypes{},
                                             TypeList<int32_t, int64_t>{});
  return true;
}();

}  // namespace
}  // namespace cwise
}  // namespace tensorflux
