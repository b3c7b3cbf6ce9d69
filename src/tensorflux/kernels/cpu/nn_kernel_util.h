// Small helpers shared by the CPU kernels of the NN family (bias_add_op.cc, softmax_op.cc,
// xent_ops.cc, l2loss_op.cc). Internal to kernels/cpu.
#pragma once

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/types.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/shared/nn_shape.h"

namespace tensorflux::nn_kernels {

// NodeLabel, KernelError, ReadDataFormat and the shape checks: kernels/shared/nn_shape.h.

// Arithmetic type: float for half and bfloat16, else the type itself.
template <typename T>
using AccT = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <typename T>
inline AccT<T> ToAcc(T v) {
  return static_cast<AccT<T>>(v);
}
template <typename T>
inline T FromAcc(AccT<T> v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(v);
  } else {
    return v;
  }
}

// One row of n > 0 logits (element j at x[j * stride]) for a numerically stable softmax: m = max(x) and
// s = sum(exp(x - m)) (s >= 1 when m is finite), in the arithmetic type. Then
// softmax(x)_j = exp(x_j - m) / s and log_softmax(x)_j = x_j - m - log(s).
template <typename T>
struct SoftmaxRow {
  AccT<T> max;
  AccT<T> sum;
  AccT<T> log_sum;  // log(sum)
};
// exps, when given (n elements), receives exp(x[j] - max) for callers that need it again.
template <typename T>
SoftmaxRow<T> SoftmaxRowStats(const T* x, int64_t n, int64_t stride = 1,
                              AccT<T>* exps = nullptr) {
  using A = AccT<T>;
  A m = ToAcc(x[0]);
  for (int64_t j = 1; j < n; ++j) m = std::max(m, ToAcc(x[j * stride]));
  A s = 0;
  for (int64_t j = 0; j < n; ++j) {
    const A e = std::exp(ToAcc(x[j * stride]) - m);
    if (exps != nullptr) exps[j] = e;
    s += e;
  }
  return {m, s, std::log(s)};
}

// Calls fn(TypeTag<T>{}) for half, bfloat16, float and double; INVALID_ARGUMENT otherwise.
template <typename Fn>
Status VisitFloatType(const OpKernel& k, DataType dt, Fn&& fn) {
  switch (BaseType(dt)) {
    case DT_FLOAT: return fn(TypeTag<float>{});
    case DT_DOUBLE: return fn(TypeTag<double>{});
    case DT_HALF: return fn(TypeTag<Half>{});
    case DT_BFLOAT16: return fn(TypeTag<BFloat16>{});
    default:
      return KernelError(k, "dtype ", DataTypeString(dt), " is not supported");
  }
}

}  // namespace tensorflux::nn_kernels
