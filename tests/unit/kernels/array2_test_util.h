// Helpers for the array kernel tests (array2_*_test.cc): tensors of consecutive values, string
// tensors, multi-index arithmetic for float64 reference loops, and int vectors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux {
namespace test {

// A tensor whose element i is start + i (converted to `dtype`).
inline Tensor Iota(DataType dtype, const TensorShape& shape, double start = 0) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<double>(i);
  return FromDoubles(dtype, shape, v);
}

inline Tensor I32(const std::vector<int32_t>& v) {
  return AsTensor<int32_t>(v, TensorShape({int64_t(v.size())}));
}
inline Tensor I64(const std::vector<int64_t>& v) {
  return AsTensor<int64_t>(v, TensorShape({int64_t(v.size())}));
}
inline Tensor S32(int32_t v) { return Tensor::Scalar<int32_t>(v); }

// A string tensor whose element i is "s<i>".
inline Tensor Strings(const TensorShape& shape) {
  Tensor t(DT_STRING, shape);
  for (int64_t i = 0; i < shape.num_elements(); ++i) t.data<std::string>()[i] = "s" + std::to_string(i);
  return t;
}
inline std::vector<std::string> StringValues(const Tensor& t) {
  return std::vector<std::string>(t.data<std::string>(), t.data<std::string>() + t.NumElements());
}

// Row-major multi-index of flat position `flat` in `dims`, and back.
inline std::vector<int64_t> Unravel(int64_t flat, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    idx[d] = dims[d] > 0 ? flat % dims[d] : 0;
    if (dims[d] > 0) flat /= dims[d];
  }
  return idx;
}
inline int64_t Ravel(const std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  int64_t flat = 0;
  for (size_t d = 0; d < dims.size(); ++d) flat = flat * dims[d] + idx[d];
  return flat;
}
inline std::vector<int64_t> DimsOf(const Tensor& t) {
  return std::vector<int64_t>(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
}

}  // namespace test
}  // namespace tensorflux
