#include "tensorflux/framework/numerics.h"

#include <cmath>

namespace tensorflux {
namespace {

template <typename T>
NonFinite Scan(const Tensor& t) {
  NonFinite f;
  const T* p = t.data<T>();
  const int64_t n = t.NumElements();
  for (int64_t i = 0; i < n; ++i) {
    const auto x = static_cast<std::conditional_t<sizeof(T) == 8, double, float>>(p[i]);
    if (std::isfinite(x)) continue;
    if (std::isnan(x)) {
      f.nan = true;
    } else {
      f.inf = true;
    }
    if (f.nan && f.inf) break;
  }
  return f;
}

}  // namespace

NonFinite FindNonFinite(const Tensor& t) {
  switch (t.dtype()) {
    case DT_FLOAT: return Scan<float>(t);
    case DT_DOUBLE: return Scan<double>(t);
    case DT_HALF: return Scan<Half>(t);
    case DT_BFLOAT16: return Scan<BFloat16>(t);
    default: return NonFinite{};
  }
}

const char* NonFiniteName(const NonFinite& f) {
  return f.nan && f.inf ? "NaN and Inf" : f.nan ? "NaN" : "Inf";
}

Status CheckNumerics(const Tensor& t, std::string_view message) {
  const NonFinite f = FindNonFinite(t);
  if (!f.any()) return OkStatus();
  return errors::InvalidArgument(message, " : Tensor had ", NonFiniteName(f), " values");
}

}  // namespace tensorflux
