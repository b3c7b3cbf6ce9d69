// CPU kernels: FloorDiv, FloorMod, Pow, SquaredDifference. One line per (op, dtypes).

#include "tensorflux/kernels/cpu/cwise_functors.h"
#include "tensorflux/kernels/cpu/cwise_ops_common.h"

namespace tensorflux {
namespace cwise {
namespace {

[[maybe_unused]] const bool kRegistered = [] {
  RegisterBinary<functor::FloorDiv>("FloorDiv", TypeList<float, double>{}, IntTypes{});
  RegisterBinary<functor::FloorDivRounded<Half>>("FloorDiv", TypeList<Half>{});
  RegisterBinary<functor::FloorDivRounded<BFloat16>>("FloorDiv", TypeList<BFloat16>{});
  RegisterBinary<functor::FloorMod>("FloorMod", FloatTypes{}, IntTypes{});
  RegisterBinary<functor::Pow>("Pow", FloatTypes{}, SignedIntTypes{});
  RegisterBinary<functor::SquaredDifference>("SquaredDifference", FloatTypes{},
                                             TypeList<int32_t, int64_t>{});
  return true;
}();

}  // namespace
}  // namespace cwise
}  // namespace tensorflux
