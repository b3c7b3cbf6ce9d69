"""Initializers (TF 1.x tf.initializers / init_ops): objects called as
`init(shape, dtype=None, partition_info=None)` that return a Tensor of that shape and dtype, built
in the default graph; tx.get_variable calls them to make a variable's initial value.

    Zeros, Ones, Constant(value)           fixed values (any dtype)
    RandomUniform(minval=0, maxval=None)   uniform in [minval, maxval); maxval None means 1
    RandomNormal(mean=0, stddev=1)         normal
    TruncatedNormal(mean=0, stddev=1)      normal, redrawn beyond 2 stddev
    VarianceScaling(scale=1, mode="fan_in", distribution="truncated_normal")
        n = fan_in, fan_out or (fan_in + fan_out) / 2 by mode (at least 1), s = scale / n;
        "truncated_normal": truncated normal of stddev sqrt(s) / 0.87962566103423978 (the stddev
            of a standard normal truncated at +-2), so the values have variance s;
        "untruncated_normal": normal of stddev sqrt(s);
        "uniform": uniform in [-sqrt(3 s), sqrt(3 s)).
    glorot (xavier) uniform/normal = VarianceScaling(1, "fan_avg", uniform/truncated_normal)
    he uniform/normal              = VarianceScaling(2, "fan_in", ...)
    lecun uniform/normal           = VarianceScaling(1, "fan_in", ...)
    Identity(gain=1)               gain * the identity matrix (2-D shapes)
    Orthogonal(gain=1)             gain * Q of the QR decomposition of a normal matrix
                                   [max(r, c), min(r, c)] (r = prod(shape[:-1]), c = shape[-1]),
                                   Q's columns multiplied by the signs of R's diagonal (so Q is
                                   uniformly distributed), transposed when r < c.

Fans follow TF's _compute_fans: a scalar has fans (1, 1); a vector [n] has (n, n); a dense kernel
[in, out] has (in, out); a convolution kernel [..spatial.., in, out] has
(in * receptive field, out * receptive field), the receptive field being the product of the
spatial dims.

Random initializers take `seed` (the op seed): the values depend on it and on the graph seed
through random_ops.get_seed, so with a graph seed (tx.set_random_seed) the same program makes the
same bits every time. Their dtype must be floating point (ValueError otherwise).
"""

import math

import numpy as np

from tensorflux.framework import constant_op
from tensorflux.framework import dtypes
from tensorflux.framework import tensor_shape
from tensorflux.ops import array_ops
from tensorflux.ops import array_ops2
from tensorflux.ops import linalg_ops
from tensorflux.ops import math_ops
from tensorflux.ops import math_ops2
from tensorflux.ops import random_ops

# The stddev of a standard normal truncated to (-2, 2).
_TRUNCATED_NORMAL_STDDEV = 0.87962566103423978


def _float_dtype(dtype):
    dtype = dtypes.as_dtype(dtype).base_dtype
    if not dtype.is_floating:
        raise ValueError("Expected floating point type, got %s." % dtype.name)
    return dtype


def _as_shape_list(shape):
    shape = tensor_shape.as_shape(shape)
    if not shape.is_fully_defined():
        raise ValueError("Initializers need a fully defined shape, got %s" % shape)
    return shape.as_list()


def _compute_fans(shape):
    """(fan_in, fan_out) of a weight of `shape` (list of ints), as TF's _compute_fans."""
    if len(shape) < 1:
        fan_in = fan_out = 1
    elif len(shape) == 1:
        fan_in = fan_out = shape[0]
    elif len(shape) == 2:
        fan_in, fan_out = shape
    else:
        receptive_field = 1
        for d in shape[:-2]:
            receptive_field *= d
        fan_in = shape[-2] * receptive_field
        fan_out = shape[-1] * receptive_field
    return int(fan_in), int(fan_out)


class Initializer:
    """Base of the initializers: subclasses define __call__(shape, dtype=None,
    partition_info=None) and get_config()."""

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Zeros(Initializer):
    """All zeros (any dtype)."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.zeros(_as_shape_list(shape), dtype or self.dtype)

    def get_config(self):
        return {"dtype": self.dtype.name}


class Ones(Initializer):
    """All ones (any dtype)."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.ones(_as_shape_list(shape), dtype or self.dtype)

    def get_config(self):
        return {"dtype": self.dtype.name}


class Constant(Initializer):
    """`value` (a scalar fills the shape; a list or array of the shape's size is reshaped; a
    shorter list repeats its last value, as TF 1.x; verify_shape requires value's shape to be the
    requested one)."""

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))):
            raise TypeError("Invalid type for initial value: %s (expected Python scalar, list or "
                            "tuple of values, or numpy.ndarray)." % type(value).__name__)
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        if verify_shape is None:
            verify_shape = self._verify_shape
        return constant_op.constant(self.value, dtype=dtype or self.dtype,
                                    shape=_as_shape_list(shape), verify_shape=verify_shape)

    def get_config(self):
        return {"value": self.value, "dtype": self.dtype.name}


class RandomUniform(Initializer):
    """Uniform in [minval, maxval) (maxval None: 1); floating dtypes."""

    def __init__(self, minval=0, maxval=None, seed=None, dtype=dtypes.float32):
        self.minval = minval
        self.maxval = maxval
        self.seed = seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_uniform(_as_shape_list(shape), self.minval, self.maxval,
                                         _float_dtype(dtype or self.dtype), seed=self.seed)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed,
                "dtype": self.dtype.name}


class RandomNormal(Initializer):
    """Normal of `mean` and `stddev`; floating dtypes."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        self.mean = mean
        self.stddev = stddev
        self.seed = seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_normal(_as_shape_list(shape), self.mean, self.stddev,
                                        _float_dtype(dtype or self.dtype), seed=self.seed)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed,
                "dtype": self.dtype.name}


class TruncatedNormal(RandomNormal):
    """Normal of `mean` and `stddev` with values beyond 2 stddev redrawn; floating dtypes."""

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.truncated_normal(_as_shape_list(shape), self.mean, self.stddev,
                                           _float_dtype(dtype or self.dtype), seed=self.seed)


class VarianceScaling(Initializer):
    """Values of variance scale / n, n set by `mode` from the fans (module docstring).
    distribution: "truncated_normal" (and its old name "normal"), "untruncated_normal" or
    "uniform". ValueError for a scale <= 0, an unknown mode or distribution."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=dtypes.float32):
        if scale <= 0.:
            raise ValueError("`scale` must be positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError("Invalid `mode` argument: %s" % mode)
        distribution = distribution.lower()
        if distribution not in ("normal", "uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError("Invalid `distribution` argument: %s" % distribution)
        self.scale = scale
        self.mode = mode
        self.distribution = distribution
        self.seed = seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = _as_shape_list(shape)
        dtype = _float_dtype(dtype or self.dtype)
        scale_shape = shape
        if partition_info is not None:
            scale_shape = _as_shape_list(partition_info.full_shape)
        fan_in, fan_out = _compute_fans(scale_shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1., n)
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(scale) / _TRUNCATED_NORMAL_STDDEV
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed, "dtype": self.dtype.name}


class Orthogonal(Initializer):
    """gain * a random orthogonal matrix (module docstring), reshaped to `shape` (rank >= 2,
    ValueError otherwise); floating dtypes. Uses the Qr op."""

    def __init__(self, gain=1.0, seed=None, dtype=dtypes.float32):
        self.gain = gain
        self.seed = seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = _as_shape_list(shape)
        dtype = _float_dtype(dtype or self.dtype)
        if len(shape) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        num_rows = int(np.prod(shape[:-1]))
        num_cols = shape[-1]
        flat_shape = (num_cols, num_rows) if num_rows < num_cols else (num_rows, num_cols)
        a = random_ops.random_normal(flat_shape, dtype=dtype, seed=self.seed)
        q, r = linalg_ops.qr(a, full_matrices=False)
        p = min(flat_shape)  # r is [p, p]: its diagonal is every (p + 1)-th flat element
        diag = array_ops2.strided_slice(array_ops.reshape(r, [-1]), [0], [p * p], [p + 1])
        q = q * math_ops2.sign(diag)
        if num_rows < num_cols:
            q = array_ops2.transpose(q)
        return math_ops.multiply(constant_op.constant(self.gain, dtype=dtype),
                                 array_ops.reshape(q, shape))

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


class Identity(Initializer):
    """gain * the identity matrix (ones on the main diagonal of a 2-D shape [n, m], zeros
    elsewhere); ValueError for other ranks. Floating dtypes."""

    def __init__(self, gain=1.0, dtype=dtypes.float32):
        self.gain = gain
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = _as_shape_list(shape)
        if len(shape) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        dtype = _float_dtype(dtype or self.dtype)
        eye = array_ops2.one_hot(array_ops2.range(shape[0]), shape[1], dtype=dtype)
        return math_ops.multiply(constant_op.constant(self.gain, dtype=dtype), eye)

    def get_config(self):
        return {"gain": self.gain, "dtype": self.dtype.name}


class GlorotUniform(VarianceScaling):
    """Glorot (Xavier) uniform: uniform in +-sqrt(6 / (fan_in + fan_out))."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    """Glorot (Xavier) normal: truncated normal of variance 2 / (fan_in + fan_out)."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


def he_normal(seed=None):
    """He (Kaiming) normal: truncated normal of variance 2 / fan_in."""
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    """He (Kaiming) uniform: uniform in +-sqrt(6 / fan_in)."""
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    """LeCun normal: truncated normal of variance 1 / fan_in."""
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    """LeCun uniform: uniform in +-sqrt(3 / fan_in)."""
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


# TF 1.x's lower-case names (tf.zeros_initializer, tf.initializers.zeros, ...).
zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
variance_scaling_initializer = VarianceScaling
orthogonal_initializer = Orthogonal
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
