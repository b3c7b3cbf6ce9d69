"""The optimizers (TF 1.x tf.train.*Optimizer names, arguments and defaults), each one
TF ResourceApply* op per variable. g is the gradient, lr the learning rate (a number, a Tensor such
as a schedule of tx.train.*_decay, or a callable returning one); every hyper-parameter is cast to
the variable's dtype (a Python number directly, so float64 variables do not get float32-rounded
rates as in TF1).

GradientDescentOptimizer(lr)                     var -= lr * g
MomentumOptimizer(lr, momentum, use_nesterov)    accum = momentum * accum + g;
                                                 var -= lr * accum, or with Nesterov
                                                 var -= lr * g + lr * momentum * accum
AdamOptimizer(lr=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8)     (Kingma & Ba 2015, TF1 form)
    m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2;
    var -= lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + epsilon)
    beta1^t, beta2^t are the non-slot variables "beta1_power", "beta2_power" (start at beta1 and
    beta2, multiplied by them after every apply).
AdamWOptimizer(weight_decay, lr=0.001, beta1, beta2, epsilon)  (Loshchilov & Hutter 2019)
    var -= lr * weight_decay * var (decoupled decay, before the Adam update, as Keras' AdamW),
    then the Adam update. Note tf.contrib.opt.AdamWOptimizer subtracts weight_decay * var
    without the learning-rate factor; the form here follows the paper's schedule-multiplied
    decay and Keras.
RMSPropOptimizer(lr, decay=0.9, momentum=0.0, epsilon=1e-10, centered=False)
    ms = decay ms + (1 - decay) g^2  (slot "rms", starts at 1 as in TF1);
    mom = momentum mom + lr g / sqrt(ms + epsilon)   (centered: ms - mg^2 with
    mg = decay mg + (1 - decay) g); var -= mom
AdagradOptimizer(lr, initial_accumulator_value=0.1)
    accum += g^2 (slot "accumulator"); var -= lr * g / sqrt(accum)

Slots are non-trainable variables named "<var>/<optimizer name>" ("w/Adam", "w/Adam_1" for
Adam's m and v), initialized by tx.global_variables_initializer().
"""

from tensorflux.framework import op_def_registry
from tensorflux.framework import ops
from tensorflux.framework.op_def_library import apply_op
from tensorflux.ops import init_ops
from tensorflux.training import optimizer


class GradientDescentOptimizer(optimizer.Optimizer):
    """var -= learning_rate * gradient (ResourceApplyGradientDescent)."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _prepare(self):
        self._lr_t = self._hyper(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        return apply_op("ResourceApplyGradientDescent", var=var.handle,
                        alpha=self._cast_like(self._lr_t, var), delta=grad,
                        use_locking=self._use_locking)


class MomentumOptimizer(optimizer.Optimizer):
    """Momentum, optionally Nesterov's (ResourceApplyMomentum); slot "momentum"."""

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._lr_t = self._hyper(self._learning_rate, "learning_rate")
        self._momentum_t = self._hyper(self._momentum, "momentum")

    def _apply_dense(self, grad, var):
        accum = self.get_slot(var, "momentum")
        return apply_op("ResourceApplyMomentum", var=var.handle, accum=accum.handle,
                        lr=self._cast_like(self._lr_t, var), grad=grad,
                        momentum=self._cast_like(self._momentum_t, var),
                        use_locking=self._use_locking, use_nesterov=self._use_nesterov)


class AdamOptimizer(optimizer.Optimizer):
    """Adam (ResourceApplyAdam); slots "m" and "v", non-slot beta1_power and beta2_power."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _get_beta_accumulators(self):
        graph = ops.get_default_graph()
        return (self._get_non_slot_variable("beta1_power", graph=graph),
                self._get_non_slot_variable("beta2_power", graph=graph))

    def _create_slots(self, var_list):
        first_var = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(self._beta1, "beta1_power", first_var)
        self._create_non_slot_variable(self._beta2, "beta2_power", first_var)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _prepare(self):
        self._lr_t = self._hyper(self._lr, "learning_rate")
        self._beta1_t = self._hyper(self._beta1, "beta1")
        self._beta2_t = self._hyper(self._beta2, "beta2")
        self._epsilon_t = self._hyper(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        m = self.get_slot(var, "m")
        v = self.get_slot(var, "v")
        beta1_power, beta2_power = self._get_beta_accumulators()
        c = self._cast_like
        return apply_op("ResourceApplyAdam", var=var.handle, m=m.handle, v=v.handle,
                        beta1_power=c(beta1_power.read_value(), var),
                        beta2_power=c(beta2_power.read_value(), var), lr=c(self._lr_t, var),
                        beta1=c(self._beta1_t, var), beta2=c(self._beta2_t, var),
                        epsilon=c(self._epsilon_t, var), grad=grad,
                        use_locking=self._use_locking)

    def _finish(self, update_ops, name_scope):
        # The beta powers advance once per apply, after every variable's update read them.
        with ops.control_dependencies(update_ops):
            beta1_power, beta2_power = self._get_beta_accumulators()
            update_beta1 = beta1_power.assign(
                beta1_power.read_value() * self._cast_like(self._beta1_t, beta1_power),
                use_locking=self._use_locking, read_value=False)
            update_beta2 = beta2_power.assign(
                beta2_power.read_value() * self._cast_like(self._beta2_t, beta2_power),
                use_locking=self._use_locking, read_value=False)
        return super()._finish(list(update_ops) + [update_beta1, update_beta2], name_scope)


class AdamWOptimizer(AdamOptimizer):
    """Adam with decoupled weight decay: var -= learning_rate * weight_decay * var, then the
    Adam update (module docstring). weight_decay: a number, Tensor or callable."""

    def __init__(self, weight_decay, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="AdamW"):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_locking, name)
        self._weight_decay = weight_decay

    def _prepare(self):
        super()._prepare()
        self._weight_decay_t = self._hyper(self._weight_decay, "weight_decay")

    def _apply_dense(self, grad, var):
        rate = self._cast_like(self._lr_t, var) * self._cast_like(self._weight_decay_t, var)
        # The decay reads and writes var only once the gradient is computed, so the gradient
        # (and the forward values it is made from) see the variable before this step's decay.
        with ops.control_dependencies([grad]):
            decay = apply_op("AssignSubVariableOp", resource=var.handle,
                             value=rate * var.read_value(), name="decay")
        with ops.control_dependencies([decay]):
            return super()._apply_dense(grad, var)


class RMSPropOptimizer(optimizer.Optimizer):
    """RMSProp (ResourceApplyRMSProp, or ResourceApplyCenteredRMSProp with centered); slots
    "rms" (starting at 1), "momentum" and, centered, "mg"."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False,
                 centered=False, name="RMSProp"):
        super().__init__(use_locking, name)
        if centered and op_def_registry.get("ResourceApplyCenteredRMSProp") is None:
            raise NotImplementedError("RMSPropOptimizer(centered=True) needs the "
                                      "ResourceApplyCenteredRMSProp op, not built here")
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list):
        for v in var_list:
            self._get_or_make_slot_with_initializer(
                v, init_ops.ones_initializer(), v.get_shape(), v.dtype.base_dtype, "rms",
                self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._lr_t = self._hyper(self._learning_rate, "learning_rate")
        self._decay_t = self._hyper(self._decay, "decay")
        self._momentum_t = self._hyper(self._momentum, "momentum")
        self._epsilon_t = self._hyper(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        c = self._cast_like
        args = dict(var=var.handle, ms=self.get_slot(var, "rms").handle,
                    mom=self.get_slot(var, "momentum").handle, lr=c(self._lr_t, var),
                    rho=c(self._decay_t, var), momentum=c(self._momentum_t, var),
                    epsilon=c(self._epsilon_t, var), grad=grad, use_locking=self._use_locking)
        if self._centered:
            return apply_op("ResourceApplyCenteredRMSProp",
                            mg=self.get_slot(var, "mg").handle, **args)
        return apply_op("ResourceApplyRMSProp", **args)


class AdagradOptimizer(optimizer.Optimizer):
    """Adagrad (ResourceApplyAdagrad); slot "accumulator" starting at
    initial_accumulator_value (> 0, ValueError otherwise)."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s"
                             % initial_accumulator_value)
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            self._get_or_make_slot_with_initializer(
                v, init_ops.constant_initializer(self._initial_accumulator_value),
                v.get_shape(), v.dtype.base_dtype, "accumulator", self._name)

    def _prepare(self):
        self._lr_t = self._hyper(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        return apply_op("ResourceApplyAdagrad", var=var.handle,
                        accum=self.get_slot(var, "accumulator").handle,
                        lr=self._cast_like(self._lr_t, var), grad=grad,
                        use_locking=self._use_locking)
