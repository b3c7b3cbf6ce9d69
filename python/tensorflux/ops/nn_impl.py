"""tx.nn.dropout (tf.compat.v1.nn.dropout) and the train/inference switch the layers use.

dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None): TF 1.x's
signature (keep_prob positional, `rate` = 1 - keep_prob the preferred keyword). Each element
(or each slice, with noise_shape) is kept with probability 1 - rate and scaled by 1 / (1 - rate),
so the expectation is unchanged; dropped elements are 0. The mask is drawn from RandomUniform
(u >= rate keeps) with seeds from random_ops.get_seed, so a graph or op seed makes it
reproducible; each Session.run draws a new mask.
"""

import numbers

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework import tensor_util
from tensorflux.ops import array_ops
from tensorflux.ops import math_ops
from tensorflux.ops import math_ops2
from tensorflux.ops import random_ops


def _noise_shape(x, noise_shape):
    """noise_shape with its None entries taken from x's shape (TF's rule), or Shape(x)."""
    if noise_shape is None:
        if x.shape.is_fully_defined():
            return np.array(x.shape.as_list(), np.int32)
        return array_ops.shape(x)
    if isinstance(noise_shape, ops.Tensor):
        return noise_shape
    dims = list(noise_shape)
    if x.shape.ndims is not None and len(dims) == x.shape.ndims:
        dims = [x.shape.dims[i].value if d is None else d for i, d in enumerate(dims)]
    if any(d is None for d in dims):
        raise ValueError("noise_shape %r has unknown dims that x's shape %s cannot fill"
                         % (noise_shape, x.shape))
    return np.array(dims, np.int32)


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """x * mask / (1 - rate) with mask ~ Bernoulli(1 - rate) of shape noise_shape (default
    x's shape; it must broadcast to x's). Give exactly one of rate and keep_prob (a number or a
    scalar float tensor); a number outside [0, 1) for rate is a ValueError, and rate 0 returns
    x unchanged. x must be floating point."""
    if (keep_prob is None) == (rate is None):
        raise ValueError("dropout: give exactly one of rate and keep_prob")
    if keep_prob is not None:
        if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1:
            raise ValueError("keep_prob must be a scalar tensor or a float in the range (0, 1], "
                             "got %g" % keep_prob)
        rate = 1 - keep_prob
    with ops.name_scope(name, "dropout", [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        dtype = x.dtype.base_dtype
        if not dtype.is_floating:
            raise ValueError("x has to be a floating point tensor since it's going to be scaled. "
                             "Got a %s tensor instead." % dtype.name)
        if isinstance(rate, numbers.Real):
            if not 0 <= rate < 1:
                raise ValueError("rate must be a scalar tensor or a float in the range [0, 1), "
                                 "got %g" % rate)
            if rate == 0:
                return x
            rate_t = ops.convert_to_tensor(rate, dtype=dtype, name="rate")
            scale = ops.convert_to_tensor(1.0 / (1.0 - rate), dtype=dtype, name="scale")
        else:
            rate_t = math_ops.cast(ops.convert_to_tensor(rate, name="rate"), dtype)
            if rate_t.shape.ndims not in (None, 0):
                raise ValueError("rate must be a scalar tensor, got shape %s" % rate_t.shape)
            scale = math_ops2.reciprocal(1 - rate_t)
        uniform = random_ops.random_uniform(_noise_shape(x, noise_shape), seed=seed, dtype=dtype)
        keep = math_ops.cast(math_ops2.greater_equal(uniform, rate_t), dtype)
        return math_ops.multiply(x * scale, keep, name=scope)


def static_bool(value):
    """A Python bool when `value` (a bool, or a tensor of known constant value) is static, else
    None (value is then a run-time boolean tensor)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, ops.Tensor):
        v = tensor_util.constant_value(value)
        return None if v is None else bool(v)
    if isinstance(value, (int, np.integer)):
        return bool(value)
    raise TypeError("training must be a Python bool or a boolean tensor, got %r" % (value,))


def switch(training, if_true, if_false):
    """if_true() when `training` is (statically) true, if_false() when false; for a run-time
    boolean scalar tensor both are built and SelectV2 picks one (no control flow: both sides run,
    gradients flow to the chosen side only)."""
    static = static_bool(training)
    if static is not None:
        return if_true() if static else if_false()
    training = ops.convert_to_tensor(training, dtype=dtypes.bool, name="training")
    if training.shape.ndims not in (None, 0):
        raise ValueError("training must be a scalar boolean tensor, got shape %s"
                         % training.shape)
    return math_ops2.where_v2(training, if_true(), if_false())
