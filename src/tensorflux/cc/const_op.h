// ops::Const, hand-written rather than generated (like TF's cc/ops/const_op.h): it takes its value
// as a C++ literal or Tensor instead of the raw `value` and `dtype` attrs.
//
//   auto a = ops::Const(scope, {{1.f, 2.f}, {3.f, 4.f}});   // float [2,2]
//   auto b = ops::Const(scope, 0, {2, 3});                  // int32 [2,3] of zeros
//   auto c = ops::Const(scope, {1, 2, 3, 4}, {2, 2});       // int32 [2,2]
//   auto d = ops::Const(scope, 1.5, DT_FLOAT);              // float scalar (converted)
#pragma once

#include <initializer_list>

#include "tensorflux/cc/ops.h"
#include "tensorflux/cc/scope.h"

namespace tensorflux {
namespace ops {

// A Const node with `value`'s dtype and shape. A bad initializer (ragged, mixed types) records
// INVALID_ARGUMENT in the scope and returns an empty Output.
Output Const(const Scope& scope, const Input::Initializer& value);

// `value` converted to `dtype` under the literal rules of op_builder.h (INVALID_ARGUMENT when a
// value does not convert).
Output Const(const Scope& scope, const Input::Initializer& value, DataType dtype);

// A tensor of `shape` filled with `v`.
template <typename T, typename = std::enable_if_t<kIsLiteralType<T>>>
Output Const(const Scope& scope, const T& v, const TensorShape& shape) {
  return Const(scope, Input::Initializer(v, shape));
}

// `v` in row-major order as `shape`.
template <typename T, typename = std::enable_if_t<kIsLiteralType<T>>>
Output Const(const Scope& scope, const std::initializer_list<T>& v, const TensorShape& shape) {
  return Const(scope, Input::Initializer(v, shape));
}

}  // namespace ops
}  // namespace tensorflux
