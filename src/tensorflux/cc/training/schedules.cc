#include "tensorflux/cc/training/schedules.h"

#include <numbers>

#include "tensorflux/cc/ops/ops.h"

namespace tensorflux::training {
namespace {

// `step` cast to float; an empty Output (error recorded) for an empty or non-numeric step.
Output FloatStep(const Scope& scope, const Output& step, const char* fn) {
  if (!scope.ok()) return Output();
  const DataType dt = step.node() == nullptr ? DT_INVALID : step.type();
  if (dt != DT_INT32 && dt != DT_INT64 && dt != DT_FLOAT && dt != DT_DOUBLE) {
    scope.UpdateStatus(errors::InvalidArgument(
        fn, ": global_step must be an int32, int64, float or double scalar, got ",
        step.node() == nullptr ? std::string("an empty Output") : DataTypeString(dt)));
    return Output();
  }
  return dt == DT_FLOAT ? step : ops::Cast(scope, step, DT_FLOAT);
}

}  // namespace

Output CosineDecay(const Scope& scope, double learning_rate, const Output& global_step,
                   int64_t decay_steps, double alpha) {
  if (decay_steps <= 0) {
    scope.UpdateStatus(
        errors::InvalidArgument("CosineDecay: decay_steps must be > 0, got ", decay_steps));
    return Output();
  }
  const Scope s = scope.NewSubScope("CosineDecay");
  Output step = FloatStep(s, global_step, "CosineDecay");
  if (step.node() == nullptr) return Output();
  const float steps = static_cast<float>(decay_steps);
  Output fraction = ops::RealDiv(s, ops::Minimum(s, step, steps), steps);
  Output cosine = ops::Mul(
      s, 0.5f, ops::AddV2(s, 1.0f, ops::Cos(s, ops::Mul(s, fraction, std::numbers::pi_v<float>))));
  Output decayed = ops::AddV2(s, ops::Mul(s, cosine, static_cast<float>(1 - alpha)),
                              static_cast<float>(alpha));
  return ops::Mul(s, decayed, static_cast<float>(learning_rate));
}

Schedule CosineDecaySchedule(double learning_rate, int64_t decay_steps, double alpha) {
  return [=](const Scope& scope, const Output& step) {
    return CosineDecay(scope, learning_rate, step, decay_steps, alpha);
  };
}

Output LinearWarmup(const Scope& scope, const Schedule& schedule, int64_t warmup_steps,
                    const Output& global_step, double initial) {
  if (warmup_steps < 0) {
    scope.UpdateStatus(errors::InvalidArgument("LinearWarmup: warmup_steps must be >= 0, got ",
                                               warmup_steps));
    return Output();
  }
  const Scope s = scope.NewSubScope("LinearWarmup");
  Output step = FloatStep(s, global_step, "LinearWarmup");
  if (step.node() == nullptr) return Output();
  const float warmup = static_cast<float>(warmup_steps);
  Output rate = schedule(s, ops::Maximum(s, ops::Sub(s, step, warmup), 0.0f));
  if (rate.node() == nullptr) return Output();
  if (rate.type() != DT_FLOAT) rate = ops::Cast(s, rate, DT_FLOAT);
  if (warmup_steps == 0) return rate;
  // The schedule's value at step 0 is `rate` while step <= warmup_steps (the shifted step is 0).
  const float init = static_cast<float>(initial);
  Output ramp = ops::AddV2(s, ops::Mul(s, ops::Sub(s, rate, init), ops::RealDiv(s, step, warmup)),
                           init);
  return ops::SelectV2(s, ops::Less(s, step, warmup), ramp, rate);
}

}  // namespace tensorflux::training
