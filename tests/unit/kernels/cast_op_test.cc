// Cast (kernels/cpu/cast_op.cc): every pair of POD dtypes, float -> int truncation and
// saturation, integer wraparound, bool, half/bfloat16 rounding and Truncate, round trips,
// forwarding for SrcT == DstT, the parallel path and errors.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace tensorflux {
namespace {

using test::AsTensor;
using test::FromDoubles;
using test::KernelRunner;
using test::ToDoubles;

const std::vector<DataType>& PodTypes() {
  static const std::vector<DataType> types = {
      DT_BOOL,  DT_HALF,  DT_BFLOAT16, DT_FLOAT,  DT_DOUBLE, DT_INT8,  DT_INT16,
      DT_INT32, DT_INT64, DT_UINT8,    DT_UINT16, DT_UINT32, DT_UINT64};
  return types;
}

StatusOr<Tensor> Cast(Tensor x, DataType dst, bool truncate = false, DeviceBase* device = nullptr) {
  KernelRunner r("Cast");
  r.Input(std::move(x)).Attr("DstT", dst);
  if (truncate) r.Attr("Truncate", true);
  if (device != nullptr) r.OnDevice(device);
  return r.RunOne();
}

TEST(CastOpTest, EveryPairOfPodTypes) {
  // Values every type holds exactly (bool holds their truth value).
  const std::vector<double> values = {0, 1, 2, 7, 100, 127};
  int pairs = 0;
  for (DataType src : PodTypes()) {
    for (DataType dst : PodTypes()) {
      Tensor x = FromDoubles(src, TensorShape({2, 3}), values);
      const std::vector<double> in = ToDoubles(x);
      auto y = Cast(x, dst);
      const std::string what = DataTypeString(src) + " -> " + DataTypeString(dst);
      ASSERT_TRUE(y.ok()) << what << ": " << y.status();
      EXPECT_EQ(y->dtype(), dst) << what;
      EXPECT_EQ(y->shape(), TensorShape({2, 3})) << what;
      const std::vector<double> got = ToDoubles(*y);
      for (size_t i = 0; i < values.size(); ++i) {
        const double want = dst == DT_BOOL ? (in[i] != 0 ? 1 : 0) : in[i];
        EXPECT_EQ(got[i], want) << what << " at " << i;
      }
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, 169);
}

TEST(CastOpTest, FloatToIntTruncatesTowardZeroAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x = AsTensor<float>({-2.7f, -0.5f, 0.5f, 2.7f, 1e10f, -1e10f, nan, inf, -inf, 255.9f},
                             TensorShape({10}));
  auto i32 = Cast(x, DT_INT32);
  ASSERT_TRUE(i32.ok()) << i32.status();
  const int32_t mx = std::numeric_limits<int32_t>::max(), mn = std::numeric_limits<int32_t>::min();
  const std::vector<int32_t> want32 = {-2, 0, 0, 2, mx, mn, 0, mx, mn, 255};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(i32->flat<int32_t>()[i], want32[i]) << i;

  auto u8 = Cast(x, DT_UINT8);
  ASSERT_TRUE(u8.ok());
  const std::vector<uint8_t> want8 = {0, 0, 0, 2, 255, 0, 0, 255, 0, 255};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(u8->flat<uint8_t>()[i], want8[i]) << i;

  // The largest float below 2^31 fits; 2^31 saturates.
  auto edge = Cast(AsTensor<float>({2147483520.f, 2147483648.f, -2147483648.f}, TensorShape({3})),
                   DT_INT32);
  ASSERT_TRUE(edge.ok());
  EXPECT_EQ(edge->flat<int32_t>()[0], 2147483520);
  EXPECT_EQ(edge->flat<int32_t>()[1], mx);
  EXPECT_EQ(edge->flat<int32_t>()[2], mn);

  auto i64 =
      Cast(AsTensor<double>({-1e30, 9.2e18, 123456789012.9, -3.99}, TensorShape({4})), DT_INT64);
  ASSERT_TRUE(i64.ok());
  EXPECT_EQ(i64->flat<int64_t>()[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(i64->flat<int64_t>()[1], 9200000000000000000LL);
  EXPECT_EQ(i64->flat<int64_t>()[2], 123456789012LL);
  EXPECT_EQ(i64->flat<int64_t>()[3], -3);

  // Half goes through float.
  auto h = Cast(FromDoubles(DT_HALF, TensorShape({3}), {-1.5, 65504, 300.75}), DT_INT16);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->flat<int16_t>()[0], -1);
  EXPECT_EQ(h->flat<int16_t>()[1], 32767);
  EXPECT_EQ(h->flat<int16_t>()[2], 300);
}

TEST(CastOpTest, IntegerToIntegerWrapsAround) {
  auto u8 = Cast(AsTensor<int32_t>({300, -1, 256, 255}, TensorShape({4})), DT_UINT8);
  ASSERT_TRUE(u8.ok()) << u8.status();
  EXPECT_EQ(u8->flat<uint8_t>()[0], 44);
  EXPECT_EQ(u8->flat<uint8_t>()[1], 255);
  EXPECT_EQ(u8->flat<uint8_t>()[2], 0);
  EXPECT_EQ(u8->flat<uint8_t>()[3], 255);
  auto i32 = Cast(AsTensor<int64_t>({(int64_t{1} << 40) + 5, -1}, TensorShape({2})), DT_INT32);
  ASSERT_TRUE(i32.ok());
  EXPECT_EQ(i32->flat<int32_t>()[0], 5);
  EXPECT_EQ(i32->flat<int32_t>()[1], -1);
  auto u64 = Cast(AsTensor<int8_t>({-2}, TensorShape({1})), DT_UINT64);
  ASSERT_TRUE(u64.ok());
  EXPECT_EQ(u64->flat<uint64_t>()[0], std::numeric_limits<uint64_t>::max() - 1);
}

TEST(CastOpTest, BoolCasts) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto b = Cast(AsTensor<float>({0.f, -0.f, 0.5f, -3.f, nan}, TensorShape({5})), DT_BOOL);
  ASSERT_TRUE(b.ok()) << b.status();
  const std::vector<bool> want = {false, false, true, true, true};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(b->flat<bool>()[i], want[i]) << i;

  auto bi = Cast(AsTensor<int32_t>({0, 256, -1}, TensorShape({3})), DT_BOOL);
  ASSERT_TRUE(bi.ok());
  EXPECT_FALSE(bi->flat<bool>()[0]);
  EXPECT_TRUE(bi->flat<bool>()[1]);  // not a truncation to the low byte
  EXPECT_TRUE(bi->flat<bool>()[2]);

  auto bh = Cast(FromDoubles(DT_BFLOAT16, TensorShape({2}), {0, 1e-30}), DT_BOOL);
  ASSERT_TRUE(bh.ok());
  EXPECT_FALSE(bh->flat<bool>()[0]);
  EXPECT_TRUE(bh->flat<bool>()[1]);

  Tensor t(DT_BOOL, TensorShape({2}));
  t.flat<bool>()[0] = true;
  t.flat<bool>()[1] = false;
  for (DataType dst : {DT_FLOAT, DT_HALF, DT_INT64, DT_UINT8}) {
    auto f = Cast(t, dst);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(ToDoubles(*f), (std::vector<double>{1, 0})) << DataTypeString(dst);
  }
}

TEST(CastOpTest, HalfAndBFloat16RoundToNearestEven) {
  // 1 + 1.75 ulp rounds up to 1 + 2 ulp; Truncate keeps 1 + 1 ulp.
  const double half_ulp = std::ldexp(1.0, -10), bf16_ulp = std::ldexp(1.0, -7);
  for (DataType src : {DT_FLOAT, DT_DOUBLE}) {
    auto h = Cast(FromDoubles(src, TensorShape({2}), {1 + 1.75 * half_ulp, -(1 + 1.75 * half_ulp)}),
                  DT_HALF);
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(ToDoubles(*h), (std::vector<double>{1 + 2 * half_ulp, -(1 + 2 * half_ulp)}));
    auto ht =
        Cast(FromDoubles(src, TensorShape({2}), {1 + 1.75 * half_ulp, -(1 + 1.75 * half_ulp)}),
             DT_HALF, /*truncate=*/true);
    ASSERT_TRUE(ht.ok());
    EXPECT_EQ(ToDoubles(*ht), (std::vector<double>{1 + half_ulp, -(1 + half_ulp)}));

    auto b = Cast(FromDoubles(src, TensorShape({1}), {1 + 1.75 * bf16_ulp}), DT_BFLOAT16);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(ToDoubles(*b)[0], 1 + 2 * bf16_ulp);
    auto bt = Cast(FromDoubles(src, TensorShape({1}), {1 + 1.75 * bf16_ulp}), DT_BFLOAT16, true);
    ASSERT_TRUE(bt.ok());
    EXPECT_EQ(ToDoubles(*bt)[0], 1 + bf16_ulp);
  }
  // double -> float, both ways.
  const double f_ulp = std::ldexp(1.0, -23);
  Tensor d = AsTensor<double>({1 + 1.75 * f_ulp}, TensorShape({1}));
  auto f = Cast(d, DT_FLOAT);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->flat<float>()[0], static_cast<float>(1 + 2 * f_ulp));
  f = Cast(d, DT_FLOAT, true);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->flat<float>()[0], static_cast<float>(1 + f_ulp));
  // half -> bfloat16 drops 3 mantissa bits: 1 + 7/8 * 2^-7 (exact in half).
  Tensor h = FromDoubles(DT_HALF, TensorShape({1}), {1 + 0.875 * bf16_ulp});
  auto hb = Cast(h, DT_BFLOAT16);
  ASSERT_TRUE(hb.ok());
  EXPECT_EQ(ToDoubles(*hb)[0], 1 + bf16_ulp);
  hb = Cast(h, DT_BFLOAT16, true);
  ASSERT_TRUE(hb.ok());
  EXPECT_EQ(ToDoubles(*hb)[0], 1.0);
  // Truncate keeps NaN a NaN and leaves integer casts alone.
  auto nan = Cast(AsTensor<float>({std::numeric_limits<float>::quiet_NaN()}, TensorShape({1})),
                  DT_BFLOAT16, true);
  ASSERT_TRUE(nan.ok());
  EXPECT_TRUE(std::isnan(ToDoubles(*nan)[0]));
  auto it = Cast(AsTensor<float>({2.5f}, TensorShape({1})), DT_INT32, true);
  ASSERT_TRUE(it.ok());
  EXPECT_EQ(it->flat<int32_t>()[0], 2);
  // Overflow to infinity.
  auto big = Cast(AsTensor<float>({1e5f, -1e5f}, TensorShape({2})), DT_HALF);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(ToDoubles(*big), (std::vector<double>{std::numeric_limits<double>::infinity(),
                                                  -std::numeric_limits<double>::infinity()}));
  // Integers to half round to nearest (2049 is halfway between 2048 and 2050).
  auto ih = Cast(AsTensor<int32_t>({2049, 2051, 70000}, TensorShape({3})), DT_HALF);
  ASSERT_TRUE(ih.ok());
  EXPECT_EQ(ToDoubles(*ih),
            (std::vector<double>{2048, 2052, std::numeric_limits<double>::infinity()}));
}

TEST(CastOpTest, RoundTripsAreExact) {
  // Every half and bfloat16 bit pattern through float and back.
  for (DataType dt : {DT_HALF, DT_BFLOAT16}) {
    Tensor x(dt, TensorShape({65536}));
    uint16_t* bits = static_cast<uint16_t*>(x.raw_data());
    for (int i = 0; i < 65536; ++i) bits[i] = static_cast<uint16_t>(i);
    auto f = Cast(x, DT_FLOAT);
    ASSERT_TRUE(f.ok()) << f.status();
    auto back = Cast(*f, dt);
    ASSERT_TRUE(back.ok());
    const uint16_t* out = static_cast<const uint16_t*>(back->raw_data());
    const std::vector<double> back_values = ToDoubles(*back);
    int mismatches = 0;
    for (int i = 0; i < 65536; ++i) {
      const bool is_nan = std::isnan(f->flat<float>()[i]);
      if (is_nan) {
        if (!std::isnan(back_values[i])) ++mismatches;
      } else if (out[i] != bits[i]) {
        ++mismatches;
      }
    }
    EXPECT_EQ(mismatches, 0) << DataTypeString(dt);
    // And through double.
    auto d = Cast(x, DT_DOUBLE);
    ASSERT_TRUE(d.ok());
    auto back2 = Cast(*d, dt);
    ASSERT_TRUE(back2.ok());
    for (int i = 0; i < 65536; ++i) {
      if (!std::isnan(d->flat<double>()[i])) {
        ASSERT_EQ(static_cast<const uint16_t*>(back2->raw_data())[i], bits[i]) << i;
      }
    }
  }
  // int32 -> float -> int32 below 2^24, int64 -> double -> int64 below 2^53.
  std::vector<int32_t> iv;
  for (int32_t v = -(1 << 24); v <= (1 << 24); v += 4099) iv.push_back(v);
  Tensor i32 = AsTensor<int32_t>(iv, TensorShape({static_cast<int64_t>(iv.size())}));
  auto back = Cast(*Cast(i32, DT_FLOAT), DT_INT32);
  ASSERT_TRUE(back.ok());
  for (size_t i = 0; i < iv.size(); ++i) ASSERT_EQ(back->flat<int32_t>()[i], iv[i]);
  Tensor i64 =
      AsTensor<int64_t>({(int64_t{1} << 53) - 1, -(int64_t{1} << 53) + 3, 0}, TensorShape({3}));
  auto back64 = Cast(*Cast(i64, DT_DOUBLE), DT_INT64);
  ASSERT_TRUE(back64.ok());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(back64->flat<int64_t>()[i], i64.flat<int64_t>()[i]);
  // uint8 through every other type and back.
  std::vector<uint8_t> bytes(256);
  for (int i = 0; i < 256; ++i) bytes[i] = static_cast<uint8_t>(i);
  Tensor u8 = AsTensor<uint8_t>(bytes, TensorShape({256}));
  for (DataType mid : {DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE, DT_INT16, DT_INT32, DT_INT64,
                       DT_UINT16, DT_UINT32, DT_UINT64}) {
    auto r = Cast(*Cast(u8, mid), DT_UINT8);
    ASSERT_TRUE(r.ok()) << DataTypeString(mid);
    for (int i = 0; i < 256; ++i) ASSERT_EQ(r->flat<uint8_t>()[i], i) << DataTypeString(mid);
  }
}

TEST(CastOpTest, SameTypeForwardsTheInput) {
  Tensor x = AsTensor<float>({1.5f, -2.f}, TensorShape({2}));
  auto y = Cast(x, DT_FLOAT);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_TRUE(y->SharesBufferWith(x));
  EXPECT_EQ(y->flat<float>()[1], -2.f);
}

TEST(CastOpTest, LargeTensorOnAThreadPool) {
  test::TestCpuDevice device(4);
  const int64_t n = 1 << 20;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 1000) - 500.25f;
  auto y = Cast(AsTensor<float>(v, TensorShape({n})), DT_INT32, false, &device);
  ASSERT_TRUE(y.ok()) << y.status();
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(y->flat<int32_t>()[i], static_cast<int32_t>(std::trunc(v[i]))) << i;
  }
  auto h = Cast(AsTensor<float>(v, TensorShape({n})), DT_HALF, false, &device);
  ASSERT_TRUE(h.ok());
  const std::vector<double> hv = ToDoubles(*h);
  for (int64_t i = 0; i < n; i += 997) {
    ASSERT_EQ(hv[i], test::RoundTo(DT_HALF, v[i])) << i;
  }
}

TEST(CastOpTest, ZeroElements) {
  auto y = Cast(Tensor(DT_DOUBLE, TensorShape({0, 4})), DT_HALF);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), TensorShape({0, 4}));
  EXPECT_EQ(y->dtype(), DT_HALF);
}

TEST(CastOpTest, StringsCastOnlyToStrings) {
  // As TF's kernel: UNIMPLEMENTED between string and another type, string to string forwards.
  auto y = Cast(AsTensor<std::string>({"1"}, TensorShape({1})), DT_INT32);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kUnimplemented) << y.status();
  auto z = Cast(AsTensor<int32_t>({1}, TensorShape({1})), DT_STRING);
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.status().code(), absl::StatusCode::kUnimplemented) << z.status();
  auto s = Cast(AsTensor<std::string>({"a", "bc"}, TensorShape({2})), DT_STRING);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->flat<std::string>()[1], "bc");
}

TEST(CastOpTest, ShapeFunctionAndCheapness) {
  KernelRunner r("Cast");
  r.Attr("SrcT", DT_INT32).Attr("DstT", DT_FLOAT);
  auto s = r.InferShapes({PartialTensorShape({-1, 3})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, 3}));
  r.Input(AsTensor<int32_t>({1}, TensorShape({})));
  ASSERT_TRUE(r.Run().ok());
  EXPECT_FALSE(r.kernel()->IsExpensive());
}

}  // namespace
}  // namespace tensorflux
