// Internal to kernels/cpu: the bias addition of BiasAdd (bias_add_op.cc) shared with the fused
// kernels' epilogue (fused_epilogue.cc), so both compute bit-identical values.
//
// A BiasAdd operand is viewed as [outer, C, inner] (nn_kernels::BiasLayout, validated by
// kernels/shared/nn_shape.h). Integers add in wrapping unsigned arithmetic (no signed-overflow
// UB); half and bfloat16 add in float and round once.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/kernels/shared/nn_shape.h"

namespace tensorflux::nn_kernels {

template <typename T>
T AddValues(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else if constexpr (std::is_floating_point_v<T>) {
    return a + b;
  } else {
    return T(static_cast<float>(a) + static_cast<float>(b));
  }
}

// y[o, c, i] = x[o, c, i] + bias[c] for the outer rows [o0, o1); x may be y.
template <typename T>
void AddBiasRows(const T* x, const T* bias, T* y, const BiasLayout& l, int64_t o0, int64_t o1) {
  const int64_t row = l.channels * l.inner;
  for (int64_t o = o0; o < o1; ++o) {
    const T* xr = x + o * row;
    T* yr = y + o * row;
    if (l.inner == 1) {
      for (int64_t c = 0; c < l.channels; ++c) yr[c] = AddValues(xr[c], bias[c]);
    } else {
      for (int64_t c = 0; c < l.channels; ++c) {
        const T b = bias[c];
        const T* xi = xr + c * l.inner;
        T* yi = yr + c * l.inner;
        for (int64_t i = 0; i < l.inner; ++i) yi[i] = AddValues(xi[i], b);
      }
    }
  }
}

}  // namespace tensorflux::nn_kernels
