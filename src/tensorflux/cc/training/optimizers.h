// Optimizers for the C++ training API (TF 1.x's tf.train.Optimizer family) over resource
// variables. Each apply is one of TF's ResourceApply* ops, so the update runs in the kernel under
// the variable's lock:
//
//   training::AdamOptimizer adam(1e-3);
//   Operation train;
//   TX_CHECK_OK(adam.Minimize(root, loss, {}, &train));   // all trainable variables
//   ... session.Run({}, {}, {training::GlobalVariablesInitializer(root)}, nullptr);  // after!
//   ... session.Run(feeds, {loss}, {train}, &out);
//
// Slot variables (Adam's m and v, momentum accumulators ...) are non-trainable variables named as
// TF 1.x and the Python API name them ("<var>/Adam", "<var>/Adam_1"; Adam's non-slot
// "beta1_power", "beta2_power"), created by the first ApplyGradients/Minimize (slots on their
// variable's requested device, whatever the update scope's), so call
// GlobalVariablesInitializer after building the train op, as in TF. Updates follow the TF ops'
// formulas (kernels/cpu optimizer kernels; TF's training_ops.cc semantics).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tensorflux/cc/ops.h"
#include "tensorflux/cc/scope.h"
#include "tensorflux/cc/training/variables.h"
#include "tensorflux/core/status.h"

namespace tensorflux::training {

// A gradient (empty Output: no gradient) and the variable it updates.
using GradAndVar = std::pair<Output, Variable>;

// Rewrites gradients between ComputeGradients and ApplyGradients (clipping, noise, ...); see
// ClipGradientsByGlobalNorm in clip_ops.h.
using GradTransform = std::function<Status(const Scope&, std::vector<GradAndVar>*)>;

struct MinimizeOptions {
  // Variables to update; empty: TrainableVariables(scope).
  std::vector<Variable> var_list;
  // Incremented by 1 after the updates (an int64 or int32 variable, e.g. from GlobalStep()).
  const Variable* global_step = nullptr;
  // Runs between ComputeGradients and ApplyGradients (gradient clipping, noise, ...); may
  // replace the gradients.
  GradTransform grad_transform;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // (d loss / d var, var) for each variable, through the variables' ReadVariableOps. Gradients
  // of variables the loss does not depend on are empty Outputs. INVALID_ARGUMENT for an empty
  // loss or var_list; NOT_FOUND when an op on the path has no gradient.
  Status ComputeGradients(const Scope& scope, const Output& loss,
                          const std::vector<Variable>& var_list,
                          std::vector<GradAndVar>* grads_and_vars);
  // One NoOp (named after the optimizer) that runs every update for the non-empty gradients and
  // then, when global_step is given, adds 1 to it. INVALID_ARGUMENT when every gradient is empty
  // ("No gradients provided for any variable", as TF) or a variable's shape is not fully known.
  Status ApplyGradients(const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
                        const Variable* global_step, Operation* train_op);
  // ComputeGradients + options.grad_transform + ApplyGradients.
  Status Minimize(const Scope& scope, const Output& loss, const MinimizeOptions& options,
                  Operation* train_op);

  // The slot variable `slot` of `var` ("m", "v", "momentum", "accumulator", "ms", "mg"), or an
  // invalid Variable when it has none.
  Variable GetSlot(const Variable& var, const std::string& slot) const;
  const std::string& name() const { return name_; }

 protected:
  // The learning rate: a constant, or a tensor (a schedule on the global step).
  Optimizer(std::string name, double learning_rate);
  Optimizer(std::string name, Output learning_rate);

  // Adds the update of `var` by `grad` (scope: "<optimizer>/update_<var>").
  virtual Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) = 0;
  // Runs once per ApplyGradients after the updates (Adam advances beta powers); returns the op
  // the train op depends on. Default: NoOp depending on `updates`.
  virtual Operation Finish(const Scope& scope, const std::vector<Operation>& updates);
  // Creates non-slot state once per graph (Adam's beta powers), before any ApplyDense; `dtype`
  // is the first updated variable's.
  virtual void Prepare(const Scope& scope, DataType dtype) {}
  // Forgets non-slot state when the optimizer is used for another graph.
  virtual void ResetState() {}

  // A zero-initialized (or `initial_value`-filled) slot of `var`'s shape and dtype.
  Variable Slot(const Scope& scope, const Variable& var, const std::string& slot,
                double initial_value = 0.0);
  // The learning rate as a tensor of `dtype` (cast when a tensor of another dtype was given).
  Output LearningRate(const Scope& scope, DataType dtype) const;
  // A scalar constant of `dtype`.
  static Output Scalar(const Scope& scope, double v, DataType dtype);

 private:
  std::string name_;
  double lr_value_ = 0.0;
  Output lr_tensor_;
  std::map<std::pair<std::string, std::string>, Variable> slots_;
  const Graph* graph_ = nullptr;  // the graph slots_ belong to
};

// var -= lr * grad (ResourceApplyGradientDescent).
class GradientDescentOptimizer : public Optimizer {
 public:
  explicit GradientDescentOptimizer(double lr) : Optimizer("GradientDescent", lr) {}
  explicit GradientDescentOptimizer(Output lr) : Optimizer("GradientDescent", lr) {}

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;
};

// accum = momentum * accum + grad; var -= lr * accum, or with Nesterov
// var -= lr * (grad + momentum * accum) (ResourceApplyMomentum).
class MomentumOptimizer : public Optimizer {
 public:
  MomentumOptimizer(double lr, double momentum, bool use_nesterov = false)
      : Optimizer("Momentum", lr), momentum_(momentum), nesterov_(use_nesterov) {}
  MomentumOptimizer(Output lr, double momentum, bool use_nesterov = false)
      : Optimizer("Momentum", lr), momentum_(momentum), nesterov_(use_nesterov) {}

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;

 private:
  double momentum_;
  bool nesterov_;
};

// Kingma & Ba 2015 with TF 1.x's bias correction through beta1_power / beta2_power variables:
// lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t); m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
// var -= lr_t * m / (sqrt(v) + epsilon) (ResourceApplyAdam).
class AdamOptimizer : public Optimizer {
 public:
  explicit AdamOptimizer(double lr = 0.001, double beta1 = 0.9, double beta2 = 0.999,
                         double epsilon = 1e-8)
      : AdamOptimizer("Adam", lr, beta1, beta2, epsilon) {}
  AdamOptimizer(Output lr, double beta1 = 0.9, double beta2 = 0.999, double epsilon = 1e-8)
      : Optimizer("Adam", lr), beta1_(beta1), beta2_(beta2), epsilon_(epsilon) {}

 protected:
  AdamOptimizer(std::string name, double lr, double beta1, double beta2, double epsilon)
      : Optimizer(std::move(name), lr), beta1_(beta1), beta2_(beta2), epsilon_(epsilon) {}
  AdamOptimizer(std::string name, Output lr, double beta1, double beta2, double epsilon)
      : Optimizer(std::move(name), lr), beta1_(beta1), beta2_(beta2), epsilon_(epsilon) {}
  void Prepare(const Scope& scope, DataType dtype) override;
  void ResetState() override {
    beta1_power_ = Variable();
    beta2_power_ = Variable();
  }
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;
  Operation Finish(const Scope& scope, const std::vector<Operation>& updates) override;

 private:
  double beta1_, beta2_, epsilon_;
  Variable beta1_power_, beta2_power_;
};

// Adam with decoupled weight decay (Loshchilov & Hutter 2019, as Keras' AdamW orders it):
// var -= lr * weight_decay * var, then the Adam update.
class AdamWOptimizer : public AdamOptimizer {
 public:
  AdamWOptimizer(double weight_decay, double lr = 0.001, double beta1 = 0.9, double beta2 = 0.999,
                 double epsilon = 1e-8)
      : AdamOptimizer("AdamW", lr, beta1, beta2, epsilon), weight_decay_(weight_decay) {}
  AdamWOptimizer(double weight_decay, Output lr, double beta1 = 0.9, double beta2 = 0.999,
                 double epsilon = 1e-8)
      : AdamOptimizer("AdamW", lr, beta1, beta2, epsilon), weight_decay_(weight_decay) {}

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;

 private:
  double weight_decay_;
};

// TF 1.x RMSProp: ms = decay ms + (1-decay) g^2 (ms starts at 1); mom = momentum mom +
// lr g / sqrt(ms + epsilon); var -= mom (ResourceApplyRMSProp).
class RMSPropOptimizer : public Optimizer {
 public:
  RMSPropOptimizer(double lr, double decay = 0.9, double momentum = 0.0, double epsilon = 1e-10)
      : Optimizer("RMSProp", lr), decay_(decay), momentum_(momentum), epsilon_(epsilon) {}

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;

 private:
  double decay_, momentum_, epsilon_;
};

// accum += g^2 (starting at initial_accumulator_value, which must be > 0: INVALID_ARGUMENT
// otherwise); var -= lr g / sqrt(accum) (ResourceApplyAdagrad).
class AdagradOptimizer : public Optimizer {
 public:
  explicit AdagradOptimizer(double lr, double initial_accumulator_value = 0.1)
      : Optimizer("Adagrad", lr), initial_(initial_accumulator_value) {}

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;

 private:
  double initial_;
};

// The int64 scalar variable "global_step" (non-trainable, zero-initialized), created on first use
// and returned by later calls on the same graph (tf.train.get_or_create_global_step).
Variable GetOrCreateGlobalStep(const Scope& scope);

}  // namespace tensorflux::training
