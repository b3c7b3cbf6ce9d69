#include "tensorflux/core/types.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "gtest/gtest.h"

namespace tensorflux {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(HalfTest, KnownBitPatterns) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalf(0.5f), 0x3800);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7BFF);  // largest finite half
  EXPECT_EQ(FloatToHalf(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(FloatToHalf(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_EQ(FloatToHalf(1e6f), 0x7C00);            // overflow -> inf
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(FloatToHalf(1e-10f), 0x0000);          // underflow -> zero
  const uint16_t nan = FloatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
}

TEST(HalfTest, RoundsToNearestEven) {
  // Half spacing at 1.0 is 2^-10. 1 + 2^-11 is a tie between 0x3C00 (even) and 0x3C01.
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3*2^-11 is a tie between 0x3C01 and 0x3C02 (even).
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  // Just above the tie rounds up.
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3C01);
  // 65520 is the tie between 65504 and 65536 (inf): rounds to even -> inf; just below stays.
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7BFF);
  // Subnormal tie: 1.5 * 2^-24 lies between 0x0001 and 0x0002 -> even 0x0002; 0.5 * 2^-24 -> 0.
  EXPECT_EQ(FloatToHalf(1.5f * std::ldexp(1.0f, -24)), 0x0002);
  EXPECT_EQ(FloatToHalf(0.5f * std::ldexp(1.0f, -24)), 0x0000);
  EXPECT_EQ(FloatToHalf(0.51f * std::ldexp(1.0f, -24)), 0x0001);
}

TEST(HalfTest, ToFloat) {
  EXPECT_EQ(HalfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(HalfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfToFloat(0x03FF), 1023 * std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfToFloat(0x3555), 0.333251953125f);
  EXPECT_TRUE(std::isinf(HalfToFloat(0x7C00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7E00)));
  EXPECT_TRUE(std::signbit(HalfToFloat(0x8000)));
  EXPECT_EQ(static_cast<float>(Half(3.0f)), 3.0f);
}

TEST(HalfTest, EveryFiniteHalfRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0) continue;  // NaN
    ASSERT_EQ(FloatToHalf(HalfToFloat(h)), h) << std::hex << b;
  }
}

TEST(BFloat16Test, KnownBitPatterns) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3F80);
  EXPECT_EQ(BFloat16(-2.0f).bits, 0xC000);
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::infinity()).bits, 0x7F80);
  EXPECT_EQ(BFloat16(3.0e38f).bits, 0x7F62);
  // Ties to even: 0x3F808000 is halfway between 0x3F80 and 0x3F81 -> 0x3F80;
  // 0x3F818000 is halfway between 0x3F81 and 0x3F82 -> 0x3F82.
  EXPECT_EQ(BFloat16(FromBits(0x3F808000u)).bits, 0x3F80);
  EXPECT_EQ(BFloat16(FromBits(0x3F818000u)).bits, 0x3F82);
  EXPECT_EQ(BFloat16(FromBits(0x3F808001u)).bits, 0x3F81);
  // Largest finite float rounds up to inf.
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::max()).bits, 0x7F80);
  BFloat16 nan(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(static_cast<float>(nan)));
  // A signalling NaN whose payload is only in the low bits must not become inf.
  BFloat16 snan(FromBits(0x7F800001u));
  EXPECT_TRUE(std::isnan(static_cast<float>(snan)));
  EXPECT_EQ(Bits(static_cast<float>(BFloat16(1.0f))), 0x3F800000u);
}

TEST(DataTypeTest, Sizes) {
  EXPECT_EQ(DataTypeSize(DT_FLOAT), 4u);
  EXPECT_EQ(DataTypeSize(DT_DOUBLE), 8u);
  EXPECT_EQ(DataTypeSize(DT_INT8), 1u);
  EXPECT_EQ(DataTypeSize(DT_UINT16), 2u);
  EXPECT_EQ(DataTypeSize(DT_HALF), 2u);
  EXPECT_EQ(DataTypeSize(DT_BFLOAT16), 2u);
  EXPECT_EQ(DataTypeSize(DT_BOOL), 1u);
  EXPECT_EQ(DataTypeSize(DT_UINT64), 8u);
  EXPECT_EQ(DataTypeSize(DT_COMPLEX128), 16u);
  EXPECT_EQ(DataTypeSize(DT_STRING), 0u);
  EXPECT_EQ(DataTypeSize(DT_RESOURCE), 0u);
  EXPECT_EQ(DataTypeSize(DT_INVALID), 0u);
  EXPECT_EQ(DataTypeSize(DT_FLOAT_REF), 4u);
}

TEST(DataTypeTest, NamesRoundTrip) {
  const std::pair<DataType, const char*> kNames[] = {
      {DT_FLOAT, "float"},         {DT_DOUBLE, "double"},     {DT_INT32, "int32"},
      {DT_UINT8, "uint8"},         {DT_INT16, "int16"},       {DT_INT8, "int8"},
      {DT_STRING, "string"},       {DT_COMPLEX64, "complex64"}, {DT_INT64, "int64"},
      {DT_BOOL, "bool"},           {DT_QINT8, "qint8"},       {DT_QUINT8, "quint8"},
      {DT_QINT32, "qint32"},       {DT_BFLOAT16, "bfloat16"}, {DT_QINT16, "qint16"},
      {DT_QUINT16, "quint16"},     {DT_UINT16, "uint16"},     {DT_COMPLEX128, "complex128"},
      {DT_HALF, "half"},           {DT_RESOURCE, "resource"}, {DT_VARIANT, "variant"},
      {DT_UINT32, "uint32"},       {DT_UINT64, "uint64"},     {DT_FLOAT_REF, "float_ref"},
      {DT_INT32_REF, "int32_ref"},
  };
  for (const auto& [dt, name] : kNames) {
    EXPECT_EQ(DataTypeString(dt), name);
    StatusOr<DataType> parsed = DataTypeFromString(name);
    ASSERT_TRUE(parsed.ok()) << name;
    EXPECT_EQ(*parsed, dt);
  }
  EXPECT_EQ(*DataTypeFromString("DT_FLOAT"), DT_FLOAT);
  EXPECT_EQ(*DataTypeFromString("DT_BFLOAT16"), DT_BFLOAT16);
  EXPECT_EQ(*DataTypeFromString("DT_INT64_REF"), DT_INT64_REF);
  EXPECT_EQ(*DataTypeFromString("float32"), DT_FLOAT);
}

TEST(DataTypeTest, BadNamesAreInvalidArgument) {
  for (const char* bad : {"", "floaty", "DT_INVALID", "_ref", "Float"}) {
    StatusOr<DataType> r = DataTypeFromString(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_NE(DataTypeFromString("floaty").status().message().find("floaty"), std::string::npos);
}

TEST(DataTypeTest, VectorStringAndPredicates) {
  EXPECT_EQ(DataTypeVectorString({DT_FLOAT, DT_INT32, DT_BOOL}), "float, int32, bool");
  EXPECT_EQ(DataTypeVectorString({}), "");
  EXPECT_TRUE(IsRefType(DT_FLOAT_REF));
  EXPECT_EQ(BaseType(DT_FLOAT_REF), DT_FLOAT);
  EXPECT_EQ(MakeRefType(DT_INT32), DT_INT32_REF);
  EXPECT_TRUE(DataTypeIsFloating(DT_BFLOAT16));
  EXPECT_FALSE(DataTypeIsFloating(DT_INT32));
  EXPECT_TRUE(DataTypeIsInteger(DT_UINT64));
  EXPECT_FALSE(DataTypeIsInteger(DT_BOOL));
  EXPECT_TRUE(DataTypeCanUseMemcpy(DT_HALF));
  EXPECT_FALSE(DataTypeCanUseMemcpy(DT_STRING));
  EXPECT_TRUE(DataTypeIsSupported(DT_STRING));
  EXPECT_TRUE(DataTypeIsSupported(DT_RESOURCE));
  EXPECT_FALSE(DataTypeIsSupported(DT_COMPLEX64));
  EXPECT_FALSE(DataTypeIsSupported(DT_INVALID));
  EXPECT_EQ(DataTypeString(static_cast<DataType>(77)), "unknown dtype enum (77)");
}

TEST(DataTypeTest, VisitPodTypeRejectsNonPod) {
  Status s = VisitPodType(DT_STRING, "Neg", [](auto) { return OkStatus(); });
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(), "Neg does not support dtype string");
  size_t size = 0;
  EXPECT_TRUE(VisitPodType(DT_INT16, "x", [&](auto tag) {
                size = sizeof(typename decltype(tag)::type);
                return OkStatus();
              }).ok());
  EXPECT_EQ(size, 2u);
}

TEST(ResourceHandleTest, DebugStringNamesFields) {
  ResourceHandle h;
  h.device = "/job:localhost/replica:0/task:0/device:CPU:0";
  h.container = "c";
  h.name = "v";
  h.hash_code = 255;
  const std::string s = h.DebugString();
  EXPECT_NE(s.find("name: v"), std::string::npos);
  EXPECT_NE(s.find("container: c"), std::string::npos);
  EXPECT_NE(s.find("0xff"), std::string::npos);
}

}  // namespace
}  // namespace tensorflux
