"""NN functions with TF 1.x names and arguments (tx.nn.*): bias_add, softmax, log_softmax,
sparse_softmax_cross_entropy_with_logits, softmax_cross_entropy_with_logits,
sigmoid_cross_entropy_with_logits, l2_loss.

Layouts: bias_add takes NHWC (channels last, the default) or NCHW (channels at dim 1) data.
Softmax and the cross entropies work over the class axis, the last one unless `axis`/`dim` says
otherwise (other axes are transposed to the end and back, as TF does). Inputs of rank > 2 to the
cross entropies are flattened to [-1, classes] around the rank-2 ops and the loss reshaped back.
Float dtypes: float16, bfloat16, float32, float64; sparse labels int32 or int64. Bad shapes raise
ValueError at graph construction when static shapes show them, else tx.errors.InvalidArgumentError
at run time.
"""

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework.op_def_library import apply_op
from tensorflux.ops import array_ops
from tensorflux.ops import array_ops2
from tensorflux.ops import math_ops
from tensorflux.ops import math_ops2


def _i32(values):
    return np.asarray(values, dtype=np.int32)


def bias_add(value, bias, data_format=None, name=None):
    """value + bias along the channel dim (BiasAdd). value: rank >= 2; bias: 1-D [C].
    data_format: None or "N...C" (channels last: NHWC, NWC, NDHWC) or "NC..." (channels at
    dim 1: NCHW, NCW, NCDHW)."""
    if data_format is None or (data_format.startswith("N") and data_format.endswith("C")):
        fmt = "NHWC"
    elif data_format.startswith("NC"):
        fmt = "NCHW"
    else:
        raise ValueError("data_format must be of the form `N...C` or `NC...`, got %r"
                         % (data_format,))
    with ops.name_scope(name, "BiasAdd", [value, bias]) as scope:
        value = ops.convert_to_tensor(value, name="input")
        bias = ops.convert_to_tensor(bias, dtype=value.dtype.base_dtype, name="bias")
        return apply_op("BiasAdd", value=value, bias=bias, data_format=fmt, name=scope)


def _last_axis_op(op_type, logits, axis, name):
    """Applies a last-axis op (Softmax, LogSoftmax) along `axis`, transposing when it is not
    the last one."""
    with ops.name_scope(name, op_type, [logits]) as scope:
        logits = ops.convert_to_tensor(logits, name="logits")
        rank = logits.shape.ndims
        if axis is None or axis == -1 or (rank is not None and axis == rank - 1):
            return apply_op(op_type, logits=logits, name=scope)
        if rank is None:
            raise ValueError("%s along axis %d needs logits of known rank" % (op_type, axis))
        if not -rank <= axis < rank:
            raise ValueError("axis %d is out of range for logits of rank %d" % (axis, rank))
        axis %= rank
        perm = list(range(rank))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        moved = array_ops2.transpose(logits, perm)
        return array_ops2.transpose(apply_op(op_type, logits=moved), perm, name=scope)


def softmax(logits, axis=None, name=None, dim=None):
    """exp(logits) / sum(exp(logits), axis), numerically stable (Softmax); axis defaults to -1.
    `dim` is the deprecated name of `axis`."""
    return _last_axis_op("Softmax", logits, axis if axis is not None else dim, name)


def log_softmax(logits, axis=None, name=None, dim=None):
    """logits - log(sum(exp(logits), axis)), numerically stable (LogSoftmax)."""
    return _last_axis_op("LogSoftmax", logits, axis if axis is not None else dim, name)


def _flatten_classes(t, name):
    """t as [-1, classes] (classes = the last dim)."""
    last = t.shape.dims[-1].value if t.shape.ndims else None
    if last is None:
        last = array_ops2.strided_slice(array_ops.shape(t), _i32([-1]), _i32([0]), _i32([1]),
                                        end_mask=1)
        shape = array_ops2.concat([_i32([-1]), last], 0)
    else:
        shape = _i32([-1, last])
    return array_ops.reshape(t, shape, name=name)


def _check_both_args(fn, labels, logits):
    """The cross entropies need both labels and logits (by name or, as TF 2.15, by position)."""
    if labels is None or logits is None:
        raise ValueError("Both labels= and logits= are required for %s" % fn)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Cross entropy of softmax(logits) against class indices (SparseSoftmaxCrossEntropyWith
    Logits). labels: [d_0, ..., d_{r-1}] int32/int64 in [0, classes); logits: [d_0, ...,
    d_{r-1}, classes] float. Returns the loss, shaped like labels. A label out of range is an
    InvalidArgumentError at run time."""
    _check_both_args("sparse_softmax_cross_entropy_with_logits", labels, logits)
    with ops.name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]) as scope:
        labels = ops.convert_to_tensor(labels, name="labels")
        logits = ops.convert_to_tensor(logits, name="logits")
        if labels.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError("labels must be int32 or int64, got %s" % labels.dtype.name)
        lr, gr = labels.shape.ndims, logits.shape.ndims
        if gr == 0:
            raise ValueError("Logits cannot be scalars - received shape %s." % logits.shape)
        if lr is not None and gr is not None and lr != gr - 1:
            raise ValueError("Rank mismatch: Rank of labels (received %d) should equal rank of "
                             "logits minus 1 (received %d)." % (lr, gr))
        if gr == 2:
            loss, _ = apply_op("SparseSoftmaxCrossEntropyWithLogits", features=logits,
                               labels=labels, name=scope)
            return loss
        flat_logits = _flatten_classes(logits, "flat_logits")
        flat_labels = array_ops.reshape(labels, [-1], name="flat_labels")
        loss, _ = apply_op("SparseSoftmaxCrossEntropyWithLogits", features=flat_logits,
                           labels=flat_labels)
        shape = (_i32(labels.shape.as_list()) if labels.shape.is_fully_defined()
                 else array_ops.shape(labels))
        return array_ops.reshape(loss, shape, name=scope)


def softmax_cross_entropy_with_logits_v2(labels=None, logits=None, axis=None, name=None,
                                         dim=None):
    """Cross entropy of softmax(logits) against the distributions `labels` along the class axis
    (`axis`, or its deprecated name `dim`; default -1) (SoftmaxCrossEntropyWithLogits). labels
    and logits: the same shape [..., classes], each labels row a probability distribution
    (the op itself also broadcasts rank-2 operands). Returns the loss, shaped like logits
    without the class axis. Gradients flow into both logits and labels."""
    _check_both_args("softmax_cross_entropy_with_logits_v2", labels, logits)
    dim = -1 if axis is None and dim is None else (axis if axis is not None else dim)
    with ops.name_scope(name, "softmax_cross_entropy_with_logits", [labels, logits]) as scope:
        logits = ops.convert_to_tensor(logits, name="logits")
        labels = ops.convert_to_tensor(labels, dtype=logits.dtype.base_dtype, name="labels")
        rank = logits.shape.ndims
        if rank == 0:
            raise ValueError("Logits cannot be scalars - received shape %s." % logits.shape)
        if dim != -1 and not (rank is not None and dim == rank - 1):
            if rank is None:
                raise ValueError("softmax_cross_entropy_with_logits along dim %d needs logits "
                                 "of known rank" % dim)
            d = dim % rank
            perm = list(range(rank))
            perm[d], perm[-1] = perm[-1], perm[d]
            logits = array_ops2.transpose(logits, perm)
            labels = array_ops2.transpose(labels, perm)
        if rank == 2:
            loss, _ = apply_op("SoftmaxCrossEntropyWithLogits", features=logits, labels=labels,
                               name=scope)
            return loss
        loss, _ = apply_op("SoftmaxCrossEntropyWithLogits",
                           features=_flatten_classes(logits, "flat_logits"),
                           labels=_flatten_classes(labels, "flat_labels"))
        if logits.shape.is_fully_defined():
            batch_shape = _i32(logits.shape.as_list()[:-1])
        else:
            batch_shape = array_ops2.strided_slice(array_ops.shape(logits), _i32([0]),
                                                   _i32([-1]), _i32([1]), begin_mask=1)
        return array_ops.reshape(loss, batch_shape, name=scope)


def softmax_cross_entropy_with_logits(labels=None, logits=None, dim=-1, name=None, axis=None):
    """The TF 1.x (deprecated) form of softmax_cross_entropy_with_logits_v2: the same loss, but
    labels pass through StopGradient, so backpropagation happens only into logits."""
    _check_both_args("softmax_cross_entropy_with_logits", labels, logits)
    with ops.name_scope(name, "softmax_cross_entropy_with_logits_sg", [labels, logits]) as scope:
        labels = array_ops2.stop_gradient(labels, name="labels_stop_gradient")
        return softmax_cross_entropy_with_logits_v2(
            labels=labels, logits=logits, axis=axis if axis is not None else dim, name=scope)


def l2_loss(t, name=None):
    """sum(t ** 2) / 2, a scalar (L2Loss), often used as weight decay."""
    return apply_op("L2Loss", t=t, name=name or "L2Loss")


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise logistic loss of sigmoid(logits) against labels in [0, 1] (the same shape):
    -z * log(sigmoid(x)) - (1 - z) * log(1 - sigmoid(x)), computed stably as TF does:
    max(x, 0) - x * z + log1p(exp(-|x|)). Gradients flow into logits and labels."""
    _check_both_args("sigmoid_cross_entropy_with_logits", labels, logits)
    with ops.name_scope(name, "logistic_loss", [labels, logits]) as scope:
        logits = ops.convert_to_tensor(logits, name="logits")
        labels = ops.convert_to_tensor(labels, dtype=logits.dtype.base_dtype, name="labels")
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError("logits and labels must have the same shape (%s vs %s)"
                             % (logits.shape, labels.shape))
        zeros = array_ops.zeros_like(logits)
        nonneg = math_ops2.greater_equal(logits, zeros)
        relu_logits = math_ops2.where(nonneg, logits, zeros)
        neg_abs_logits = math_ops2.where(nonneg, math_ops.negative(logits), logits)
        return math_ops.add(relu_logits - logits * labels,
                            math_ops2.log1p(math_ops.exp(neg_abs_logits)), name=scope)
