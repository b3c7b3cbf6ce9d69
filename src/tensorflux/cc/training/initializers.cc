#include "tensorflux/cc/training/initializers.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensorflux/cc/const_op.h"
#include "tensorflux/cc/ops/ops.h"

namespace tensorflux::training {
namespace {

Output ShapeConst(const Scope& scope, const TensorShape& shape) {
  std::vector<int64_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
  Tensor t(DT_INT64, TensorShape({static_cast<int64_t>(dims.size())}));
  std::copy(dims.begin(), dims.end(), t.data<int64_t>());
  return ops::Const(scope.WithOpName("shape"), Input::Initializer(t));
}

// mean + stddev * unit, in the variable's dtype.
Output Affine(const Scope& scope, const Output& unit, double mean, double scale, DataType dtype) {
  Output scaled = ops::Mul(scope, unit, ops::Const(scope, scale, dtype));
  if (mean == 0.0) return scaled;
  return ops::AddV2(scope, scaled, ops::Const(scope, mean, dtype));
}

Initializer Normal(double mean, double stddev, int64_t seed, bool truncated) {
  return [=](const Scope& s, const TensorShape& shape, DataType dtype) -> Output {
    const Scope scope = s.NewSubScope(truncated ? "truncated_normal" : "random_normal");
    Output unit = truncated
        ? Output(ops::TruncatedNormal(scope, ShapeConst(scope, shape), dtype,
                                      OpSeedAttrs<ops::TruncatedNormal>(seed)))
        : Output(ops::RandomStandardNormal(scope, ShapeConst(scope, shape), dtype,
                                           OpSeedAttrs<ops::RandomStandardNormal>(seed)));
    return Affine(scope, unit, mean, stddev, dtype);
  };
}

}  // namespace

Fans ComputeFans(const TensorShape& shape) {
  const int rank = shape.dims();
  if (rank == 0) return {1, 1};
  if (rank == 1) return {static_cast<double>(shape.dim_size(0)),
                         static_cast<double>(shape.dim_size(0))};
  double receptive = 1;
  for (int d = 0; d < rank - 2; ++d) receptive *= static_cast<double>(shape.dim_size(d));
  return {static_cast<double>(shape.dim_size(rank - 2)) * receptive,
          static_cast<double>(shape.dim_size(rank - 1)) * receptive};
}

Initializer Zeros() { return Constant(0.0); }
Initializer Ones() { return Constant(1.0); }

Initializer Constant(double value) {
  return [=](const Scope& scope, const TensorShape& shape, DataType dtype) -> Output {
    return ops::Fill(scope.WithOpName("initial_value"), ShapeConst(scope, shape),
                     ops::Const(scope, value, dtype));
  };
}

Initializer RandomNormal(double mean, double stddev, int64_t seed) {
  return Normal(mean, stddev, seed, /*truncated=*/false);
}
Initializer TruncatedNormal(double mean, double stddev, int64_t seed) {
  return Normal(mean, stddev, seed, /*truncated=*/true);
}

Initializer RandomUniform(double minval, double maxval, int64_t seed) {
  return [=](const Scope& s, const TensorShape& shape, DataType dtype) -> Output {
    const Scope scope = s.NewSubScope("random_uniform");
    Output unit = ops::RandomUniform(scope, ShapeConst(scope, shape), dtype,
                                     OpSeedAttrs<ops::RandomUniform>(seed));
    return Affine(scope, unit, minval, maxval - minval, dtype);
  };
}

Initializer VarianceScaling(double scale, FanMode mode, Distribution distribution,
                            int64_t seed) {
  return [=](const Scope& scope, const TensorShape& shape, DataType dtype) -> Output {
    const Fans f = ComputeFans(shape);
    const double n = mode == FanMode::kFanIn    ? f.fan_in
                     : mode == FanMode::kFanOut ? f.fan_out
                                                : (f.fan_in + f.fan_out) / 2;
    const double v = scale / std::max(1.0, n);
    switch (distribution) {
      case Distribution::kTruncatedNormal:
        return TruncatedNormal(0.0, std::sqrt(v) / 0.87962566103423978, seed)(scope, shape, dtype);
      case Distribution::kUntruncatedNormal:
        return RandomNormal(0.0, std::sqrt(v), seed)(scope, shape, dtype);
      case Distribution::kUniform:
      default: {
        const double limit = std::sqrt(3.0 * v);
        return RandomUniform(-limit, limit, seed)(scope, shape, dtype);
      }
    }
  };
}

Initializer GlorotUniform(int64_t seed) {
  return VarianceScaling(1.0, FanMode::kFanAvg, Distribution::kUniform, seed);
}
Initializer GlorotNormal(int64_t seed) {
  return VarianceScaling(1.0, FanMode::kFanAvg, Distribution::kTruncatedNormal, seed);
}
Initializer HeUniform(int64_t seed) {
  return VarianceScaling(2.0, FanMode::kFanIn, Distribution::kUniform, seed);
}
Initializer HeNormal(int64_t seed) {
  return VarianceScaling(2.0, FanMode::kFanIn, Distribution::kTruncatedNormal, seed);
}
Initializer LecunUniform(int64_t seed) {
  return VarianceScaling(1.0, FanMode::kFanIn, Distribution::kUniform, seed);
}
Initializer LecunNormal(int64_t seed) {
  return VarianceScaling(1.0, FanMode::kFanIn, Distribution::kTruncatedNormal, seed);
}

}  // namespace tensorflux::training
