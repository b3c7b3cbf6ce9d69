// Helpers shared by the elementwise kernel tests (cwise_*_test.cc): dtypes an op allows,
// deterministic values, dtype tolerances, and a naive NumPy-broadcasting reference.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace tensorflux {
namespace test {
namespace cwise {

// The dtypes an op's attr allows (as registered), without string.
inline std::vector<DataType> AllowedTypes(const std::string& op, const std::string& attr = "T") {
  std::vector<DataType> out;
  auto def = OpRegistry::Global()->LookUpOpDef(op);
  EXPECT_TRUE(def.ok()) << def.status();
  if (!def.ok()) return out;
  for (const auto& a : (*def)->attr()) {
    if (a.name() != attr) continue;
    for (int t : a.allowed_values().list().type()) {
      if (t != DT_STRING) out.push_back(static_cast<DataType>(t));
    }
  }
  return out;
}

inline bool IsUnsigned(DataType dt) {
  return dt == DT_UINT8 || dt == DT_UINT16 || dt == DT_UINT32 || dt == DT_UINT64;
}

// Deterministic values in [lo, hi]; integers for integer dtypes. For divisors (nonzero), the
// sign alternates for signed types and values stay away from 0.
inline std::vector<double> Values(DataType dt, int64_t n, double lo, double hi, int seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double frac = std::fmod((i + 1) * 0.6180339887 + seed * 0.1234567, 1.0);
    double x = lo + (hi - lo) * frac;
    if (DataTypeIsInteger(dt)) x = std::round(x);
    v[static_cast<size_t>(i)] = x;
  }
  return v;
}

// Tolerance relative to the magnitude, by dtype (the kernel rounds once to the dtype; the
// reference is rounded to the dtype too, so this only absorbs 1-2 ulp differences).
inline double RelTol(DataType dt) {
  switch (dt) {
    case DT_DOUBLE:
      return 1e-12;
    case DT_FLOAT:
      return 1e-6;
    case DT_HALF:
      return 2e-3;
    case DT_BFLOAT16:
      return 1.6e-2;
    default:
      return 0;
  }
}

inline void ExpectNear(DataType dt, const std::vector<double>& got, const std::vector<double>& want,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const double w = RoundTo(dt, want[i]);
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
      continue;
    }
    if (std::isinf(w)) {
      EXPECT_EQ(got[i], w) << what << " at " << i;
      continue;
    }
    EXPECT_NEAR(got[i], w, RelTol(dt) * std::max(1.0, std::fabs(w))) << what << " at " << i;
  }
}

// Naive NumPy broadcasting: out[i] = fn(x[map_x(i)], y[map_y(i)]).
inline std::vector<double> BroadcastRef(const TensorShape& xs, const std::vector<double>& xv,
                                 const TensorShape& ys, const std::vector<double>& yv,
                                 const std::function<double(double, double)>& fn,
                                 TensorShape* out_shape) {
  const int rank = std::max(xs.dims(), ys.dims());
  std::vector<int64_t> od(rank), xd(rank, 1), yd(rank, 1);
  for (int i = 0; i < xs.dims(); ++i) xd[rank - xs.dims() + i] = xs.dim_size(i);
  for (int i = 0; i < ys.dims(); ++i) yd[rank - ys.dims() + i] = ys.dim_size(i);
  for (int i = 0; i < rank; ++i) od[i] = xd[i] == 1 ? yd[i] : xd[i];
  *out_shape = TensorShape(absl::Span<const int64_t>(od));
  std::vector<double> out(static_cast<size_t>(out_shape->num_elements()));
  std::vector<int64_t> idx(rank);
  for (int64_t lin = 0; lin < out_shape->num_elements(); ++lin) {
    int64_t rem = lin;
    for (int d = rank - 1; d >= 0; --d) {
      idx[d] = rem % od[d];
      rem /= od[d];
    }
    int64_t xi = 0, yi = 0;
    for (int d = 0; d < rank; ++d) {
      xi = xi * xd[d] + (xd[d] == 1 ? 0 : idx[d]);
      yi = yi * yd[d] + (yd[d] == 1 ? 0 : idx[d]);
    }
    out[static_cast<size_t>(lin)] = fn(xv[static_cast<size_t>(xi)], yv[static_cast<size_t>(yi)]);
  }
  return out;
}

// A bool tensor (AsTensor cannot take std::vector<bool>, which has no data()).
inline Tensor BoolTensor(const std::vector<bool>& v, const TensorShape& shape) {
  Tensor t(DT_BOOL, shape);
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i];
  return t;
}

}  // namespace cwise
}  // namespace test
}  // namespace tensorflux
