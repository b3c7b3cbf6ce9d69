// Element types. DataType is the protobuf enum with TensorFlow's values (proto/tensorflux/types.proto).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "tensorflux/core/status.h"
#include "tensorflux/types.pb.h"

namespace tensorflux {

using DataTypeVector = absl::InlinedVector<DataType, 4>;

// IEEE 754 binary16 storage (DT_HALF). Arithmetic happens in float.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float f);
  explicit operator float() const;
};

// bfloat16 storage (DT_BFLOAT16): the upper 16 bits of a float32, rounded to nearest even.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f);
  explicit operator float() const;
};

float HalfToFloat(uint16_t bits);
uint16_t FloatToHalf(float f);

// A ResourceHandle names a resource (a variable, an iterator) owned by a device's ResourceMgr.
// It is the element type of DT_RESOURCE tensors.
struct ResourceHandle {
  std::string device;
  std::string container;
  std::string name;
  uint64_t hash_code = 0;
  std::string maybe_type_name;
  std::string DebugString() const;
};

// Size in bytes of one element; 0 for types without a fixed-size POD element (string, resource,
// variant, invalid). Reference types report their base type's size.
size_t DataTypeSize(DataType dt);

// TensorFlow's lower-case names: "float", "double", "int32", "uint8", "bool", "string",
// "bfloat16", "half", "resource", ... Reference types get a "_ref" suffix.
std::string DataTypeString(DataType dt);

// Parses DataTypeString's names and the proto names ("DT_FLOAT"). NOT_FOUND-free: returns
// INVALID_ARGUMENT for an unknown name.
StatusOr<DataType> DataTypeFromString(std::string_view name);

std::string DataTypeVectorString(const DataTypeVector& v);

inline bool IsRefType(DataType dt) { return static_cast<int>(dt) > 100; }
inline DataType BaseType(DataType dt) {
  return IsRefType(dt) ? static_cast<DataType>(static_cast<int>(dt) - 100) : dt;
}
inline DataType MakeRefType(DataType dt) {
  return IsRefType(dt) ? dt : static_cast<DataType>(static_cast<int>(dt) + 100);
}
// True for the types a Tensor can hold (POD numerics, bool, half, bfloat16, string, resource).
bool DataTypeCanUseMemcpy(DataType dt);
bool DataTypeIsFloating(DataType dt);  // half, bfloat16, float, double
bool DataTypeIsInteger(DataType dt);   // int8..int64, uint8..uint64
bool DataTypeIsSupported(DataType dt);

// Compile-time mapping between C++ types and DataType.
template <typename T>
struct DataTypeToEnum;
#define TX_MATCH_TYPE_AND_ENUM(TYPE, ENUM)                 \
  template <>                                              \
  struct DataTypeToEnum<TYPE> {                            \
    static constexpr DataType value = ENUM;                \
  }
TX_MATCH_TYPE_AND_ENUM(float, DT_FLOAT);
TX_MATCH_TYPE_AND_ENUM(double, DT_DOUBLE);
TX_MATCH_TYPE_AND_ENUM(int32_t, DT_INT32);
TX_MATCH_TYPE_AND_ENUM(int64_t, DT_INT64);
TX_MATCH_TYPE_AND_ENUM(uint8_t, DT_UINT8);
TX_MATCH_TYPE_AND_ENUM(int8_t, DT_INT8);
TX_MATCH_TYPE_AND_ENUM(int16_t, DT_INT16);
TX_MATCH_TYPE_AND_ENUM(uint16_t, DT_UINT16);
TX_MATCH_TYPE_AND_ENUM(uint32_t, DT_UINT32);
TX_MATCH_TYPE_AND_ENUM(uint64_t, DT_UINT64);
TX_MATCH_TYPE_AND_ENUM(bool, DT_BOOL);
TX_MATCH_TYPE_AND_ENUM(Half, DT_HALF);
TX_MATCH_TYPE_AND_ENUM(BFloat16, DT_BFLOAT16);
TX_MATCH_TYPE_AND_ENUM(std::string, DT_STRING);
TX_MATCH_TYPE_AND_ENUM(ResourceHandle, DT_RESOURCE);
#undef TX_MATCH_TYPE_AND_ENUM

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls fn(TypeTag<T>{}) with the C++ type of `dt`, for every fixed-size element type
// (float, double, int8/16/32/64, uint8/16/32/64, bool, Half, BFloat16). Returns fn's Status, or
// UNIMPLEMENTED naming `what` and the type when `dt` is not one of them.
template <typename Fn>
Status VisitPodType(DataType dt, std::string_view what, Fn&& fn) {
  switch (BaseType(dt)) {
    case DT_FLOAT: return fn(TypeTag<float>{});
    case DT_DOUBLE: return fn(TypeTag<double>{});
    case DT_INT32: return fn(TypeTag<int32_t>{});
    case DT_INT64: return fn(TypeTag<int64_t>{});
    case DT_UINT8: return fn(TypeTag<uint8_t>{});
    case DT_INT8: return fn(TypeTag<int8_t>{});
    case DT_INT16: return fn(TypeTag<int16_t>{});
    case DT_UINT16: return fn(TypeTag<uint16_t>{});
    case DT_UINT32: return fn(TypeTag<uint32_t>{});
    case DT_UINT64: return fn(TypeTag<uint64_t>{});
    case DT_BOOL: return fn(TypeTag<bool>{});
    case DT_HALF: return fn(TypeTag<Half>{});
    case DT_BFLOAT16: return fn(TypeTag<BFloat16>{});
    default:
      return errors::Unimplemented(what, " does not support dtype ", DataTypeString(dt));
  }
}

}  // namespace tensorflux
