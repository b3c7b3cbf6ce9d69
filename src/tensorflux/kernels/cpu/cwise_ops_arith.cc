// CPU kernels: Add (numeric and string), AddV2, Sub, Mul. One line per (op, dtypes).

#include "tensorflux/kernels/cpu/cwise_functors.h"
#include "tensorflux/kernels/cpu/cwise_ops_common.h"

namespace tensorflux {
namespace cwise {
namespace {

[[maybe_unused]] const bool kRegistered = [] {
  RegisterBinary<functor::Add>("Add", FloatTypes{}, SignedIntTypes{}, TypeList<uint8_t>{},
                               TypeList<std::string>{});
  RegisterBinary<functor::Add>("AddV2", FloatTypes{}, IntTypes{});
  RegisterBinary<functor::Sub>("Sub", FloatTypes{}, IntTypes{});
  RegisterBinary<functor::Mul>("Mul", FloatTypes{}, IntTypes{});
  return true;
}();

}  // namespace
}  // namespace cwise
}  // namespace tensorflux
