// NaN/Inf detection shared by the CheckNumerics kernel and the executor's check_numerics
// session option (ConfigProto.check_numerics, a TensorFlux extension).
#pragma once

#include <string_view>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux {

struct NonFinite {
  bool nan = false;
  bool inf = false;
  bool any() const { return nan || inf; }
};

// What non-finite values a half, bfloat16, float or double tensor holds; nothing for other
// dtypes.
NonFinite FindNonFinite(const Tensor& t);

// "NaN", "Inf" or "NaN and Inf" (TF's CheckNumerics wording).
const char* NonFiniteName(const NonFinite& f);

// OK, or INVALID_ARGUMENT "<message> : Tensor had NaN values" (TF's CheckNumerics text).
Status CheckNumerics(const Tensor& t, std::string_view message);

}  // namespace tensorflux
