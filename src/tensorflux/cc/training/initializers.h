// Variable initializers for the C++ training API (TF 1.x's tf.initializers / init_ops), as
// training::Initializer factories: each returns a function that adds the nodes computing an
// initial value of a given shape and dtype.
//
// Random initializers take an op seed: a nonzero seed s gives the op TF's seeds
// (seed, seed2) = (87654321, s), the pair TF 1.x uses for an op seed without a graph seed, so the
// same program draws the same bits every run, on every worker and thread count (Philox); seed 0
// draws nondeterministically.
//
// Fans follow TF's _compute_fans: a scalar has fan_in = fan_out = 1; a vector [n] has n, n; a
// dense kernel [in, out] has in, out; a conv kernel [kh, kw, in, out] (any rank > 2) has
// in * receptive and out * receptive with receptive = product of the leading dims.
#pragma once

#include <cstdint>

#include "tensorflux/cc/training/variables.h"

namespace tensorflux::training {

// TF 1.x's graph seed for an op that has an op seed but no graph seed (random_seed.get_seed).
inline constexpr int64_t kDefaultGraphSeed = 87654321;

// The (seed, seed2) attrs of a random op wrapper (ops::RandomUniform::Attrs, ...) for op seed
// `seed`: (kDefaultGraphSeed, seed), or unset (nondeterministic) for 0.
template <typename RandomOp>
typename RandomOp::Attrs OpSeedAttrs(int64_t seed) {
  typename RandomOp::Attrs attrs;
  if (seed != 0) attrs = attrs.Seed(kDefaultGraphSeed).Seed2(seed);
  return attrs;
}

struct Fans {
  double fan_in = 1;
  double fan_out = 1;
};
Fans ComputeFans(const TensorShape& shape);

Initializer Zeros();
Initializer Ones();
// Every element `value` (converted to the variable's dtype).
Initializer Constant(double value);
Initializer RandomNormal(double mean = 0.0, double stddev = 1.0, int64_t seed = 0);
// Normal values redrawn beyond 2 standard deviations (TF's TruncatedNormal).
Initializer TruncatedNormal(double mean = 0.0, double stddev = 1.0, int64_t seed = 0);
// Uniform in [minval, maxval).
Initializer RandomUniform(double minval = -0.05, double maxval = 0.05, int64_t seed = 0);

enum class FanMode { kFanIn, kFanOut, kFanAvg };
enum class Distribution { kTruncatedNormal, kUntruncatedNormal, kUniform };

// TF's VarianceScaling: with n = fan_in, fan_out or (fan_in + fan_out) / 2 by `mode` and
// v = scale / max(1, n): truncated normal with stddev sqrt(v) / 0.87962566103423978 (the stddev
// of a unit normal truncated at 2), normal with stddev sqrt(v), or uniform in
// [-sqrt(3 v), sqrt(3 v)].
Initializer VarianceScaling(double scale = 1.0, FanMode mode = FanMode::kFanIn,
                            Distribution distribution = Distribution::kTruncatedNormal,
                            int64_t seed = 0);
// Glorot & Bengio 2010: VarianceScaling(1, fan_avg, uniform / truncated normal).
Initializer GlorotUniform(int64_t seed = 0);
Initializer GlorotNormal(int64_t seed = 0);
// He et al. 2015: VarianceScaling(2, fan_in, uniform / truncated normal).
Initializer HeUniform(int64_t seed = 0);
Initializer HeNormal(int64_t seed = 0);
// LeCun et al. 1998: VarianceScaling(1, fan_in, uniform / truncated normal).
Initializer LecunUniform(int64_t seed = 0);
Initializer LecunNormal(int64_t seed = 0);

}  // namespace tensorflux::training
