// Helpers shared by the array ops' shape functions and CPU kernels (array_layout_ops.cc,
// array_index_ops.cc, kernels/cpu/*): reading small int32/int64 tensors (axes, shapes, begin/size
// vectors) and normalizing a possibly negative axis. Errors are INVALID_ARGUMENT naming `what`.
#pragma once

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/types.h"

namespace tensorflux {
namespace array_util {

// The values of an int32 or int64 tensor of any rank, as int64, in row-major order.
inline Status IntValues(const Tensor& t, std::string_view what, std::vector<int64_t>* out) {
  out->clear();
  if (t.dtype() == DT_INT32) {
    for (int32_t v : t.flat<int32_t>()) out->push_back(v);
  } else if (t.dtype() == DT_INT64) {
    for (int64_t v : t.flat<int64_t>()) out->push_back(v);
  } else {
    return errors::InvalidArgument(what, " must be int32 or int64, got ", DataTypeString(t.dtype()));
  }
  return OkStatus();
}

// The values of a tensor of any integer dtype (int8..int64, uint8..uint32), as int64.
inline Status IntegerValues(const Tensor& t, std::string_view what, std::vector<int64_t>* out) {
  if (!DataTypeIsInteger(t.dtype()) || t.dtype() == DT_UINT64) {
    return errors::InvalidArgument(what, " must have an integer type, got ",
                                   DataTypeString(t.dtype()));
  }
  out->resize(static_cast<size_t>(t.NumElements()));
  return VisitPodType(t.dtype(), what, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      const T* p = t.data<T>();
      for (size_t i = 0; i < out->size(); ++i) (*out)[i] = static_cast<int64_t>(p[i]);
    }
    return OkStatus();
  });
}

// "[1,2]": the multi-index of flat element `flat` of `shape` (row-major).
inline std::string MultiIndexString(absl::Span<const int64_t> shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] > 0) {
      idx[d] = flat % shape[d];
      flat /= shape[d];
    }
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) absl::StrAppend(&s, d ? "," : "", idx[d]);
  return s + "]";
}

// A 0-D or 1-D int32/int64 tensor as int64 values.
inline Status IntVector(const Tensor& t, std::string_view what, std::vector<int64_t>* out) {
  if (t.dims() > 1) {
    return errors::InvalidArgument(what, " must be a vector, got shape ", t.shape().DebugString());
  }
  return IntValues(t, what, out);
}

// A scalar (or one-element) int32/int64 tensor as int64.
inline Status IntScalar(const Tensor& t, std::string_view what, int64_t* out) {
  if (t.NumElements() != 1 || t.dims() > 1) {
    return errors::InvalidArgument(what, " must be a scalar, got shape ", t.shape().DebugString());
  }
  std::vector<int64_t> v;
  TX_RETURN_IF_ERROR(IntValues(t, what, &v));
  *out = v[0];
  return OkStatus();
}

// Maps axis in [-rank, rank) to [0, rank); INVALID_ARGUMENT "<what> = 3 is not in [-2, 2)"
// otherwise.
inline Status NormalizeAxis(int64_t axis, int64_t rank, std::string_view what, int64_t* out) {
  if (axis < -rank || axis >= rank) {
    return errors::InvalidArgument(what, " = ", axis, " is not in [", -rank, ", ", rank, ")");
  }
  *out = axis < 0 ? axis + rank : axis;
  return OkStatus();
}

// Writes int64 values into an int32 or int64 tensor (allocated by the caller with values.size()
// elements); INVALID_ARGUMENT when a value does not fit int32.
inline Status SetIntValues(const std::vector<int64_t>& values, std::string_view what, Tensor* t) {
  if (t->dtype() == DT_INT64) {
    std::copy(values.begin(), values.end(), t->data<int64_t>());
    return OkStatus();
  }
  int32_t* p = t->data<int32_t>();
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] > INT32_MAX || values[i] < INT32_MIN) {
      return errors::InvalidArgument(what, ": value ", values[i], " does not fit in int32");
    }
    p[i] = static_cast<int32_t>(values[i]);
  }
  return OkStatus();
}

// The number of elements of Range(start, limit, delta) (TF's rules: delta != 0; start <= limit
// when delta > 0, start >= limit when delta < 0; size = ceil(|limit - start| / |delta|)). T is
// an integer type or double (half/bfloat16/float are passed as double).
template <typename T>
Status RangeSize(T start, T limit, T delta, int64_t* size) {
  using P = std::conditional_t<std::is_integral_v<T>, int64_t, double>;  // printable
  if (delta == T(0)) return errors::InvalidArgument("Requires delta != 0: ", P(delta));
  if (delta > T(0) && start > limit) {
    return errors::InvalidArgument("Requires start <= limit when delta > 0: ", P(start), "/",
                                   P(limit));
  }
  if (delta < T(0) && start < limit) {
    return errors::InvalidArgument("Requires start >= limit when delta < 0: ", P(start), "/",
                                   P(limit));
  }
  if constexpr (std::is_integral_v<T>) {
    // |limit - start| and |delta| fit in 65 bits; __int128 holds them exactly.
    const __int128 span = delta > T(0) ? static_cast<__int128>(limit) - start
                                       : static_cast<__int128>(start) - limit;
    const __int128 step = delta > T(0) ? static_cast<__int128>(delta) : -static_cast<__int128>(delta);
    const __int128 n = (span + step - 1) / step;
    if (n > INT64_MAX) return errors::InvalidArgument("Range would have more than 2^63-1 elements");
    *size = static_cast<int64_t>(n);
  } else {
    const double n = std::ceil(std::abs((static_cast<double>(limit) - start) / delta));
    if (!(n <= 9.2e18)) {  // also catches NaN and infinities
      return errors::InvalidArgument("Requires ((limit - start) / delta) <= 2^63 - 1, got ", n);
    }
    *size = static_cast<int64_t>(n);
  }
  return OkStatus();
}

}  // namespace array_util
}  // namespace tensorflux
