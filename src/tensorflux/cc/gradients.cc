#include "tensorflux/cc/gradients.h"

#include <string>

#include "tensorflux/gradients/gradients.h"

namespace tensorflux {
namespace {

StatusOr<std::vector<GradOutput>> ToGradOutputs(const std::vector<Output>& v, const char* what) {
  std::vector<GradOutput> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].node() == nullptr) {
      return errors::InvalidArgument("AddSymbolicGradients: ", what, "[", i,
                                     "] is an empty Output (its op failed to build)");
    }
    out.push_back(GradOutput{v[i].node(), v[i].index()});
  }
  return out;
}

}  // namespace

Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& outputs,
                            const std::vector<Output>& inputs,
                            const std::vector<Output>& grad_inputs,
                            std::vector<Output>* grad_outputs) {
  TX_RETURN_IF_ERROR(scope.status());
  if (!grad_inputs.empty() && grad_inputs.size() != outputs.size()) {
    return errors::InvalidArgument("AddSymbolicGradients: ", grad_inputs.size(),
                                   " grad_inputs for ", outputs.size(), " outputs");
  }
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> ys, ToGradOutputs(outputs, "outputs"));
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> xs, ToGradOutputs(inputs, "inputs"));
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> seeds, ToGradOutputs(grad_inputs, "grad_inputs"));
  SymbolicGradientOptions options;
  options.name = scope.GetUniqueNameForOp("gradients");
  std::vector<GradOutput> dx(xs.size());
  Status s = AddSymbolicGradients(scope.graph(), ys, xs, seeds, options, &dx);
  if (!s.ok()) {
    scope.UpdateStatus(s);
    return s;
  }
  grad_outputs->clear();
  for (const GradOutput& g : dx) {
    grad_outputs->push_back(g.valid() ? Output(g.node, g.index) : Output());
  }
  return OkStatus();
}

Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& outputs,
                            const std::vector<Output>& inputs, std::vector<Output>* grad_outputs) {
  return AddSymbolicGradients(scope, outputs, inputs, {}, grad_outputs);
}

}  // namespace tensorflux
