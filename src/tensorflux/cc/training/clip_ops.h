// Gradient clipping by global norm for the C++ training API: TF's tf.global_norm and
// tf.clip_by_global_norm (Pascanu et al. 2013), with the Python API's conventions
// (python/tensorflux/ops/clip_ops.py):
//
//   training::MinimizeOptions options;
//   Output norm;  // the norm before clipping, to log
//   options.grad_transform = training::ClipGradientsByGlobalNorm(5.0, &norm);
//   adam.Minimize(root, loss, options, &train);
//
// Tensors of the list may be empty Outputs (no gradient): they are skipped by the norm and passed
// through as empty. All non-empty tensors must share one floating dtype (float, double, half or
// bfloat16). Errors are INVALID_ARGUMENT, returned and recorded in the scope.
#pragma once

#include <vector>

#include "tensorflux/cc/ops.h"
#include "tensorflux/cc/scope.h"
#include "tensorflux/cc/training/optimizers.h"
#include "tensorflux/core/status.h"

namespace tensorflux::training {

// sqrt(sum over i of sum(t_i^2)) (through L2Loss, which halves: sqrt(2 * sum L2Loss(t_i))), a
// scalar of the tensors' dtype. INVALID_ARGUMENT for a list with no tensor or mixed dtypes.
StatusOr<Output> GlobalNorm(const Scope& scope, const std::vector<Output>& t_list);

// clipped[i] = t_list[i] * clip_norm / max(global_norm, clip_norm), global_norm being the norm
// before clipping; an Inf or NaN norm makes every clipped tensor NaN (as TF). clip_norm > 0
// (INVALID_ARGUMENT otherwise). global_norm may be null.
Status ClipByGlobalNorm(const Scope& scope, const std::vector<Output>& t_list, double clip_norm,
                        std::vector<Output>* clipped, Output* global_norm);

// A MinimizeOptions::grad_transform that clips the gradients by their global norm; when
// `global_norm` is non-null it receives the norm before clipping once Minimize has run.
GradTransform ClipGradientsByGlobalNorm(double clip_norm, Output* global_norm = nullptr);

}  // namespace tensorflux::training
