// CPU kernels of TF's elementwise backward ops: ReluGrad, Relu6Grad, LeakyReluGrad,
// SoftplusGrad, EluGrad, SeluGrad, TanhGrad, SigmoidGrad, RsqrtGrad, SqrtGrad, ReciprocalGrad
// (two same-shape inputs; see cwise_functors_nn.h for the input order).

#include "tensorflux/kernels/cpu/cwise_functors_nn.h"
#include "tensorflux/kernels/cpu/cwise_ops_common.h"

namespace tensorflux {
namespace cwise {
namespace {

[[maybe_unused]] const bool kRegistered = [] {
  RegisterBinary<functor::ReluGrad>("ReluGrad", FloatTypes{}, IntTypes{});
  RegisterBinary<functor::Relu6Grad>("Relu6Grad", FloatTypes{}, IntTypes{});
  RegisterBinary<functor::LeakyReluGrad>("LeakyReluGrad", FloatTypes{});
  RegisterBinary<functor::SoftplusGrad>("SoftplusGrad", FloatTypes{});
  RegisterBinary<functor::EluGrad>("EluGrad", FloatTypes{});
  RegisterBinary<functor::SeluGrad>("SeluGrad", FloatTypes{});
  RegisterBinary<functor::TanhGrad>("TanhGrad", FloatTypes{});
  RegisterBinary<functor::SigmoidGrad>("SigmoidGrad", FloatTypes{});
  RegisterBinary<functor::RsqrtGrad>("RsqrtGrad", FloatTypes{});
  RegisterBinary<functor::SqrtGrad>("SqrtGrad", FloatTypes{});
  RegisterBinary<functor::ReciprocalGrad>("ReciprocalGrad", FloatTypes{});
  return true;
}();

}  // namespace
}  // namespace cwise
}  // namespace tensorflux
