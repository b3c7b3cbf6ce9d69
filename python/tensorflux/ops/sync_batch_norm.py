"""Batch statistics and batch normalization, plain and synchronized over towers.

tx.nn.moments(x, axes) and tx.nn.batch_normalization(x, mean, variance, offset, scale,
variance_epsilon) are TF 1.x's tf.nn functions:
    y = scale * (x - mean) / sqrt(variance + variance_epsilon) + offset
with the biased (population) variance of the batch, computed in two passes (the mean, then the
mean squared deviation from it).

Synchronized batch normalization (in-graph replication): the towers of one step normalize with
the statistics of the whole step's batch, not of their own slice, so N towers of batch b train
like one device with batch N*b. tx.nn.sync_moments(tower_inputs, axes) gives the mean and
variance of the concatenation of the towers' inputs along axis 0 without concatenating: each
tower reduces its own slice on its own device (a sum, then a sum of squared deviations from the
global mean) and only per-channel partial sums cross devices. tx.nn.sync_batch_normalization
normalizes every tower's input with them, on the tower's device. Both are differentiable; the
gradients flow across towers as the statistics do. Follows the cross-replica batch norm of
Peng et al. 2018 ("MegDet") / Zhang et al. 2018 ("Context encoding"), built from plain ops.

    with tx.device("/device:CPU:0"): h0 = ...
    with tx.device("/device:CPU:1"): h1 = ...
    y0, y1 = tx.nn.sync_batch_normalization([h0, h1], offset=beta, scale=gamma,
                                            variance_epsilon=1e-3, axes=[0])
"""

from tensorflux.framework import ops
from tensorflux.ops import array_ops
from tensorflux.ops import array_ops2
from tensorflux.ops import math_ops
from tensorflux.ops import math_ops2
from tensorflux.ops import reduction_ops


def _axes(axes):
    return [int(a) for a in axes]


def _count(x, summed):
    """The number of elements of x reduced into each element of `summed`, as x's dtype."""
    return math_ops.cast(array_ops.size(x), x.dtype.base_dtype) / math_ops.cast(
        array_ops.size(summed), x.dtype.base_dtype)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of x over `axes` (TF's tf.nn.moments); variance is the biased one."""
    del shift
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with ops.name_scope(name, "moments", [x]):
        x = ops.convert_to_tensor(x, name="x")
        axes = _axes(axes)
        mean = reduction_ops.reduce_mean(x, axes, keepdims=True, name="mean")
        variance = reduction_ops.reduce_mean(math_ops2.squared_difference(x, mean), axes,
                                             keepdims=True, name="variance")
        if not keep:
            mean = array_ops2.squeeze(mean, axes)
            variance = array_ops2.squeeze(variance, axes)
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """scale * (x - mean) / sqrt(variance + variance_epsilon) + offset (TF's
    tf.nn.batch_normalization); offset and scale may be None."""
    with ops.name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        inv = math_ops2.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        shift = -mean * inv
        if offset is not None:
            shift = shift + offset
        return x * math_ops.cast(inv, x.dtype.base_dtype) + math_ops.cast(shift,
                                                                          x.dtype.base_dtype)


def sync_moments(tower_inputs, axes, keep_dims=False, name=None):
    """(mean, variance) over `axes` of the towers' inputs concatenated along axis 0 (axes must
    include 0; each tower's reduction runs on its input's device). ValueError for an empty
    list or axes without 0."""
    tower_inputs = [ops.convert_to_tensor(x) for x in tower_inputs]
    if not tower_inputs:
        raise ValueError("sync_moments needs at least one tower input")
    axes = _axes(axes)
    if 0 not in axes:
        raise ValueError("sync_moments: the towers split the batch (axis 0), so axes must "
                         "include 0, got %s" % axes)
    graph = tower_inputs[0].graph
    with ops.name_scope(name, "sync_moments", tower_inputs):
        sums, counts = [], []
        for i, x in enumerate(tower_inputs):
            with graph.device(x.device), ops.name_scope("tower_%d" % i):
                s = reduction_ops.reduce_sum(x, axes, keepdims=True)
                sums.append(s)
                counts.append(_count(x, s))
        total = math_ops2.add_n(counts) if len(counts) > 1 else counts[0]
        mean = (math_ops2.add_n(sums) if len(sums) > 1 else sums[0]) / total
        squares = []
        for i, x in enumerate(tower_inputs):
            with graph.device(x.device), ops.name_scope("tower_%d" % i):
                squares.append(reduction_ops.reduce_sum(
                    math_ops2.squared_difference(x, mean), axes, keepdims=True))
        variance = (math_ops2.add_n(squares) if len(squares) > 1 else squares[0]) / total
        if not keep_dims:
            mean = array_ops2.squeeze(mean, axes)
            variance = array_ops2.squeeze(variance, axes)
        return mean, variance


def sync_batch_normalization(tower_inputs, offset, scale, variance_epsilon, axes=None,
                             name=None):
    """Each tower's input normalized with the statistics of all towers (sync_moments over
    `axes`, default every axis but the last: the channels); a list, one output per tower, each
    computed on its input's device."""
    tower_inputs = [ops.convert_to_tensor(x) for x in tower_inputs]
    if axes is None:
        rank = tower_inputs[0].shape.ndims if tower_inputs else None
        if rank is None:
            raise ValueError("sync_batch_normalization needs inputs of known rank, or axes")
        axes = list(range(rank - 1))
    with ops.name_scope(name, "sync_batchnorm", tower_inputs):
        mean, variance = sync_moments(tower_inputs, axes, keep_dims=True)
        graph = tower_inputs[0].graph
        outs = []
        for i, x in enumerate(tower_inputs):
            with graph.device(x.device), ops.name_scope("tower_%d" % i):
                outs.append(batch_normalization(x, mean, variance, offset, scale,
                                                variance_epsilon))
        return outs
