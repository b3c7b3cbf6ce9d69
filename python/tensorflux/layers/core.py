"""tx.layers Dense, Dropout, Flatten and their functional forms (TF 1.x tf.layers names,
arguments and defaults).

dense: inputs [..., in] -> activation(inputs @ kernel + bias), kernel [in, units] ("kernel",
default initializer: tx.get_variable's, Glorot uniform), bias [units] ("bias", zeros); inputs
of rank > 2 are multiplied along their last dim. flatten: [N, ...] -> [N, prod(...)].
dropout: tx.nn.dropout when `training` (a Python bool or a scalar boolean tensor), else the
inputs unchanged.
"""

import numpy as np

from tensorflux.framework import ops
from tensorflux.layers import base
from tensorflux.ops import array_ops
from tensorflux.ops import array_ops2
from tensorflux.ops import math_ops
from tensorflux.ops import nn_impl


class Dense(base.Layer):
    """A densely connected layer: activation(inputs @ kernel + bias)."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        self.units = int(units)
        if self.units <= 0:
            raise ValueError("Dense: units must be positive, got %r" % (units,))
        self._init_kernel_bias(activation, use_bias, kernel_initializer, bias_initializer,
                               kernel_regularizer, bias_regularizer, activity_regularizer,
                               kernel_constraint, bias_constraint)

    def build(self, input_shape):
        if input_shape.ndims is not None and input_shape.ndims < 2:
            raise ValueError("Input 0 of layer %s should have rank >= 2, got shape %s"
                             % (self._base_name, input_shape))
        last = input_shape.dims[-1].value if input_shape.ndims else None
        if last is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                             "Found `None`.")
        self._build_kernel_bias([last, self.units])

    def call(self, inputs):  # pylint: disable=arguments-differ
        rank = inputs.shape.ndims
        if rank == 2:
            outputs = math_ops.matmul(inputs, self.kernel)
        else:
            last = self.kernel.shape.dims[0].value
            outputs = math_ops.matmul(array_ops.reshape(inputs, np.int32([-1, last])),
                                      self.kernel)
            dims = inputs.shape.as_list() if rank is not None else None
            if dims is not None and None not in dims[1:-1]:
                shape = np.int32([-1] + dims[1:-1] + [self.units])
            else:
                lead = array_ops2.strided_slice(array_ops.shape(inputs), np.int32([0]),
                                                np.int32([-1]), np.int32([1]), begin_mask=1)
                shape = array_ops2.concat([lead, np.int32([self.units])], 0)
            outputs = array_ops.reshape(outputs, shape)
        return self._bias_activation(outputs)


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True,
          name=None, reuse=None):
    """Functional form of Dense (tf.layers.dense). bias_initializer None means zeros."""
    layer = Dense(units, activation=activation, use_bias=use_bias,
                  kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                  kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                  activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                  bias_constraint=bias_constraint, trainable=trainable, name=name,
                  _reuse=reuse)
    return layer.apply(inputs)


class Dropout(base.Layer):
    """Applies tx.nn.dropout(rate) when called with training=True (or a boolean tensor that
    is true at run time); the identity otherwise."""

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def __call__(self, inputs, training=False):  # pylint: disable=arguments-differ
        inputs = ops.convert_to_tensor(inputs, name="inputs")
        nn_impl.static_bool(training)  # type check before any op is made
        with ops.name_scope(self._name, self._base_name, [inputs]):
            return nn_impl.switch(
                training,
                lambda: nn_impl.dropout(inputs, noise_shape=self.noise_shape, seed=self.seed,
                                        rate=self.rate),
                lambda: array_ops.identity(inputs))

    apply = __call__

    def call(self, inputs, training=False):  # pylint: disable=arguments-differ
        return self(inputs, training=training)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Functional form of Dropout (tf.layers.dropout): training defaults to False (identity)."""
    return Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)(inputs,
                                                                         training=training)


class Flatten(base.Layer):
    """[N, d1, ..., dk] -> [N, d1 * ... * dk] (channels_first inputs are made channels-last
    first, as TF does, so the element order matches a channels_last model)."""

    def __init__(self, data_format=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.data_format = base._data_format(data_format)  # pylint: disable=protected-access

    def __call__(self, inputs):  # pylint: disable=arguments-differ
        inputs = ops.convert_to_tensor(inputs, name="inputs")
        with ops.name_scope(self._name, self._base_name, [inputs]):
            rank = inputs.shape.ndims
            if self.data_format == "NCHW" and rank is not None and rank > 2:
                inputs = array_ops2.transpose(inputs, [0] + list(range(2, rank)) + [1])
            dims = inputs.shape.as_list() if rank is not None else None
            if dims is not None and rank < 1:
                raise ValueError("Flatten needs inputs of rank >= 1, got %s" % inputs.shape)
            if dims is not None and all(d is not None for d in dims[1:]):
                inner = int(np.prod(dims[1:], dtype=np.int64))
                return array_ops.reshape(inputs, np.int32([-1, inner]))
            batch = array_ops2.strided_slice(array_ops.shape(inputs), np.int32([0]),
                                             np.int32([1]), np.int32([1]))
            return array_ops.reshape(inputs, array_ops2.concat([batch, np.int32([-1])], 0))

    apply = __call__

    def call(self, inputs):  # pylint: disable=arguments-differ
        return self(inputs)


def flatten(inputs, name=None, data_format="channels_last"):
    """Functional form of Flatten (tf.layers.flatten)."""
    return Flatten(data_format=data_format, name=name)(inputs)
