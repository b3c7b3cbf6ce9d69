#include "tensorflux/core/philox.h"

#include <limits>
#include <random>

namespace tensorflux {
namespace random {

Philox4x32 Philox4x32::FromSeeds(uint64_t seed, uint64_t seed2) {
  const Key key = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  const Counter counter = {0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)};
  return Philox4x32(counter, key);
}

void GuardedPhilox::Init(int64_t seed, int64_t seed2) {
  uint64_t s = static_cast<uint64_t>(seed);
  uint64_t s2 = static_cast<uint64_t>(seed2);
  if (s == 0 && s2 == 0) {
    std::random_device rd;
    auto next64 = [&rd]() { return (uint64_t{rd()} << 32) | uint64_t{rd()}; };
    s = next64();
    s2 = next64();
  }
  std::lock_guard<std::mutex> lock(mu_);
  gen_ = Philox4x32::FromSeeds(s, s2);
}

Philox4x32 GuardedPhilox::Reserve(uint64_t counters) {
  std::lock_guard<std::mutex> lock(mu_);
  Philox4x32 local = gen_;
  gen_.Skip(counters);
  return local;
}

Philox4x32 GuardedPhilox::ReserveForOutputs(uint64_t num_outputs, uint64_t multiplier) {
  uint64_t counters = 0;
  if (__builtin_mul_overflow(num_outputs, multiplier, &counters)) {
    counters = std::numeric_limits<uint64_t>::max();
  }
  return Reserve(counters);
}

}  // namespace random
}  // namespace tensorflux
