"""The Layer base class of tx.layers (TF 1.x's tf.compat.v1.layers.Layer, reduced).

A layer object creates its variables once, on its first call, with tx.get_variable inside a
tx.variable_scope named after the layer: `name` when given, else the snake-case class name made
unique in the graph ("dense", "dense_1", ...), as TF names them. Its ops are created in the
same-named name scope (later calls of the same object open a fresh, uniquified one and reuse the
variables). Regularizers passed to add_weight go to tx.get_variable, which adds their penalties
to tx.GraphKeys.REGULARIZATION_LOSSES; update ops (batch normalization's moving statistics) go
to tx.GraphKeys.UPDATE_OPS.
"""

import re

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.ops import nn_ops


def _snake_case(name):
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()


def _vs():
    # tx.variable_scope / tx.get_variable (python/tensorflux/ops/variable_scope.py).
    from tensorflux.ops import variable_scope  # pylint: disable=g-import-not-at-top
    return variable_scope


class Layer:
    """Base class: subclasses define build(input_shape) (creating variables with add_weight)
    and call(inputs, **kwargs) (building the forward ops)."""

    def __init__(self, trainable=True, name=None, dtype=None, _reuse=None, **kwargs):
        if kwargs:
            raise TypeError("Keyword argument not understood: %s" % ", ".join(sorted(kwargs)))
        self.trainable = trainable
        self._name = name
        self._base_name = name or _snake_case(type(self).__name__)
        self._dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self._reuse = _reuse
        self._scope = None
        self.built = False
        self._trainable_weights = []
        self._non_trainable_weights = []
        self._updates = []
        self._losses = []

    # ---------------------------------------------------------------- properties
    @property
    def name(self):
        return self._scope.name if self._scope is not None else self._base_name

    @property
    def dtype(self):
        return self._dtype

    @property
    def trainable_weights(self):
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self):
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    @property
    def weights(self):
        return self._trainable_weights + self._non_trainable_weights

    variables = weights
    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def updates(self):
        return list(self._updates)

    @property
    def losses(self):
        """The regularization penalties of this layer's variables."""
        return list(self._losses)

    # ---------------------------------------------------------------- for subclasses
    def build(self, input_shape):  # pylint: disable=unused-argument
        self.built = True

    def call(self, inputs, **kwargs):  # pylint: disable=unused-argument
        return inputs

    def add_weight(self, name=None, shape=None, dtype=None, initializer=None, regularizer=None,
                   trainable=None, constraint=None, use_resource=None, synchronization=None,
                   aggregation=None, partitioner=None):
        """A variable `name` of this layer's scope through tx.get_variable (trainable None means
        True; constraint, use_resource, synchronization, aggregation, partitioner: as
        tx.get_variable's). Non-trainable variables stay out of TRAINABLE_VARIABLES."""
        if shape is None:
            shape = ()
        dtype = dtypes.as_dtype(dtype or self._dtype or dtypes.float32)
        trainable = (True if trainable is None else trainable) and self.trainable
        graph = ops.get_default_graph()
        before = len(graph.get_collection(ops.GraphKeys.REGULARIZATION_LOSSES))
        var = _vs().get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                                 regularizer=regularizer, trainable=trainable,
                                 constraint=constraint, use_resource=use_resource,
                                 synchronization=synchronization, aggregation=aggregation,
                                 partitioner=partitioner)
        self._losses.extend(graph.get_collection(ops.GraphKeys.REGULARIZATION_LOSSES)[before:])
        (self._trainable_weights if trainable else self._non_trainable_weights).append(var)
        return var

    def add_update(self, updates):
        """Records an update op (or a list of them) and adds it to tx.GraphKeys.UPDATE_OPS."""
        for update in (updates if isinstance(updates, (list, tuple)) else [updates]):
            op = update.op if isinstance(update, ops.Tensor) else update
            self._updates.append(op)
            ops.add_to_collection(ops.GraphKeys.UPDATE_OPS, op)

    def _init_kernel_bias(self, activation, use_bias, kernel_initializer, bias_initializer,
                          kernel_regularizer, bias_regularizer, activity_regularizer,
                          kernel_constraint=None, bias_constraint=None):
        """Stores the arguments Dense and Conv2D share."""
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.activity_regularizer = activity_regularizer
        self.kernel = None
        self.bias = None

    def _build_kernel_bias(self, kernel_shape):
        """Creates "kernel" (kernel_shape) and, with use_bias, "bias" ([kernel_shape[-1]],
        zeros unless bias_initializer says otherwise)."""
        self.kernel = self.add_weight("kernel", kernel_shape, initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            if self.bias_initializer is None:
                from tensorflux.ops import init_ops  # pylint: disable=g-import-not-at-top
                self.bias_initializer = init_ops.zeros_initializer()
            self.bias = self.add_weight("bias", [kernel_shape[-1]],
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.built = True

    def _bias_activation(self, outputs, data_format=None):
        """outputs + self.bias (when use_bias), then self.activation, then the activity
        regularizer's penalty (into REGULARIZATION_LOSSES): the tail Dense and Conv2D share."""
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias, data_format=data_format)
        if self.activation is not None:
            outputs = self.activation(outputs)
        if self.activity_regularizer is not None:
            penalty = self.activity_regularizer(outputs)
            if penalty is not None:
                self._losses.append(penalty)
                ops.add_to_collection(ops.GraphKeys.REGULARIZATION_LOSSES, penalty)
        return outputs

    # ---------------------------------------------------------------- calling
    def __call__(self, inputs, *args, **kwargs):
        inputs = ops.convert_to_tensor(inputs, dtype=self._dtype, name="inputs")
        if self._dtype is None:
            self._dtype = inputs.dtype.base_dtype
        return self._call_in_scope(inputs.shape, lambda: self.call(inputs, *args, **kwargs))

    def _call_in_scope(self, input_shape, call_fn):
        """call_fn() in the layer's scope, after build(input_shape) on the first call."""
        vs = _vs()
        if self._scope is None:
            with vs.variable_scope(self._name, default_name=self._base_name,
                                   reuse=self._reuse) as scope:
                self._scope = scope
                if not self.built:
                    self.build(input_shape)
                    self.built = True
                return call_fn()
        # A later call: the variables exist; the ops go to a fresh name scope.
        with ops.name_scope(self._scope.name.split("/")[-1]):
            return call_fn()

    apply = __call__


def _tuple(value, n, name):
    """An int or a sequence of n ints -> a tuple of n ints (TF's conv_utils.normalize_tuple)."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise ValueError("The `%s` argument must be a tuple of %d integers. Received: %r"
                         % (name, n, value))
    return value


def _padding(padding):
    p = str(padding).lower()
    if p not in ("valid", "same"):
        raise ValueError("The `padding` argument must be one of 'valid', 'same'. Received: %r"
                         % (padding,))
    return p.upper()


def _window(pair, data_format):
    """(rows, cols) -> the 4-vector of an NHWC ([1, r, c, 1]) or NCHW ([1, 1, r, c]) op attr."""
    return [1, pair[0], pair[1], 1] if data_format == "NHWC" else [1, 1, pair[0], pair[1]]


def _data_format(data_format):
    if data_format in (None, "channels_last"):
        return "NHWC"
    if data_format == "channels_first":
        return "NCHW"
    raise ValueError("The `data_format` argument must be one of 'channels_first', "
                     "'channels_last'. Received: %r" % (data_format,))
