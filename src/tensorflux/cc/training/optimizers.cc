#include "tensorflux/cc/training/optimizers.h"

#include "tensorflux/cc/const_op.h"
#include "tensorflux/cc/gradients.h"
#include "tensorflux/cc/ops/ops.h"
#include "tensorflux/cc/training/initializers.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux::training {

Optimizer::Optimizer(std::string name, double learning_rate)
    : name_(std::move(name)), lr_value_(learning_rate) {}
Optimizer::Optimizer(std::string name, Output learning_rate)
    : name_(std::move(name)), lr_tensor_(std::move(learning_rate)) {}

Output Optimizer::Scalar(const Scope& scope, double v, DataType dtype) {
  return ops::Const(scope, v, dtype);
}

Output Optimizer::LearningRate(const Scope& scope, DataType dtype) const {
  if (lr_tensor_.node() == nullptr) return Scalar(scope.WithOpName("learning_rate"), lr_value_, dtype);
  if (lr_tensor_.type() == dtype) return lr_tensor_;
  return ops::Cast(scope.WithOpName("learning_rate"), lr_tensor_, dtype);
}

Variable Optimizer::Slot(const Scope& scope, const Variable& var, const std::string& slot,
                         double initial_value) {
  auto key = std::make_pair(var.name(), slot);
  auto it = slots_.find(key);
  if (it != slots_.end()) return it->second;
  StatusOr<TensorShape> known = var.shape().AsTensorShape();
  if (!known.ok()) {
    scope.UpdateStatus(errors::InvalidArgument("Optimizer ", name_, ": variable ", var.name(),
                                               " has shape ", var.shape().DebugString(),
                                               "; slots need a fully defined shape"));
    return Variable();
  }
  // Slots live beside their variable, outside any control dependencies of the update scope and
  // on the variable's device (TF's colocate_vars_with; not the update scope's), named as TF 1.x
  // names them: "<var>/<optimizer>", then "<var>/<optimizer>_1", ... in creation order (Adam's
  // m and v are "w/Adam" and "w/Adam_1"), so checkpoints match the Python API's.
  const Scope beside = scope.NewSubScopeExact(var.name())
                           .WithNoControlDependencies()
                           .WithDevice(var.handle().node()->requested_device());
  const std::string name = beside.GetUniqueNameForOp(name_);
  Output init = Constant(initial_value)(beside.NewSubScopeExact(name + "/Initializer"), *known,
                                        var.dtype());
  Variable v(beside.WithExactName(name), init, VariableOptions{/*trainable=*/false, true});
  slots_[key] = v;
  return v;
}

Variable Optimizer::GetSlot(const Variable& var, const std::string& slot) const {
  auto it = slots_.find(std::make_pair(var.name(), slot));
  return it == slots_.end() ? Variable() : it->second;
}

Status Optimizer::ComputeGradients(const Scope& scope, const Output& loss,
                                   const std::vector<Variable>& var_list,
                                   std::vector<GradAndVar>* grads_and_vars) {
  TX_RETURN_IF_ERROR(scope.status());
  if (loss.node() == nullptr) return errors::InvalidArgument("ComputeGradients: empty loss");
  if (var_list.empty()) return errors::InvalidArgument("ComputeGradients: no variables to optimize");
  std::vector<Output> handles;
  for (const Variable& v : var_list) handles.push_back(v.handle());
  std::vector<Output> grads;
  TX_RETURN_IF_ERROR(AddSymbolicGradients(scope, {loss}, handles, &grads));
  grads_and_vars->clear();
  for (size_t i = 0; i < var_list.size(); ++i) grads_and_vars->push_back({grads[i], var_list[i]});
  return OkStatus();
}

Status Optimizer::ApplyGradients(const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
                                 const Variable* global_step, Operation* train_op) {
  TX_RETURN_IF_ERROR(scope.status());
  if (graph_ != scope.graph()) {  // an optimizer reused for another graph starts afresh
    graph_ = scope.graph();
    slots_.clear();
    ResetState();
  }
  bool any = false;
  for (const auto& [g, v] : grads_and_vars) any = any || g.node() != nullptr;
  if (!any) {
    std::string names;
    for (const auto& gv : grads_and_vars) names += (names.empty() ? "" : ", ") + gv.second.name();
    return errors::InvalidArgument("No gradients provided for any variable: [", names, "]");
  }
  for (const auto& [g, v] : grads_and_vars) {
    if (g.node() != nullptr) {
      Prepare(scope, v.dtype());
      break;
    }
  }
  const Scope opt = scope.NewSubScope(name_);
  std::vector<Operation> updates;
  for (const auto& [g, v] : grads_and_vars) {
    if (g.node() == nullptr) continue;
    const Scope update = opt.NewSubScope("update_" + v.name());
    Operation op = ApplyDense(update, g, v);
    TX_RETURN_IF_ERROR(scope.status());
    updates.push_back(op);
  }
  Operation finish = Finish(opt, updates);
  if (global_step != nullptr && global_step->valid()) {
    const Scope after = scope.WithControlDependencies(absl::Span<const Operation>(&finish, 1));
    Operation inc = global_step->AssignAdd(after.WithOpName(name_ + "/increment_global_step"),
                                           Scalar(after, 1, global_step->dtype()));
    *train_op = inc;
  } else {
    *train_op = finish;
  }
  return scope.status();
}

Status Optimizer::Minimize(const Scope& scope, const Output& loss, const MinimizeOptions& options,
                           Operation* train_op) {
  std::vector<Variable> vars = options.var_list.empty() ? TrainableVariables(scope)
                                                        : options.var_list;
  std::vector<GradAndVar> gv;
  TX_RETURN_IF_ERROR(ComputeGradients(scope, loss, vars, &gv));
  if (options.grad_transform) TX_RETURN_IF_ERROR(options.grad_transform(scope, &gv));
  return ApplyGradients(scope, gv, options.global_step, train_op);
}

Operation Optimizer::Finish(const Scope& scope, const std::vector<Operation>& updates) {
  return ops::NoOp(scope.WithOpName("update").WithControlDependencies(updates)).operation;
}

// ---------------------------------------------------------------- the optimizers

Operation GradientDescentOptimizer::ApplyDense(const Scope& s, const Output& grad,
                                               const Variable& var) {
  return ops::ResourceApplyGradientDescent(s, var.handle(), LearningRate(s, var.dtype()), grad)
      .operation;
}

Operation MomentumOptimizer::ApplyDense(const Scope& s, const Output& grad, const Variable& var) {
  Variable accum = Slot(s, var, "momentum");
  return ops::ResourceApplyMomentum(s, var.handle(), accum.handle(), LearningRate(s, var.dtype()),
                                    grad, Scalar(s, momentum_, var.dtype()),
                                    ops::ResourceApplyMomentum::UseNesterov(nesterov_))
      .operation;
}

void AdamOptimizer::Prepare(const Scope& scope, DataType dtype) {
  if (beta1_power_.valid()) return;
  // TF 1.x's non-slot variables "beta1_power" / "beta2_power", in the first variable's dtype.
  const Scope s = scope.WithNoControlDependencies();
  beta1_power_ = Variable(s.WithOpName("beta1_power"), Scalar(s, beta1_, dtype),
                          VariableOptions{false, true});
  beta2_power_ = Variable(s.WithOpName("beta2_power"), Scalar(s, beta2_, dtype),
                          VariableOptions{false, true});
}

Operation AdamOptimizer::ApplyDense(const Scope& s, const Output& grad, const Variable& var) {
  Variable m = Slot(s, var, "m");
  Variable v = Slot(s, var, "v");
  const DataType dt = var.dtype();
  auto power = [&](const Variable& p) -> Output {
    Output value = p.Read(s);
    return p.dtype() == dt ? value : Output(ops::Cast(s, value, dt));
  };
  return ops::ResourceApplyAdam(s, var.handle(), m.handle(), v.handle(), power(beta1_power_),
                                power(beta2_power_), LearningRate(s, dt), Scalar(s, beta1_, dt),
                                Scalar(s, beta2_, dt), Scalar(s, epsilon_, dt), grad)
      .operation;
}

Operation AdamOptimizer::Finish(const Scope& scope, const std::vector<Operation>& updates) {
  // The powers advance after every update has read them (TF 1.x's _finish).
  const Scope after = scope.WithControlDependencies(updates);
  const DataType dt = beta1_power_.dtype();
  Operation b1 = beta1_power_.Assign(
      after.WithOpName("update_beta1_power"),
      ops::Mul(after, beta1_power_.Read(after), Scalar(after, beta1_, dt)));
  Operation b2 = beta2_power_.Assign(
      after.WithOpName("update_beta2_power"),
      ops::Mul(after, beta2_power_.Read(after), Scalar(after, beta2_, dt)));
  std::vector<Operation> all = updates;
  all.push_back(b1);
  all.push_back(b2);
  return ops::NoOp(scope.WithOpName("update").WithControlDependencies(all)).operation;
}

Operation AdamWOptimizer::ApplyDense(const Scope& s, const Output& grad, const Variable& var) {
  const DataType dt = var.dtype();
  // After the gradient (and so every forward read of var), before the Adam update.
  const Scope after_grad = s.WithControlDependencies(grad);
  Output decay = ops::Mul(after_grad,
                          ops::Mul(after_grad, LearningRate(after_grad, dt),
                                   Scalar(after_grad, weight_decay_, dt)),
                          var.Read(after_grad));
  Operation decayed = var.AssignSub(after_grad.WithOpName("decay"), decay);
  return AdamOptimizer::ApplyDense(
      s.WithControlDependencies(absl::Span<const Operation>(&decayed, 1)), grad, var);
}

Operation RMSPropOptimizer::ApplyDense(const Scope& s, const Output& grad, const Variable& var) {
  Variable ms = Slot(s, var, "rms", 1.0);
  Variable mom = Slot(s, var, "momentum");
  const DataType dt = var.dtype();
  return ops::ResourceApplyRMSProp(s, var.handle(), ms.handle(), mom.handle(), LearningRate(s, dt),
                                   Scalar(s, decay_, dt), Scalar(s, momentum_, dt),
                                   Scalar(s, epsilon_, dt), grad)
      .operation;
}

Operation AdagradOptimizer::ApplyDense(const Scope& s, const Output& grad, const Variable& var) {
  if (!(initial_ > 0)) {
    s.UpdateStatus(errors::InvalidArgument(
        "AdagradOptimizer: initial_accumulator_value must be positive, got ", initial_));
    return Operation();
  }
  Variable accum = Slot(s, var, "accumulator", initial_);
  return ops::ResourceApplyAdagrad(s, var.handle(), accum.handle(), LearningRate(s, var.dtype()),
                                   grad)
      .operation;
}

Variable GetOrCreateGlobalStep(const Scope& scope) {
  for (const Variable& v : GlobalVariables(scope)) {
    if (v.name() == "global_step") return v;
  }
  const Scope root = scope.NewSubScopeExact("").WithNoControlDependencies();
  return Variable(root.WithOpName("global_step"), Input::Initializer(Tensor::Scalar<int64_t>(0)),
                  VariableOptions{false, true});
}

}  // namespace tensorflux::training
