// Philox4x32-10 against the Random123 known-answer vectors (kat_vectors, "philox4x32 10"
// lines), counter arithmetic, TF's seeding layout, and the distribution helpers checked
// against values worked out by hand or in float64.
#include "tensorflux/core/philox.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>

#include <gtest/gtest.h>

namespace tensorflux {
namespace random {
namespace {

using Counter = Philox4x32::Counter;
using Key = Philox4x32::Key;
using Result = Philox4x32::Result;

struct Kat {
  Counter counter;
  Key key;
  Result expected;
};

// Random123's kat_vectors for philox4x32 with 10 rounds: counter (4 words), key (2 words),
// output (4 words), each word in hex.
const Kat kKats[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000},
     {0x00000000, 0x00000000},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

TEST(PhiloxTest, KnownAnswerVectors) {
  for (const Kat& k : kKats) {
    EXPECT_EQ(Philox4x32::Compute(k.counter, k.key), k.expected);
    // Through the stateful interface: output at the counter, then the counter moves on.
    Philox4x32 gen(k.counter, k.key);
    EXPECT_EQ(gen(), k.expected);
  }
}

TEST(PhiloxTest, Constants) {
  EXPECT_EQ(Philox4x32::kMultiplier0, 0xD2511F53u);
  EXPECT_EQ(Philox4x32::kMultiplier1, 0xCD9E8D57u);
  EXPECT_EQ(Philox4x32::kWeyl0, 0x9E3779B9u);
  EXPECT_EQ(Philox4x32::kWeyl1, 0xBB67AE85u);
}

TEST(PhiloxTest, CallAdvancesCounterByOne) {
  Philox4x32 gen(Counter{5, 0, 0, 0}, Key{1, 2});
  gen();
  EXPECT_EQ(gen.counter(), (Counter{6, 0, 0, 0}));
  EXPECT_EQ(gen(), Philox4x32::Compute(Counter{6, 0, 0, 0}, Key{1, 2}));
}

TEST(PhiloxTest, SkipEqualsRepeatedCalls) {
  const Key key = {0x12345678, 0x9abcdef0};
  for (uint64_t n : {0ull, 1ull, 2ull, 3ull, 17ull, 1000ull}) {
    Philox4x32 stepped(Counter{0xfffffff0u, 0, 7, 0}, key);
    for (uint64_t i = 0; i < n; ++i) stepped();
    Philox4x32 skipped(Counter{0xfffffff0u, 0, 7, 0}, key);
    skipped.Skip(n);
    EXPECT_EQ(skipped.counter(), stepped.counter()) << n;
    EXPECT_EQ(skipped(), stepped()) << n;
  }
}

TEST(PhiloxTest, SkipCarriesThrough128Bits) {
  Philox4x32 a(Counter{0xffffffff, 0, 0, 0}, Key{});
  a.Skip(1);
  EXPECT_EQ(a.counter(), (Counter{0, 1, 0, 0}));

  Philox4x32 b(Counter{0xffffffff, 0xffffffff, 0, 0}, Key{});
  b.Skip(1);
  EXPECT_EQ(b.counter(), (Counter{0, 0, 1, 0}));

  Philox4x32 c(Counter{0xffffffff, 0xffffffff, 0xffffffff, 0}, Key{});
  c.Skip(1);
  EXPECT_EQ(c.counter(), (Counter{0, 0, 0, 1}));

  // Wraps mod 2^128.
  Philox4x32 d(Counter{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, Key{});
  d.Skip(2);
  EXPECT_EQ(d.counter(), (Counter{1, 0, 0, 0}));

  // A large skip: 2^64 - 1 from {1, 0, 5, 0} -> {0, 0, 6, 0}.
  Philox4x32 e(Counter{1, 0, 5, 0}, Key{});
  e.Skip(std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(e.counter(), (Counter{0, 0, 6, 0}));

  // Skip(a) then Skip(b) == Skip(a + b).
  Philox4x32 f(Counter{0x89abcdef, 0xfffffffe, 3, 0}, Key{});
  Philox4x32 g = f;
  f.Skip(0x123456789ull);
  f.Skip(0xfedcba987ull);
  g.Skip(0x123456789ull + 0xfedcba987ull);
  EXPECT_EQ(f.counter(), g.counter());
}

TEST(PhiloxTest, FromSeedsUsesTfLayout) {
  const Philox4x32 g = Philox4x32::FromSeeds(0x1122334455667788ull, 0x99aabbccddeeff00ull);
  EXPECT_EQ(g.key(), (Key{0x55667788, 0x11223344}));
  EXPECT_EQ(g.counter(), (Counter{0, 0, 0xddeeff00, 0x99aabbcc}));
  // Negative seeds are their two's complement.
  const Philox4x32 n = Philox4x32::FromSeeds(static_cast<uint64_t>(int64_t{-1}), 2);
  EXPECT_EQ(n.key(), (Key{0xffffffff, 0xffffffff}));
  EXPECT_EQ(n.counter(), (Counter{0, 0, 2, 0}));
}

TEST(PhiloxTest, WordStreamReadsCountersInOrder) {
  const Philox4x32 gen(Counter{9, 0, 0, 0}, Key{3, 4});
  PhiloxWordStream s(gen);
  const Result r0 = Philox4x32::Compute(Counter{9, 0, 0, 0}, Key{3, 4});
  const Result r1 = Philox4x32::Compute(Counter{10, 0, 0, 0}, Key{3, 4});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(s.Next32(), r0[i]);
  // Next64 straddles the counter boundary: word 3 of r0 low, word 0 of r1 high.
  EXPECT_EQ(s.Next64(), uint64_t{r0[3]} | (uint64_t{r1[0]} << 32));
  EXPECT_EQ(s.Next32(), r1[1]);
}

TEST(PhiloxTest, GuardedPhiloxReservesConsecutiveRanges) {
  GuardedPhilox g;
  g.Init(7, 9);
  const Philox4x32 a = g.Reserve(10);
  const Philox4x32 b = g.Reserve(3);
  const Philox4x32 c = g.ReserveForOutputs(2);  // 2 * 256 counters
  const Philox4x32 d = g.Reserve(1);
  const Philox4x32 start = Philox4x32::FromSeeds(7, 9);
  EXPECT_EQ(a.counter(), start.counter());
  EXPECT_EQ(a.key(), start.key());
  EXPECT_EQ(b.counter(), (Counter{10, 0, 9, 0}));
  EXPECT_EQ(c.counter(), (Counter{13, 0, 9, 0}));
  EXPECT_EQ(d.counter(), (Counter{13 + 512, 0, 9, 0}));
}

TEST(PhiloxTest, ReserveForOutputsSaturatesInsteadOfOverflowing) {
  GuardedPhilox g;
  g.Init(1, 0);
  g.ReserveForOutputs(uint64_t{1} << 60, 256);  // 2^68 would overflow: reserves 2^64 - 1
  const Philox4x32 next = g.Reserve(0);
  EXPECT_EQ(next.counter(), (Counter{0xffffffff, 0xffffffff, 0, 0}));
}

TEST(PhiloxTest, ZeroSeedsAreNondeterministic) {
  std::set<Key> keys;
  for (int i = 0; i < 4; ++i) {
    GuardedPhilox g;
    g.Init(0, 0);
    keys.insert(g.Reserve(1).key());
  }
  EXPECT_GT(keys.size(), 1u);
}

// ---------------------------------------------------------------- distributions

TEST(PhiloxDistributionTest, Uint32ToFloat) {
  EXPECT_EQ(Uint32ToFloat(0), 0.0f);
  EXPECT_EQ(Uint32ToFloat(0x7fffff), 1.0f - 0x1p-23f);  // the largest value, < 1
  EXPECT_EQ(Uint32ToFloat(0x400000), 0.5f);
  EXPECT_EQ(Uint32ToFloat(1), 0x1p-23f);
  // Only the low 23 bits count.
  EXPECT_EQ(Uint32ToFloat(0xff800001u), 0x1p-23f);
  for (uint32_t x : {0u, 1u, 12345u, 0x7fffffu, 0xdeadbeefu, 0xffffffffu}) {
    EXPECT_EQ(Uint32ToFloat(x), static_cast<float>((x & 0x7fffff) * 0x1p-23)) << x;
  }
}

TEST(PhiloxDistributionTest, Uint64ToDouble) {
  EXPECT_EQ(Uint64ToDouble(0, 0), 0.0);
  EXPECT_EQ(Uint64ToDouble(0xfffff, 0xffffffff), 1.0 - 0x1p-52);
  EXPECT_EQ(Uint64ToDouble(0x80000, 0), 0.5);
  EXPECT_EQ(Uint64ToDouble(0, 1), 0x1p-52);
  EXPECT_EQ(Uint64ToDouble(0xfff00000u, 0), 0.0);  // the high 12 bits of x0 are dropped
  const uint32_t x0 = 0x12345, x1 = 0x6789abcd;
  EXPECT_EQ(Uint64ToDouble(x0, x1), static_cast<double>((uint64_t{x0} << 32) | x1) * 0x1p-52);
}

TEST(PhiloxDistributionTest, HalfAndBFloat16) {
  EXPECT_EQ(static_cast<float>(Uint32ToHalf(0)), 0.0f);
  EXPECT_EQ(static_cast<float>(Uint32ToHalf(0x3ff)), 1.0f - 0x1p-10f);
  EXPECT_EQ(static_cast<float>(Uint32ToHalf(0xfffffc01u)), 0x1p-10f);
  EXPECT_EQ(static_cast<float>(Uint32ToBFloat16(0x7f)), 1.0f - 0x1p-7f);
  EXPECT_EQ(static_cast<float>(Uint32ToBFloat16(0xffffff81u)), 0x1p-7f);
  // TF's construction, exponent bits then minus one, gives the same half bits.
  for (uint32_t m = 0; m < 1024; m += 37) {
    const float one_plus = HalfToFloat(static_cast<uint16_t>((15u << 10) | m));
    EXPECT_EQ(static_cast<float>(Uint32ToHalf(m)), one_plus - 1.0f) << m;
  }
}

TEST(PhiloxDistributionTest, BoxMullerAgainstFloat64Formula) {
  const uint32_t words[][4] = {{0x12345678, 0x9abcdef0, 0x0badf00d, 0xcafebabe},
                               {0x00400000, 0x00200000, 0x00080000, 0x00000000},
                               {0, 0x7fffff, 0, 0}};
  for (const auto& w : words) {
    // float: u1 = low 23 bits of w0 (clamped at 1e-7), theta = 2 pi u(w1).
    double u1 = std::max((w[0] & 0x7fffff) * 0x1p-23, 1e-7);
    const double th = 2 * M_PI * ((w[1] & 0x7fffff) * 0x1p-23);
    float f0, f1;
    BoxMullerFloat(w[0], w[1], &f0, &f1);
    EXPECT_NEAR(f0, std::sqrt(-2 * std::log(u1)) * std::sin(th), 2e-6 * (1 + std::abs(f0)));
    EXPECT_NEAR(f1, std::sqrt(-2 * std::log(u1)) * std::cos(th), 2e-6 * (1 + std::abs(f1)));
    // double: 52-bit uniforms from (w0, w1) and (w2, w3).
    const double v1 = std::max(((uint64_t{w[0] & 0xfffff} << 32) | w[1]) * 0x1p-52, 1e-7);
    const double v2 = 2 * M_PI * (((uint64_t{w[2] & 0xfffff} << 32) | w[3]) * 0x1p-52);
    double d0, d1;
    BoxMullerDouble(w[0], w[1], w[2], w[3], &d0, &d1);
    EXPECT_NEAR(d0, std::sqrt(-2 * std::log(v1)) * std::sin(v2), 1e-12);
    EXPECT_NEAR(d1, std::sqrt(-2 * std::log(v1)) * std::cos(v2), 1e-12);
  }
  // u1 = 0 is clamped to 1e-7: radius sqrt(-2 ln 1e-7) = 5.6777..., theta = 0.
  float f0, f1;
  BoxMullerFloat(0, 0, &f0, &f1);
  EXPECT_EQ(f0, 0.0f);
  EXPECT_NEAR(f1, std::sqrt(-2 * std::log(1e-7)), 1e-5);
}

TEST(PhiloxDistributionTest, UniformIntCoversFullRanges) {
  EXPECT_EQ(UniformInt32(7, -3, 5), -3 + 2);
  EXPECT_EQ(UniformInt32(0, 10, 1), 10);
  // lo = INT32_MIN, hi = INT32_MAX: range 2^32 - 1 computed unsigned.
  const int32_t lo = std::numeric_limits<int32_t>::min();
  const uint32_t range = static_cast<uint32_t>(std::numeric_limits<int32_t>::max()) -
                         static_cast<uint32_t>(lo);
  EXPECT_EQ(range, 0xfffffffeu + 1u);
  EXPECT_EQ(UniformInt32(0, lo, range), lo);
  EXPECT_EQ(UniformInt32(0xfffffffeu, lo, range), std::numeric_limits<int32_t>::max() - 1);
  EXPECT_EQ(UniformInt32(0xffffffffu, lo, range), lo);  // wraps: 2^32-1 mod (2^32-1) = 0
  const int64_t lo64 = std::numeric_limits<int64_t>::min();
  const uint64_t range64 = ~uint64_t{0};
  EXPECT_EQ(UniformInt64(~uint64_t{0} - 1, lo64, range64), std::numeric_limits<int64_t>::max() - 1);
  EXPECT_EQ(UniformInt64(123, -1000, 100), -1000 + 23);
}

}  // namespace
}  // namespace random
}  // namespace tensorflux
