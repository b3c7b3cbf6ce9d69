"""Reductions with TF 1.x names and defaults: reduce_sum, reduce_mean, reduce_max, reduce_min,
reduce_prod, reduce_all, reduce_any (axis None = all dims; keepdims keeps reduced dims as 1),
and argmax, argmin (index of the extreme value along one axis, int64 by default)."""

import builtins

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework.op_def_library import apply_op


def _all_axes(x):
    """The axes argument for "every dim": a constant list when x's rank is known, else a Range
    over Rank(x)."""
    rank = x.shape.ndims
    if rank is not None:
        return list(builtins.range(rank))
    return apply_op("Range", start=0, limit=apply_op("Rank", input=x), delta=1)


def _v1_args(axis, keepdims, reduction_indices, keep_dims):
    """TF 1.x's deprecated spellings: reduction_indices for axis, keep_dims for keepdims
    (ValueError when both spellings of one are given, as TF); keepdims None means False."""
    if reduction_indices is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'reduction_indices'.")
        axis = reduction_indices
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'.")
        keepdims = keep_dims
    return axis, bool(keepdims)


def _reduce(op_type, default_name, input_tensor, axis, keepdims, name, dtype=None):
    with ops.name_scope(name, default_name, [input_tensor]) as scope:
        x = ops.convert_to_tensor(input_tensor, dtype=dtype, name="input_tensor")
        if axis is None:
            axis = _all_axes(x)
        elif not isinstance(axis, ops.Tensor):
            if isinstance(axis, (list, tuple)) and not axis:
                axis = np.zeros([0], np.int32)  # [] would read as float64
            axis = ops.convert_to_tensor(axis, dtype=dtypes.int32, name="reduction_indices")
        return apply_op(op_type, input=x, reduction_indices=axis, keep_dims=bool(keepdims),
                        name=scope)


def reduce_sum(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """Sum over `axis` (int or list; None = all dims); an empty reduction gives 0."""
    axis, keepdims = _v1_args(axis, keepdims, reduction_indices, keep_dims)
    return _reduce("Sum", "Sum", input_tensor, axis, keepdims, name)


def reduce_mean(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                keep_dims=None):
    """Mean over `axis`; integer inputs give the truncated integer mean, as TF."""
    axis, keepdims = _v1_args(axis, keepdims, reduction_indices, keep_dims)
    return _reduce("Mean", "Mean", input_tensor, axis, keepdims, name)


def reduce_max(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """Maximum over `axis`; NaN propagates; an empty reduction gives -inf (lowest for ints)."""
    axis, keepdims = _v1_args(axis, keepdims, reduction_indices, keep_dims)
    return _reduce("Max", "Max", input_tensor, axis, keepdims, name)


def reduce_min(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """Minimum over `axis`; NaN propagates; an empty reduction gives +inf (highest for ints)."""
    axis, keepdims = _v1_args(axis, keepdims, reduction_indices, keep_dims)
    return _reduce("Min", "Min", input_tensor, axis, keepdims, name)


def reduce_prod(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                keep_dims=None):
    """Product over `axis`; an empty reduction gives 1. Has no gradient yet."""
    axis, keepdims = _v1_args(axis, keepdims, reduction_indices, keep_dims)
    return _reduce("Prod", "Prod", input_tensor, axis, keepdims, name)


def reduce_all(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """Logical and over `axis` of a bool tensor (true when empty)."""
    axis, keepdims = _v1_args(axis, keepdims, reduction_indices, keep_dims)
    return _reduce("All", "All", input_tensor, axis, keepdims, name, dtype=dtypes.bool)


def reduce_any(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """Logical or over `axis` of a bool tensor (false when empty)."""
    axis, keepdims = _v1_args(axis, keepdims, reduction_indices, keep_dims)
    return _reduce("Any", "Any", input_tensor, axis, keepdims, name, dtype=dtypes.bool)


def _arg(op_type, input, axis, name, output_type):  # pylint: disable=redefined-builtin
    if axis is None:
        axis = 0
    with ops.name_scope(name, op_type, [input]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        if not isinstance(axis, ops.Tensor):
            axis = ops.convert_to_tensor(axis, dtype=dtypes.int32, name="dimension")
        return apply_op(op_type, input=x, dimension=axis,
                        output_type=dtypes.as_dtype(output_type), name=scope)


def argmax(input, axis=None, name=None, dimension=None,  # pylint: disable=redefined-builtin
           output_type=dtypes.int64):
    """Index of the largest value along `axis` (default 0; the first on ties)."""
    return _arg("ArgMax", input, axis if axis is not None else dimension, name, output_type)


def argmin(input, axis=None, name=None, dimension=None,  # pylint: disable=redefined-builtin
           output_type=dtypes.int64):
    """Index of the smallest value along `axis` (default 0; the first on ties)."""
    return _arg("ArgMin", input, axis if axis is not None else dimension, name, output_type)
