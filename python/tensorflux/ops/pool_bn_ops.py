"""Pooling and batch normalization (TF's tf.nn names and defaults), layout NHWC:

max_pool2d / max_pool, avg_pool2d / avg_pool: [N, H, W, C] -> [N, out_rows, out_cols, C]
(MaxPool / AvgPool ops); fused_batch_norm: FusedBatchNormV3 on [N, H, W, C] (or NCHW) with
per-channel scale, offset, mean and variance vectors.
"""

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework.op_def_library import apply_op


def _window(value, name):
    """ksize / strides as TF takes them: an int, or 1, 2 or 4 ints -> [1, rows, cols, 1]."""
    if isinstance(value, (int, np.integer)):
        return [1, int(value), int(value), 1]
    value = [int(v) for v in value]
    if len(value) == 1:
        return [1, value[0], value[0], 1]
    if len(value) == 2:
        return [1, value[0], value[1], 1]
    if len(value) == 4:
        return value
    raise ValueError("%s must be an int or a list of 1, 2 or 4 ints, got %r" % (name, value))


def _padding(padding):
    """(padding string, explicit_paddings): a list of [before, after] pairs (one per dim of the
    input, NHWC) means EXPLICIT padding, as in tf.nn.max_pool2d."""
    if isinstance(padding, str):
        return padding.upper(), []
    pairs = [list(p) for p in padding]
    if len(pairs) != 4 or any(len(p) != 2 for p in pairs):
        raise ValueError("explicit padding must be 4 [before, after] pairs, got %r" % (padding,))
    return "EXPLICIT", [int(v) for p in pairs for v in p]


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """Max over ksize windows moved by strides (MaxPool). padding: "SAME", "VALID" or 4 explicit
    [before, after] pairs (batch and channel pairs must be [0, 0])."""
    pad, explicit = _padding(padding)
    attrs = dict(ksize=_window(ksize, "ksize"), strides=_window(strides, "strides"), padding=pad,
                 data_format=data_format)
    if explicit:
        attrs["explicit_paddings"] = explicit
    return apply_op("MaxPool", input=input, name=name or "MaxPool2d", **attrs)


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    """tf.compat.v1.nn.max_pool: max_pool2d with the 1.x argument name `value`."""
    return max_pool2d(value if input is None else input, ksize, strides, padding,
                      data_format=data_format, name=name or "MaxPool")


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """Mean over ksize windows (AvgPool); with SAME padding, over the valid elements only."""
    return apply_op("AvgPool", value=input, ksize=_window(ksize, "ksize"),
                    strides=_window(strides, "strides"), padding=padding.upper(),
                    data_format=data_format, name=name or "AvgPool2D")


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    """tf.compat.v1.nn.avg_pool: avg_pool2d with the 1.x argument name `value`."""
    return avg_pool2d(value if input is None else input, ksize, strides, padding,
                      data_format=data_format, name=name or "AvgPool")


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None,
                     exponential_avg_factor=1.0):
    """Batch normalization (FusedBatchNormV3), as tf.compat.v1.nn.fused_batch_norm.

    Returns (y, batch_mean, batch_variance). Training: y uses the batch mean and biased variance;
    batch_variance is the unbiased (Bessel-corrected) variance; with exponential_avg_factor f != 1
    both statistics are blended: (1 - f) * mean + f * batch statistic. Inference: y uses `mean`
    and `variance` (required), which are returned unchanged. epsilon below 1.001e-5 is raised to
    it (as TF does). The statistics are float32 (float64 for float64 x).
    """
    with ops.name_scope(name, "FusedBatchNormV3", [x, scale, offset, mean, variance]) as scope:
        x = ops.convert_to_tensor(x, name="input")
        stat_dtype = dtypes.float64 if x.dtype.base_dtype == dtypes.float64 else dtypes.float32
        scale = ops.convert_to_tensor(scale, dtype=stat_dtype, name="scale")
        offset = ops.convert_to_tensor(offset, dtype=stat_dtype, name="offset")
        if not is_training or exponential_avg_factor != 1.0:
            if mean is None or variance is None:
                raise ValueError("Both 'mean' and 'variance' must be given when is_training is "
                                 "False or exponential_avg_factor is not 1.0")
        empty = np.zeros([0], stat_dtype.as_numpy_dtype)
        mean = ops.convert_to_tensor(empty if mean is None else mean, dtype=stat_dtype,
                                     name="mean")
        variance = ops.convert_to_tensor(empty if variance is None else variance,
                                         dtype=stat_dtype, name="variance")
        epsilon = max(float(epsilon), 1.001e-5)
        outs = apply_op("FusedBatchNormV3", x=x, scale=scale, offset=offset, mean=mean,
                        variance=variance, epsilon=epsilon,
                        exponential_avg_factor=float(exponential_avg_factor),
                        data_format=data_format, is_training=bool(is_training), name=scope)
        return outs[0], outs[1], outs[2]
