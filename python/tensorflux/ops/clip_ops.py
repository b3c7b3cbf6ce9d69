"""Gradient clipping (TF 1.x names, arguments and formulas): clip_by_value (the ClipByValue op,
defined in math_ops2), clip_by_norm, global_norm, clip_by_global_norm.

    clip_by_norm(t, c, axes):   t * c / max(||t||_axes, c)      (t unchanged when ||t|| <= c)
    global_norm([t_1..t_n]):    sqrt(sum_i sum(t_i ** 2))        (None entries skipped)
    clip_by_global_norm(ts, c): t_i * c / max(global_norm, c)    (None entries passed through)

All are ordinary graph computations, so gradients flow through them. As in TF, when the global
norm is Inf or NaN every clipped tensor is NaN (the step is poisoned rather than silently skipped).
"""

from tensorflux.framework import ops
from tensorflux.ops import array_ops
from tensorflux.ops import array_ops2
from tensorflux.ops import math_ops
from tensorflux.ops import math_ops2
from tensorflux.ops import nn_ops
from tensorflux.ops import reduction_ops

clip_by_value = math_ops2.clip_by_value


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t scaled so that its L2 norm over `axes` (None: all dims) is at most clip_norm:
    t * clip_norm / max(l2norm(t, axes), clip_norm). With `axes`, each slice is clipped on its
    own (the norm keeps the reduced dims, so it broadcasts against t). clip_norm: a positive
    0-D (scalar) tensor or number. An all-zero slice stays zero (its norm's gradient is kept
    finite as in TF: the square root is taken of 1 where the sum of squares is 0)."""
    with ops.name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        t = ops.convert_to_tensor(t, name="t")
        clip_norm = ops.convert_to_tensor(clip_norm, dtype=t.dtype.base_dtype, name="clip_norm")
        if clip_norm.shape.ndims not in (None, 0):
            raise ValueError("clip_norm must be a scalar, got shape %s" % clip_norm.shape)
        l2sum = reduction_ops.reduce_sum(t * t, axes, keepdims=True)
        positive = math_ops2.greater(l2sum, array_ops.zeros_like(l2sum))
        l2sum_safe = math_ops2.where_v2(positive, l2sum, array_ops.ones_like(l2sum))
        l2norm = math_ops2.where_v2(positive, math_ops.sqrt(l2sum_safe), l2sum)
        clipped = (t * clip_norm) / math_ops.maximum(l2norm, clip_norm)
        return array_ops.identity(clipped, name=scope)


def _non_none(t_list, fn):
    if isinstance(t_list, ops.Tensor) or not isinstance(t_list, (list, tuple)):
        raise TypeError("%s: t_list should be a sequence of tensors, got %r" % (fn, t_list))
    return [ops.convert_to_tensor(t, name="t_%d" % i) for i, t in enumerate(t_list)
            if t is not None]


def global_norm(t_list, name=None):
    """sqrt(sum over the tensors of sum(t ** 2)): the L2 norm of all of t_list's values as one
    vector. None entries are ignored; tensors may have different shapes (one float dtype).
    Computed as TF does, from L2Loss (half the squared norm) of each tensor, in that dtype."""
    with ops.name_scope(name, "global_norm", [t for t in t_list if t is not None]
                        if isinstance(t_list, (list, tuple)) else []) as scope:
        tensors = _non_none(t_list, "global_norm")
        if not tensors:
            raise ValueError("global_norm: t_list has no tensors (all None)")
        halves = [nn_ops.l2_loss(t) for t in tensors]
        half_squared = reduction_ops.reduce_sum(array_ops2.stack(halves))
        two = ops.convert_to_tensor(2.0, dtype=half_squared.dtype.base_dtype)
        return math_ops.sqrt(half_squared * two, name=scope)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales every tensor of t_list by clip_norm / max(global_norm(t_list), clip_norm).

    Returns (list_clipped, global_norm): list_clipped has t_list's length, with None entries
    passed through as None; global_norm is the norm before clipping (use_norm when given, which
    then replaces the computed one). When the norm is Inf or NaN every clipped tensor is NaN."""
    if isinstance(t_list, ops.Tensor) or not isinstance(t_list, (list, tuple)):
        raise TypeError("clip_by_global_norm: t_list should be a sequence, got %r" % (t_list,))
    t_list = list(t_list)
    values = [t for t in t_list if t is not None]
    with ops.name_scope(name, "clip_by_global_norm", values + [clip_norm]) as scope:
        if use_norm is None:
            use_norm = global_norm(t_list, name="global_norm")
        use_norm = ops.convert_to_tensor(use_norm, name="use_norm")
        dtype = use_norm.dtype.base_dtype
        clip_norm = ops.convert_to_tensor(clip_norm, dtype=dtype, name="clip_norm")
        one = ops.convert_to_tensor(1.0, dtype=dtype)
        # clip_norm * min(1 / norm, 1 / clip_norm); (norm - norm) makes Inf/NaN norms give NaN.
        scale_finite = clip_norm * math_ops.minimum(one / use_norm, one / clip_norm)
        scale = scale_finite + (use_norm - use_norm)
        clipped = []
        for i, t in enumerate(t_list):
            if t is None:
                clipped.append(None)
                continue
            t = ops.convert_to_tensor(t, name="t_%d" % i)
            s = scale if t.dtype.base_dtype == dtype else math_ops.cast(scale, t.dtype)
            clipped.append(array_ops.identity(t * s, name="%s_%d" % (scope.rstrip("/"), i)))
        return clipped, use_norm
