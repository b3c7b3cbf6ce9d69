"""tx.train.Optimizer: the base of the optimizers (TF 1.x tf.compat.v1.train.Optimizer).

    train_op = opt.minimize(loss, global_step=step)
is compute_gradients (tx.gradients of loss with respect to the trainable variables) followed by
apply_gradients (one update op per variable with a gradient, then global_step += 1). The steps
can be separated to transform the gradients, e.g. to clip them:
    grads_and_vars = opt.compute_gradients(loss)
    grads, norm = tx.clip_by_global_norm([g for g, _ in grads_and_vars], 5.0)
    train_op = opt.apply_gradients(zip(grads, [v for _, v in grads_and_vars]), global_step=step)
or in one call with minimize's `grad_transform` (a TensorFlux addition): a callable taking the
list of (gradient, variable) pairs and returning the list to apply.

Subclasses implement _create_slots(var_list) (slot variables, e.g. Adam's m and v, made with
_zeros_slot / _get_or_make_slot_with_initializer and read back with get_slot), _prepare()
(convert hyper-parameters to tensors once per apply_gradients) and _apply_dense(grad, var)
returning the update op of one variable; _finish(update_ops, name) groups them (Adam also
updates its beta powers there). Variables are tx.Variable resource variables; the update ops
are TF's ResourceApply* ops on their handles.
"""

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.ops import control_flow_ops
from tensorflux.ops import gradients as gradients_lib
from tensorflux.ops import init_ops
from tensorflux.ops import math_ops
from tensorflux.ops import variable_scope
from tensorflux.ops import variables
from tensorflux.framework.op_def_library import apply_op

_VALID_DTYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)


def _var_key(var):
    return (var.op.graph, var.op.name)


class Optimizer:
    """Base class (see the module docstring). Not used directly."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots = {}  # slot name -> {var key: slot variable}
        self._non_slot_dict = {}  # (name, graph) -> variable

    def get_name(self):
        return self._name

    # ------------------------------------------------------------------ public API
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None, grad_transform=None):
        """compute_gradients then apply_gradients: returns the train op (an Operation) that
        updates the variables and, when given, increments global_step. grad_transform: optional
        callable [(grad, var)] -> [(grad, var)] applied in between (e.g. clipping). ValueError
        when no variable has a gradient."""
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not "
                "support gradients, between variables %s and loss %s."
                % ([str(v) for _, v in grads_and_vars], loss))
        if grad_transform is not None:
            grads_and_vars = list(grad_transform(list(grads_and_vars)))
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """[(gradient, variable)] for every variable of var_list (default: the graph's
        trainable variables); the gradient is None where loss does not depend on the variable.
        loss must be a floating tensor (ValueError otherwise); grad_loss, when given, is the
        gradient fed for loss. ValueError when there are no variables."""
        if callable(loss):
            loss = loss()
        if not isinstance(loss, ops.Tensor):
            raise TypeError("loss must be a Tensor, got %r" % (loss,))
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP,
                                  Optimizer.GATE_GRAPH):
            raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, "
                             "Optimizer.GATE_OP, Optimizer.GATE_GRAPH. Not %s" % gate_gradients)
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            self._assert_valid_dtypes([grad_loss])
        with loss.graph.as_default():
            if var_list is None:
                var_list = variables.trainable_variables()
            else:
                var_list = list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        for v in var_list:
            if not isinstance(v, variables.Variable):
                raise TypeError("var_list must hold tx.Variable objects, got %r" % (v,))
        grads = gradients_lib.gradients(loss, [v.handle for v in var_list],
                                        grad_ys=None if grad_loss is None else [grad_loss])
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = _gate(grads)
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None,
                        skip_gradients_aggregation=False):
        """Adds the update of every variable with a (non-None) gradient and returns one
        Operation running them all; with global_step (an integer variable) the returned op also
        adds 1 to it, after the updates. A variable with a constraint is then assigned
        constraint(variable) (as TF). Registers the op in GraphKeys.TRAIN_OP. ValueError for
        an empty list or when every gradient is None; TypeError for a gradient that is not a
        tensor. skip_gradients_aggregation: TF skips the cross-replica sum of a distribution
        strategy; there is none here, so it changes nothing."""
        del skip_gradients_aggregation  # no distribution strategy: nothing to aggregate
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if g is not None:
                try:
                    g = ops.convert_to_tensor(g)
                except (TypeError, ValueError):
                    raise TypeError("Gradient must be convertible to a Tensor or None: %s"
                                    % (g,)) from None
            if not isinstance(v, variables.Variable):
                raise TypeError("Expected a tx.Variable, got %r" % (v,))
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError("No gradients provided for any variable: %s."
                             % ([str(v) for _, v in converted],))
        graph = var_list[0].op.graph
        with graph.as_default():
            with graph.control_dependencies(None):
                self._create_slots(var_list)
            update_ops = []
            with ops.name_scope(name, self._name) as scope:
                self._prepare()
                for grad, var in converted:
                    if grad is None:
                        continue
                    if grad.dtype.base_dtype != var.dtype.base_dtype:
                        raise TypeError("Gradient of %s has dtype %s, the variable %s"
                                        % (var.name, grad.dtype.name, var.dtype.base_dtype.name))
                    # On the variable's device (TF colocates the update with the variable):
                    # under tx.train.replica_device_setter that is its ps task.
                    with ops.name_scope("update_" + var.op.name), graph.device(var.device):
                        update = self._apply_dense(grad, var)
                        constraint = getattr(var, "constraint", None)
                        if constraint is not None:
                            with graph.control_dependencies([update]):
                                update = var.assign(constraint(var), read_value=False)
                        update_ops.append(update)
                if global_step is None:
                    apply_updates = self._finish(update_ops, scope)
                else:
                    with ops.control_dependencies([self._finish(update_ops, "update")]):
                        apply_updates = _increment(global_step, scope)
            if isinstance(apply_updates, ops.Tensor):
                apply_updates = apply_updates.op
            train_ops = ops.get_collection_ref(ops.GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
            return apply_updates

    def get_slot(self, var, name):
        """The slot variable `name` of `var` (e.g. Adam's "m"), or None."""
        named = self._slots.get(name)
        if not named:
            return None
        return named.get(_var_key(var))

    def get_slot_names(self):
        """The names of the slots this optimizer creates, sorted."""
        return sorted(self._slots.keys())

    def variables(self):
        """The optimizer's variables (slots and non-slot accumulators) in the default graph,
        sorted by name."""
        graph = ops.get_default_graph()
        out = [v for (name, g), v in self._non_slot_dict.items() if g is graph]
        for named in self._slots.values():
            out.extend(v for key, v in named.items() if key[0] is graph)
        return sorted(out, key=lambda v: v.name)

    # ------------------------------------------------------------------ for subclasses
    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply_dense(self, grad, var):
        raise NotImplementedError()

    def _finish(self, update_ops, name_scope):
        return control_flow_ops.group(*update_ops, name=name_scope)

    def _call_if_callable(self, param):
        return param() if callable(param) else param

    def _hyper(self, value, name):
        """A hyper-parameter for this apply: a Python number stays a number (made a constant of
        each variable's dtype by _cast_like, so float64 variables get float64 rates); a Tensor,
        a numpy value or a callable's result becomes a tensor."""
        value = self._call_if_callable(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        return ops.convert_to_tensor(value, name=name)

    @staticmethod
    def _cast_like(t, var):
        """t (a hyper-parameter from _hyper, or a tensor) as a tensor of var's dtype."""
        if isinstance(t, ops.Tensor):
            return math_ops.cast(t, var.dtype.base_dtype)
        return ops.convert_to_tensor(t, dtype=var.dtype.base_dtype)

    def _slot_dict(self, slot_name):
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype, slot_name,
                                           op_name):
        """The slot `slot_name` of var, created on first use as a non-trainable variable named
        "<var>/<op_name>" (made unique: Adam's m and v are "w/Adam" and "w/Adam_1"), initialized
        by `initializer`."""
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            named[key] = _create_slot(var, initializer, shape, dtype, op_name)
        return named[key]

    def _zeros_slot(self, var, slot_name, op_name):
        return self._get_or_make_slot_with_initializer(
            var, init_ops.zeros_initializer(), var.get_shape(), var.dtype.base_dtype, slot_name,
            op_name)

    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        """A non-trainable variable of this optimizer shared by all its variables (Adam's
        beta1_power), one per graph, colocated with `colocate_with` (the first variable)."""
        graph = colocate_with.op.graph
        key = (name, graph)
        v = self._non_slot_dict.get(key)
        if v is None:
            with graph.as_default(), graph.control_dependencies(None), \
                    graph.name_scope(None), graph.colocate_with(colocate_with):
                v = variables.Variable(initial_value, name=name, trainable=False,
                                       dtype=colocate_with.dtype.base_dtype)
            self._non_slot_dict[key] = v
        return v

    def _get_non_slot_variable(self, name, graph=None):
        return self._non_slot_dict.get((name, graph or ops.get_default_graph()))

    def _assert_valid_dtypes(self, tensors):
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in _VALID_DTYPES:
                raise ValueError("Invalid type %r for %s, expected: %s."
                                 % (dtype.name, t.name, [v.name for v in _VALID_DTYPES]))


def _create_slot(primary, initializer, shape, dtype, op_name):
    """A slot variable of `primary` named "<primary>/<op_name>", with "_1", "_2", ... appended
    when taken (TF's slot names), made through the get_variable store, colocated with the
    primary (TF's colocate_vars_with: its device, the same ps task, whatever the device scope
    of minimize(), so the update op that takes both finds them together)."""
    graph = primary.op.graph
    with graph.as_default(), graph.colocate_with(primary):
        store = variable_scope._var_store()
        base = primary.op.name + "/" + op_name
        name, i = base, 0
        while store.has(name):
            i += 1
            name = "%s_%d" % (base, i)
        return store.get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                                  trainable=False, reuse=False)


def _gate(grads):
    """The gradients, each available only once all are computed (GATE_GRAPH)."""
    ready = [g for g in grads if g is not None]
    if not ready:
        return grads
    from tensorflux.ops import array_ops  # pylint: disable=g-import-not-at-top
    with ops.control_dependencies(ready):
        return [None if g is None else array_ops.identity(g) for g in grads]


def _increment(global_step, name):
    """global_step += 1 (AssignAddVariableOp on a variable's handle)."""
    if not isinstance(global_step, variables.Variable):
        raise TypeError("global_step must be a tx.Variable, got %r" % (global_step,))
    if not global_step.dtype.base_dtype.is_integer:
        raise TypeError("Existing \"global_step\" does not have integer type: %s"
                        % global_step.dtype.name)
    with global_step.graph.device(global_step.device):
        one = ops.convert_to_tensor(1, dtype=global_step.dtype.base_dtype)
        return apply_op("AssignAddVariableOp", resource=global_step.handle, value=one,
                        name=name)
