// Symbolic gradients for graphs built with a Scope (TF's cc/framework/gradients.h): the C++
// client's tf.gradients.
//
//   auto y = ops::Square(root, x);
//   std::vector<Output> dx;
//   TX_RETURN_IF_ERROR(AddSymbolicGradients(root, {y}, {x}, &dx));   // dx[0] = 2x
//
// The backward nodes go under the name scope "<prefix>/gradients" ("gradients_1", ... when
// taken). Semantics are the graph-level AddSymbolicGradients' (gradients/gradients.h): gradients
// of a tensor used several times are summed with AddN, broadcasting ops reduce their gradients
// to the input's shape, and an input the outputs do not depend on gets an empty Output
// (node() == nullptr, TF's NoGradient()). ReadVariableOp passes its gradient to the variable's
// handle, so a resource variable's handle may be one of `inputs`.
#pragma once

#include <vector>

#include "tensorflux/cc/ops.h"
#include "tensorflux/cc/scope.h"
#include "tensorflux/core/status.h"

namespace tensorflux {

// d(sum of outputs)/d(inputs), with grad_inputs[i] seeding outputs[i] (same dtype and shape;
// an empty list seeds every output with ones). Errors: the scope's recorded status;
// INVALID_ARGUMENT for an empty Output among outputs/inputs or a grad_inputs of the wrong length
// or dtype; NOT_FOUND for a differentiable op on the path that has no gradient function.
Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& outputs,
                            const std::vector<Output>& inputs,
                            const std::vector<Output>& grad_inputs,
                            std::vector<Output>* grad_outputs);

// The same with every output seeded by OnesLike(output).
Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& outputs,
                            const std::vector<Output>& inputs, std::vector<Output>* grad_outputs);

}  // namespace tensorflux
