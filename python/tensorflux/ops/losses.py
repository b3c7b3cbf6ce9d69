"""Losses with TF 1.x's names, arguments, defaults and reductions (tf.compat.v1.losses):
absolute_difference, huber_loss, log_loss, mean_squared_error, sigmoid_cross_entropy,
softmax_cross_entropy, sparse_softmax_cross_entropy, compute_weighted_loss; the LOSSES collection
(add_loss, get_losses) and the regularization totals (get_regularization_losses,
get_regularization_loss, get_total_loss).

Every loss computes a per-element loss, multiplies it by `weights` and reduces it by `reduction`
(default Reduction.SUM_BY_NONZERO_WEIGHTS: the weighted sum divided by the number of elements
whose broadcast weight is nonzero, 0 when there are none). `weights` is a number or a tensor of
rank 0 or of the per-element loss's rank with each dim 1 or equal to the loss's (a weights tensor
with one more trailing dim of size 1 is squeezed, as TF's squeezable-dimension rule does). The
scalar (or, with Reduction.NONE, elementwise) result is added to `loss_collection`
(tx.GraphKeys.LOSSES by default; None adds it nowhere).

Dtypes: float16/bfloat16 inputs are reduced in float32 (as TF), float64 in float64 (TF would use
float32; kept exact here), and the result is cast back to the input dtype.
"""

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.ops import array_ops
from tensorflux.ops import array_ops2
from tensorflux.ops import math_ops
from tensorflux.ops import math_ops2
from tensorflux.ops import nn_ops
from tensorflux.ops import reduction_ops

_LOSSES = ops.GraphKeys.LOSSES


class Reduction:
    """How a weighted loss is reduced (TF 1.x's values)."""
    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError("Invalid Reduction Key %s." % (key,))


# ------------------------------------------------------------------ the collection

def add_loss(loss, loss_collection=_LOSSES):
    """Adds `loss` to `loss_collection` (nothing when the collection is None)."""
    if loss_collection:
        ops.add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=_LOSSES):
    """The losses in `loss_collection` whose names match the regex `scope` (None: all)."""
    return ops.get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    """The tensors in tx.GraphKeys.REGULARIZATION_LOSSES (filled by tx.get_variable's and the
    layers' regularizers) whose names match `scope`."""
    return ops.get_collection(ops.GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum of get_regularization_losses(scope); a constant 0.0 when there are none."""
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops2.add_n(losses, name=name)
    return ops.convert_to_tensor(np.float32(0.0), name=name)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of get_losses(scope) plus, by default, the regularization losses. Raises
    ValueError when there is nothing to sum."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope)
    if not losses:
        raise ValueError("No losses found (tx.GraphKeys.LOSSES and REGULARIZATION_LOSSES are "
                         "empty)")
    return math_ops2.add_n(losses, name=name)


# ------------------------------------------------------------------ weighting and reduction

def _compute_dtype(dtype):
    return dtypes.float64 if dtype.base_dtype == dtypes.float64 else dtypes.float32


def _prepare_weights(weights, losses, dtype):
    """weights as a tensor of `dtype` checked to broadcast to losses (see the module doc)."""
    weights = ops.convert_to_tensor(weights, name="weights")
    w_rank, l_rank = weights.shape.ndims, losses.shape.ndims
    if w_rank is not None and l_rank is not None and w_rank == l_rank + 1:
        last = weights.shape.dims[-1].value
        if last == 1:
            weights = array_ops2.squeeze(weights, [-1])
            w_rank -= 1
    if w_rank not in (None, 0) and l_rank is not None:
        if w_rank != l_rank:
            raise ValueError("weights can not be broadcast to values: weights rank %d (shape %s) "
                             "must be 0 or the losses' rank %d (shape %s)"
                             % (w_rank, weights.shape, l_rank, losses.shape))
        for wd, ld in zip(weights.shape.dims, losses.shape.dims):
            if wd.value not in (None, 1) and ld.value is not None and wd.value != ld.value:
                raise ValueError("weights can not be broadcast to values: shapes %s and %s"
                                 % (weights.shape, losses.shape))
    return math_ops.cast(weights, dtype)


def _safe_div(numerator, denominator):
    """numerator / denominator, or 0 where denominator is 0 (DivNoNan composed)."""
    zero = array_ops.zeros_like(denominator)
    positive = math_ops2.not_equal(denominator, zero)
    safe = math_ops2.where(positive, denominator, array_ops.ones_like(denominator))
    return math_ops2.where(positive, numerator / safe, zero)


def _num_elements(losses):
    return math_ops.cast(array_ops.size(losses), losses.dtype)


def _num_present(losses, weights, weights_is_nonzero_number):
    """The number of elements of losses whose broadcast weight is nonzero."""
    if weights_is_nonzero_number:
        return _num_elements(losses)
    with ops.name_scope(None, "num_present", [losses, weights]):
        present = math_ops2.where_v2(math_ops2.equal(weights, array_ops.zeros_like(weights)),
                                     array_ops.zeros_like(weights), array_ops.ones_like(weights))
        return reduction_ops.reduce_sum(present * array_ops.ones_like(losses))


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=_LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """losses * weights reduced by `reduction` (see the module doc), added to loss_collection.
    Returns a scalar of losses' dtype, or with Reduction.NONE the weighted losses."""
    Reduction.validate(reduction)
    if weights is None:
        raise ValueError("weights must not be None")
    nonzero_number = (isinstance(weights, (int, float, np.integer, np.floating))
                      and not isinstance(weights, bool) and weights != 0)
    with ops.name_scope(scope, "weighted_loss", [losses]):
        losses = ops.convert_to_tensor(losses, name="losses")
        input_dtype = losses.dtype.base_dtype
        if not input_dtype.is_floating:
            raise ValueError("losses must be floating point, got %s" % input_dtype.name)
        dtype = _compute_dtype(input_dtype)
        losses = math_ops.cast(losses, dtype)
        weights = _prepare_weights(weights, losses, dtype)
        weighted = math_ops.multiply(losses, weights)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = reduction_ops.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = _safe_div(loss, reduction_ops.reduce_sum(array_ops.ones_like(losses)
                                                                * weights))
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _safe_div(loss, _num_present(losses, weights, nonzero_number))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_div(loss, _num_elements(losses))
        loss = math_ops.cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


# ------------------------------------------------------------------ the losses

def _labels_predictions(labels, predictions, what="predictions"):
    if labels is None:
        raise ValueError("labels must not be None.")
    if predictions is None:
        raise ValueError("%s must not be None." % what)
    predictions = ops.convert_to_tensor(predictions, name=what)
    if not predictions.dtype.is_floating:
        predictions = math_ops.cast(predictions, dtypes.float32)
    labels = ops.convert_to_tensor(labels, name="labels")
    labels = math_ops.cast(labels, predictions.dtype.base_dtype)
    if not predictions.shape.is_compatible_with(labels.shape):
        raise ValueError("Shapes %s and %s are incompatible" % (predictions.shape, labels.shape))
    return labels, predictions


def _elementwise_loss(default_scope, fn, what="predictions"):
    """A loss of (labels, predictions) from an elementwise fn(labels, predictions)."""
    def loss(labels, predictions, weights=1.0, scope=None, loss_collection=_LOSSES,
             reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
        with ops.name_scope(scope, default_scope, [predictions, labels]) as s:
            labels, predictions = _labels_predictions(labels, predictions, what)
            return compute_weighted_loss(fn(labels, predictions), weights, s,
                                         loss_collection, reduction)
    return loss


absolute_difference = _elementwise_loss(
    "absolute_difference", lambda y, p: math_ops2.abs(p - y))
absolute_difference.__name__ = "absolute_difference"
absolute_difference.__doc__ = "Weighted |predictions - labels|."

mean_squared_error = _elementwise_loss(
    "mean_squared_error", lambda y, p: math_ops2.squared_difference(p, y))
mean_squared_error.__name__ = "mean_squared_error"
mean_squared_error.__doc__ = "Weighted (predictions - labels)^2."


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=_LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weighted Huber loss of e = predictions - labels: 0.5 * e^2 where |e| <= delta, else
    0.5 * delta^2 + delta * (|e| - delta)."""
    with ops.name_scope(scope, "huber_loss", [predictions, labels]) as s:
        labels, predictions = _labels_predictions(labels, predictions)
        abs_error = math_ops2.abs(predictions - labels)
        d = ops.convert_to_tensor(delta, dtype=abs_error.dtype.base_dtype, name="delta")
        quadratic = math_ops.minimum(abs_error, d)
        linear = abs_error - quadratic
        half = ops.convert_to_tensor(0.5, dtype=abs_error.dtype.base_dtype)
        losses = half * quadratic * quadratic + d * linear
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=_LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weighted -y * log(p + epsilon) - (1 - y) * log(1 - p + epsilon) for probabilities p."""
    with ops.name_scope(scope, "log_loss", [predictions, labels]) as s:
        labels, predictions = _labels_predictions(labels, predictions)
        dt = predictions.dtype.base_dtype
        eps = ops.convert_to_tensor(epsilon, dtype=dt, name="epsilon")
        one = ops.convert_to_tensor(1.0, dtype=dt)
        losses = (math_ops.negative(labels * math_ops.log(predictions + eps))
                  - (one - labels) * math_ops.log(one - predictions + eps))
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=_LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weighted sigmoid_cross_entropy_with_logits; label_smoothing s > 0 replaces the labels
    by labels * (1 - s) + 0.5 * s."""
    with ops.name_scope(scope, "sigmoid_cross_entropy_loss", [logits, multi_class_labels]) as s:
        labels, logits = _labels_predictions(multi_class_labels, logits, "logits")
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                          name="xentropy")
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=_LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weighted softmax cross entropy of logits [batch, classes] against one-hot (or any
    distribution) labels of the same shape; weights: per example ([batch]) or a scalar.
    label_smoothing s > 0 replaces the labels by labels * (1 - s) + s / classes. No gradient
    flows into the labels (TF 1.x)."""
    with ops.name_scope(scope, "softmax_cross_entropy_loss", [logits, onehot_labels]) as s:
        labels, logits = _labels_predictions(onehot_labels, logits, "logits")
        if label_smoothing > 0:
            classes = logits.shape.dims[-1].value if logits.shape.ndims else None
            if classes is None:
                classes = math_ops.cast(array_ops2.strided_slice(
                    array_ops.shape(labels), np.int32([-1]), np.int32([0]), np.int32([1]),
                    end_mask=1), labels.dtype)
            labels = labels * (1 - label_smoothing) + label_smoothing / classes
        labels = array_ops2.stop_gradient(labels, name="labels_stop_gradient")
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits,
                                                             name="xentropy")
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=_LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weighted softmax cross entropy of logits [d_0, ..., classes] against int labels
    [d_0, ...] in [0, classes) (a trailing labels dim of size 1 is squeezed, as TF). An
    out-of-range label is an InvalidArgumentError at run time."""
    if labels is None:
        raise ValueError("labels must not be None.")
    if logits is None:
        raise ValueError("logits must not be None.")
    with ops.name_scope(scope, "sparse_softmax_cross_entropy_loss", [logits, labels]) as s:
        labels = ops.convert_to_tensor(labels, name="labels")
        logits = ops.convert_to_tensor(logits, name="logits")
        if not labels.dtype.is_integer:
            labels = math_ops.cast(labels, dtypes.int64)
        lr, gr = labels.shape.ndims, logits.shape.ndims
        if lr is not None and gr is not None and lr == gr and labels.shape.dims[-1].value == 1:
            labels = array_ops2.squeeze(labels, [-1])
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                                 name="xentropy")
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)
