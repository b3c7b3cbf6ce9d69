// CPU kernels: Less, LessEqual, Greater, GreaterEqual, Equal, NotEqual (bool output),
// LogicalAnd, LogicalOr, LogicalNot. One line per (op, dtypes).

#include "tensorflux/kernels/cpu/cwise_functors.h"
#include "tensorflux/kernels/cpu/cwise_ops_common.h"

namespace tensorflux {
namespace cwise {
namespace {

[[maybe_unused]] const bool kRegistered = [] {
  RegisterBinary<functor::Less>("Less", FloatTypes{}, IntTypes{});
  RegisterBinary<functor::LessEqual>("LessEqual", FloatTypes{}, IntTypes{});
  RegisterBinary<functor::Greater>("Greater", FloatTypes{}, IntTypes{});
  RegisterBinary<functor::GreaterEqual>("GreaterEqual", FloatTypes{}, IntTypes{});
  RegisterBinary<functor::Equal>("Equal", FloatTypes{}, IntTypes{},
                                 TypeList<bool, std::string>{});
  RegisterBinary<functor::NotEqual>("NotEqual", FloatTypes{}, IntTypes{},
                                    TypeList<bool, std::string>{});
  RegisterCwiseFixedType<BinaryOp, functor::LogicalAnd, bool>("LogicalAnd");
  RegisterCwiseFixedType<BinaryOp, functor::LogicalOr, bool>("LogicalOr");
  RegisterCwiseFixedType<UnaryOp, functor::LogicalNot, bool>("LogicalNot");
  return true;
}();

}  // namespace
}  // namespace cwise
}  // namespace tensorflux
