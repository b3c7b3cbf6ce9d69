#include "tensorflux/core/types.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tensorflux {
namespace {

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// Rounds `value >> shift` to nearest, ties to even.
uint32_t ShiftRoundNearestEven(uint32_t value, int shift) {
  const uint32_t kept = value >> shift;
  const uint32_t rem = value & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (kept & 1))) return kept + 1;
  return kept;
}

struct TypeName {
  DataType dt;
  const char* name;
  size_t size;
};

// TensorFlow's spellings (DataTypeString) and element sizes.
constexpr TypeName kTypeNames[] = {
    {DT_FLOAT, "float", 4},        {DT_DOUBLE, "double", 8},
    {DT_INT32, "int32", 4},        {DT_UINT8, "uint8", 1},
    {DT_INT16, "int16", 2},        {DT_INT8, "int8", 1},
    {DT_STRING, "string", 0},      {DT_COMPLEX64, "complex64", 8},
    {DT_INT64, "int64", 8},        {DT_BOOL, "bool", 1},
    {DT_QINT8, "qint8", 1},        {DT_QUINT8, "quint8", 1},
    {DT_QINT32, "qint32", 4},      {DT_BFLOAT16, "bfloat16", 2},
    {DT_QINT16, "qint16", 2},      {DT_QUINT16, "quint16", 2},
    {DT_UINT16, "uint16", 2},      {DT_COMPLEX128, "complex128", 16},
    {DT_HALF, "half", 2},          {DT_RESOURCE, "resource", 0},
    {DT_VARIANT, "variant", 0},    {DT_UINT32, "uint32", 4},
    {DT_UINT64, "uint64", 8},
};

const TypeName* FindType(DataType dt) {
  for (const TypeName& t : kTypeNames)
    if (t.dt == dt) return &t;
  return nullptr;
}

}  // namespace

// ------------------------------------------------------------------ half (IEEE binary16)

uint16_t FloatToHalf(float f) {
  const uint32_t u = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const int exp = static_cast<int>((u >> 23) & 0xffu);
  const uint32_t mant = u & 0x7fffffu;
  if (exp == 0xff) {  // Inf or NaN; NaN stays a quiet NaN keeping its top payload bits
    if (mant == 0) return sign | 0x7c00u;
    return static_cast<uint16_t>(sign | 0x7e00u | (mant >> 13));
  }
  const int e = exp - 127;  // unbiased exponent (float subnormals give -127 -> zero below)
  if (e > 15) return sign | 0x7c00u;  // overflow -> inf
  if (e >= -14) {                      // normal half (rounding may carry into exp, even to inf)
    const uint32_t v = (static_cast<uint32_t>(e + 15) << 23) | mant;  // 5-bit exp + 23-bit mant
    return static_cast<uint16_t>(sign | ShiftRoundNearestEven(v, 13));
  }
  if (e < -25) return sign;  // below half the smallest subnormal -> signed zero
  // Subnormal half: value = k * 2^-24 with k = (1.mant * 2^23) >> (-1 - e).
  const uint32_t m = mant | 0x800000u;
  return static_cast<uint16_t>(sign | ShiftRoundNearestEven(m, -1 - e));
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return BitsToFloat(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float.
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return BitsToFloat(sign | ((exp + 112u) << 23) | (mant << 13));
}

Half::Half(float f) : bits(FloatToHalf(f)) {}
Half::operator float() const { return HalfToFloat(bits); }

// ------------------------------------------------------------------ bfloat16

BFloat16::BFloat16(float f) {
  const uint32_t u = FloatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep sign, force quiet
    bits = static_cast<uint16_t>((u >> 16) | 0x0040u);
    return;
  }
  const uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  bits = static_cast<uint16_t>((u + rounding) >> 16);
}

BFloat16::operator float() const { return BitsToFloat(static_cast<uint32_t>(bits) << 16); }

// ------------------------------------------------------------------ resource handle

std::string ResourceHandle::DebugString() const {
  return absl::StrFormat("device: %s container: %s name: %s hash_code: 0x%x maybe_type_name: %s",
                         device, container, name, hash_code, maybe_type_name);
}

// ------------------------------------------------------------------ DataType helpers

size_t DataTypeSize(DataType dt) {
  const TypeName* t = FindType(BaseType(dt));
  return t ? t->size : 0;
}

std::string DataTypeString(DataType dt) {
  if (IsRefType(dt)) {
    const TypeName* t = FindType(BaseType(dt));
    if (t) return absl::StrCat(t->name, "_ref");
  } else if (dt == DT_INVALID) {
    return "INVALID";
  } else if (const TypeName* t = FindType(dt)) {
    return t->name;
  }
  return absl::StrCat("unknown dtype enum (", static_cast<int>(dt), ")");
}

StatusOr<DataType> DataTypeFromString(std::string_view name) {
  std::string_view base = name;
  bool ref = false;
  if (base.size() > 4 && base.substr(base.size() - 4) == "_ref") {
    ref = true;
    base.remove_suffix(4);
  }
  for (const TypeName& t : kTypeNames) {
    if (base == t.name) return ref ? MakeRefType(t.dt) : t.dt;
  }
  // numpy-style aliases, as TF's Python dtypes spell them.
  if (base == "float32") return ref ? DT_FLOAT_REF : DT_FLOAT;
  if (base == "float64") return ref ? DT_DOUBLE_REF : DT_DOUBLE;
  if (base == "float16") return ref ? DT_HALF_REF : DT_HALF;
  DataType dt;
  if (name != "DT_INVALID" && DataType_Parse(std::string(name), &dt)) return dt;
  return errors::InvalidArgument("Unknown data type name '", name, "'");
}

std::string DataTypeVectorString(const DataTypeVector& v) {
  return absl::StrJoin(v, ", ", [](std::string* out, DataType dt) {
    out->append(DataTypeString(dt));
  });
}

bool DataTypeCanUseMemcpy(DataType dt) {
  switch (BaseType(dt)) {
    case DT_FLOAT: case DT_DOUBLE: case DT_INT32: case DT_INT64: case DT_UINT8: case DT_INT8:
    case DT_INT16: case DT_UINT16: case DT_UINT32: case DT_UINT64: case DT_BOOL: case DT_HALF:
    case DT_BFLOAT16:
      return true;
    default:
      return false;
  }
}

bool DataTypeIsFloating(DataType dt) {
  switch (BaseType(dt)) {
    case DT_HALF: case DT_BFLOAT16: case DT_FLOAT: case DT_DOUBLE: return true;
    default: return false;
  }
}

bool DataTypeIsInteger(DataType dt) {
  switch (BaseType(dt)) {
    case DT_INT8: case DT_INT16: case DT_INT32: case DT_INT64:
    case DT_UINT8: case DT_UINT16: case DT_UINT32: case DT_UINT64:
      return true;
    default:
      return false;
  }
}

bool DataTypeIsSupported(DataType dt) {
  const DataType b = BaseType(dt);
  return DataTypeCanUseMemcpy(b) || b == DT_STRING || b == DT_RESOURCE || b == DT_VARIANT;
}

}  // namespace tensorflux
