// Philox4x32-10, the counter-based random number generator of Salmon, Moraes, Dror and Shaw,
// "Parallel Random Numbers: As Easy as 1, 2, 3" (SC'11; the Random123 library), and the
// distributions TensorFlow's random ops draw from it.
//
// Philox is a keyed bijection on 128-bit counters: output = Philox(counter, key), four 32-bit
// words per counter. Ten rounds; each round multiplies words 0 and 2 by 0xD2511F53 and
// 0xCD9E8D57, mixes the high/low halves of the 64-bit products with words 1 and 3 and the key,
// and between rounds the key is bumped by the Weyl constants 0x9E3779B9 and 0xBB67AE85. Any
// counter can be computed on its own, so a stream is split among threads by counter ranges and
// every thread count gives the same bits.
//
// Counter words are little-endian: word 0 is the least significant (Skip carries 0 -> 3).
//
// Seeding (TensorFlow's GuardedPhiloxRandom layout: seed keys the bijection, seed2 picks the
// high half of the counter):
//   - seed == 0 and seed2 == 0: nondeterministic; key and counter come from std::random_device.
//   - otherwise: key = {low 32 bits of seed, high 32 bits of seed}; counter = {0, 0, low 32 bits
//     of seed2, high 32 bits of seed2}. Distinct (seed, seed2) pairs give distinct streams; two
//     ops that differ only in seed2 start 2^64 counters apart.
// Kernels keep one GuardedPhilox per kernel instance; each Compute reserves a counter range
// (256 counters per output element, as TF) under a mutex, so two runs of the same op give
// different values, and a fresh process with the same seeds repeats the same sequence.
//
// Distributions (TF's definitions, random_distributions.h):
//   Uniform float [0,1): 23 random mantissa bits under exponent 127, minus 1 (one word).
//   Uniform double [0,1): 52 bits (20 from word 0, 32 from word 1) under exponent 1023, minus 1.
//   Uniform half / bfloat16 [0,1): 10 / 7 low bits of one word, scaled by 2^-10 / 2^-7 (exactly
//     the value TF's "set exponent bits, subtract 1" gives).
//   Normal: Box-Muller on two uniforms (u1 clamped below at 1e-7): r = sqrt(-2 ln u1),
//     theta = 2 pi u2, outputs (r sin theta, r cos theta). Float uses two words per pair, double
//     four; half/bfloat16 are float results rounded.
//   Truncated normal: Box-Muller pairs, keeping values with |x| < 2 in order, drawing new pairs
//     until enough are kept.
//   Uniform int in [lo, hi): lo + (bits mod (hi - lo)), with 32 bits for int32 and 64 bits (word
//     0 low, word 1 high) for int64; (hi - lo) is computed unsigned so the full range works.
//     Rejection-free, so slightly biased: with k bits and range r, every value has probability
//     floor(2^k / r) / 2^k or ceil(2^k / r) / 2^k, a relative bias of at most r / 2^k
//     (< 2.4e-7 for an int32 range of 1000, at most 1 for r near 2^k).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "tensorflux/core/types.h"

namespace tensorflux {
namespace random {

class Philox4x32 {
 public:
  using Counter = std::array<uint32_t, 4>;
  using Key = std::array<uint32_t, 2>;
  using Result = std::array<uint32_t, 4>;

  static constexpr int kResultElementCount = 4;
  static constexpr int kRounds = 10;
  static constexpr uint32_t kMultiplier0 = 0xD2511F53u;
  static constexpr uint32_t kMultiplier1 = 0xCD9E8D57u;
  static constexpr uint32_t kWeyl0 = 0x9E3779B9u;
  static constexpr uint32_t kWeyl1 = 0xBB67AE85u;

  // Counter 0, key 0.
  Philox4x32() = default;
  Philox4x32(const Counter& counter, const Key& key) : counter_(counter), key_(key) {}
  // TF's seeding (see the header comment); seeds are taken as their 64-bit two's complement.
  static Philox4x32 FromSeeds(uint64_t seed, uint64_t seed2);

  // The keyed bijection: Philox4x32-10 of `counter` under `key`.
  static Result Compute(Counter counter, Key key) {
    for (int round = 0; round < kRounds; ++round) {
      if (round > 0) {
        key[0] += kWeyl0;
        key[1] += kWeyl1;
      }
      const uint64_t p0 = uint64_t{kMultiplier0} * counter[0];
      const uint64_t p1 = uint64_t{kMultiplier1} * counter[2];
      counter = {static_cast<uint32_t>(p1 >> 32) ^ counter[1] ^ key[0],
                 static_cast<uint32_t>(p1),
                 static_cast<uint32_t>(p0 >> 32) ^ counter[3] ^ key[1],
                 static_cast<uint32_t>(p0)};
    }
    return counter;
  }

  // The output at the current counter; then advances the counter by one.
  Result operator()() {
    const Result r = Compute(counter_, key_);
    Skip(1);
    return r;
  }

  // Advances the 128-bit counter by n (mod 2^128), as n calls of operator() would.
  void Skip(uint64_t n) {
    uint64_t lo = (uint64_t{counter_[1]} << 32) | counter_[0];
    const uint64_t sum = lo + n;
    counter_[0] = static_cast<uint32_t>(sum);
    counter_[1] = static_cast<uint32_t>(sum >> 32);
    if (sum < lo) {  // carry into the high 64 bits
      if (++counter_[2] == 0) ++counter_[3];
    }
  }

  const Counter& counter() const { return counter_; }
  const Key& key() const { return key_; }

 private:
  Counter counter_{};
  Key key_{};
};

// The words of a Philox stream one at a time, in counter order (word 0 of a counter first).
class PhiloxWordStream {
 public:
  explicit PhiloxWordStream(const Philox4x32& gen) : gen_(gen) {}
  uint32_t Next32() {
    if (used_ == Philox4x32::kResultElementCount) {
      buf_ = gen_();
      used_ = 0;
    }
    return buf_[used_++];
  }
  // Two words, the first one the low half.
  uint64_t Next64() {
    const uint64_t lo = Next32();
    return lo | (uint64_t{Next32()} << 32);
  }

 private:
  Philox4x32 gen_;
  Philox4x32::Result buf_{};
  int used_ = Philox4x32::kResultElementCount;
};

// A Philox stream shared by the Compute calls of one kernel (TF's GuardedPhiloxRandom).
// Thread-safe.
class GuardedPhilox {
 public:
  // seed == seed2 == 0: a nondeterministic stream (std::random_device); otherwise FromSeeds.
  void Init(int64_t seed, int64_t seed2);
  // The generator at the start of a fresh range of `counters` counters; the shared counter moves
  // past it. The caller draws from the returned copy without a lock.
  Philox4x32 Reserve(uint64_t counters);
  // Reserve(num_outputs * multiplier), saturating instead of overflowing (TF reserves 256
  // counters per output).
  Philox4x32 ReserveForOutputs(uint64_t num_outputs, uint64_t multiplier = 256);

 private:
  std::mutex mu_;
  Philox4x32 gen_;
};

// ---------------------------------------------------------------- distributions

// [0, 1) from the low 23 bits of x: exponent 127 with those bits as mantissa is in [1, 2);
// subtracting 1 is exact.
inline float Uint32ToFloat(uint32_t x) {
  const uint32_t bits = (127u << 23) | (x & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
}

// [0, 1) from 52 bits: the low 20 bits of x0 (high mantissa) and all of x1 (low mantissa).
inline double Uint64ToDouble(uint32_t x0, uint32_t x1) {
  const uint64_t bits =
      (uint64_t{1023} << 52) | (uint64_t{x0 & 0xfffffu} << 32) | uint64_t{x1};
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d - 1.0;
}

// [0, 1) with 10 (half) or 7 (bfloat16) random bits: m * 2^-10 and m * 2^-7 are exact in both.
inline Half Uint32ToHalf(uint32_t x) { return Half(static_cast<float>(x & 0x3ffu) * 0x1p-10f); }
inline BFloat16 Uint32ToBFloat16(uint32_t x) {
  return BFloat16(static_cast<float>(x & 0x7fu) * 0x1p-7f);
}

// Two standard normals from two words (float Box-Muller, as TF's BoxMullerFloat).
inline void BoxMullerFloat(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  constexpr float kEpsilon = 1.0e-7f;
  float u1 = Uint32ToFloat(x0);
  if (u1 < kEpsilon) u1 = kEpsilon;
  const float theta = static_cast<float>(2.0 * M_PI * Uint32ToFloat(x1));
  const float r = std::sqrt(-2.0f * std::log(u1));
  *f0 = std::sin(theta) * r;
  *f1 = std::cos(theta) * r;
}

// Two standard normals from four words (double Box-Muller).
inline void BoxMullerDouble(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double* d0,
                            double* d1) {
  constexpr double kEpsilon = 1.0e-7;
  double u1 = Uint64ToDouble(x0, x1);
  if (u1 < kEpsilon) u1 = kEpsilon;
  const double theta = 2.0 * M_PI * Uint64ToDouble(x2, x3);
  const double r = std::sqrt(-2.0 * std::log(u1));
  *d0 = std::sin(theta) * r;
  *d1 = std::cos(theta) * r;
}

// lo + bits mod range, computed without signed overflow; range = (unsigned)hi - (unsigned)lo > 0.
inline int32_t UniformInt32(uint32_t bits, int32_t lo, uint32_t range) {
  return static_cast<int32_t>(static_cast<uint32_t>(lo) + bits % range);
}
inline int64_t UniformInt64(uint64_t bits, int64_t lo, uint64_t range) {
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + bits % range);
}

// Truncated normal threshold (in standard deviations): values with |x| >= 2 are redrawn.
inline constexpr double kTruncateValue = 2.0;

}  // namespace random
}  // namespace tensorflux
