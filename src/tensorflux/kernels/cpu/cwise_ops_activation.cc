// CPU kernels: Relu, Relu6, LeakyRelu, Elu, Selu, Softplus. One line per (op, dtypes).
// Their backward ops: cwise_ops_activation_grad.cc.

#include "tensorflux/kernels/cpu/cwise_functors_nn.h"
#include "tensorflux/kernels/cpu/cwise_ops_common.h"

namespace tensorflux {
namespace cwise {
namespace {

[[maybe_unused]] const bool kRegistered = [] {
  RegisterUnary<functor::Relu>("Relu", FloatTypes{}, IntTypes{});
  RegisterUnary<functor::Relu6>("Relu6", FloatTypes{}, IntTypes{});
  RegisterUnary<functor::LeakyRelu>("LeakyRelu", FloatTypes{});
  RegisterUnary<functor::Elu>("Elu", FloatTypes{});
  RegisterUnary<functor::Selu>("Selu", FloatTypes{});
  RegisterUnary<functor::Softplus>("Softplus", FloatTypes{});
  return true;
}();

}  // namespace
}  // namespace cwise
}  // namespace tensorflux
