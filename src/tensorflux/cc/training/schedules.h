// Learning-rate schedules for the C++ training API: graph computations on the global step, the
// C++ forms of TF 1.x's tf.train.cosine_decay and of the Python API's tx.train.linear_warmup
// (python/tensorflux/training/learning_rate_decay.py; the same formulas and conventions). Each
// returns a float scalar recomputed from the step every time it runs, so an optimizer given it
// (AdamOptimizer(Output lr)) follows the schedule as training advances the step:
//
//   training::Variable step = training::GetOrCreateGlobalStep(root);
//   Output lr = training::LinearWarmup(root, training::CosineDecaySchedule(1e-3, 5000), 200,
//                                      step.Read(root));
//   training::AdamOptimizer adam(lr);
//
// global_step: an integer or floating scalar (usually the int64 global step's value). Errors
// (a non-positive decay_steps, a negative warmup_steps, an empty or non-numeric step) are
// recorded in the scope's status as INVALID_ARGUMENT and the function returns an empty Output.
#pragma once

#include <cstdint>
#include <functional>

#include "tensorflux/cc/ops.h"
#include "tensorflux/cc/scope.h"

namespace tensorflux::training {

// A schedule: the float rate at `step` (a scalar of any numeric dtype).
using Schedule = std::function<Output(const Scope& scope, const Output& step)>;

// learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) +
// alpha) (TF's cosine_decay: Loshchilov & Hutter's SGDR without restarts). decay_steps > 0.
Output CosineDecay(const Scope& scope, double learning_rate, const Output& global_step,
                   int64_t decay_steps, double alpha = 0.0);
// CosineDecay as a Schedule, to compose with LinearWarmup.
Schedule CosineDecaySchedule(double learning_rate, int64_t decay_steps, double alpha = 0.0);

// A linear warm-up in front of `schedule` (TensorFlux's, as the Python linear_warmup; TF 1.x has
// none): for step < warmup_steps the rate is initial + (target - initial) * step / warmup_steps,
// target being the schedule at step 0; from step = warmup_steps on it is the schedule at
// step - warmup_steps (the schedule's decay starts where the warm-up ends). warmup_steps == 0
// gives the schedule itself.
Output LinearWarmup(const Scope& scope, const Schedule& schedule, int64_t warmup_steps,
                    const Output& global_step, double initial = 0.0);

}  // namespace tensorflux::training
