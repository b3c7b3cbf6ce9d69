"""Array ops that rearrange, slice and index tensors (TF 1.x names, arguments and defaults):
transpose, concat, split, slice, strided_slice, stack/unstack, expand_dims, squeeze, tile, pad,
gather, gather_nd, scatter_nd, one_hot, range, shape_n, stop_gradient, broadcast_to,
unsorted_segment_sum, dynamic_stitch, invert_permutation, and Tensor.__getitem__ (NumPy-style
basic indexing mapped to StridedSlice: ints, slices, Ellipsis, tx.newaxis, scalar int tensors).
"""

import builtins
import numbers

import numpy as np

from tensorflux.framework import constant_op
from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework.op_def_library import apply_op

newaxis = None

_INT32_MIN, _INT32_MAX = -2 ** 31, 2 ** 31 - 1


def transpose(a, perm=None, name="transpose", conjugate=False):
    """Permutes the dims of `a`: output dim i is input dim perm[i]; perm None reverses them.
    conjugate: changes nothing for real dtypes (as TF); for complex ones it is not supported
    (NotImplementedError)."""
    with ops.name_scope(name, "transpose", [a]) as scope:
        a = ops.convert_to_tensor(a, name="a")
        if conjugate and a.dtype.is_complex:
            raise NotImplementedError("tx.transpose: conjugate=True is not supported for "
                                      "complex tensors")
        if perm is None:
            rank = a.shape.ndims
            if rank is not None:
                perm = list(builtins.range(rank - 1, -1, -1))
            else:
                r = apply_op("Rank", input=a)
                perm = apply_op("Range", start=r - 1, limit=-1, delta=-1)
        return apply_op("Transpose", x=a, perm=perm, name=scope)


def concat(values, axis, name="concat"):
    """Joins a list of tensors along `axis` (ConcatV2; negative axes count from the end)."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        with ops.name_scope(name) as scope:
            t = ops.convert_to_tensor(values[0])
            return apply_op("Identity", input=t, name=scope)
    return apply_op("ConcatV2", values=list(values), axis=axis, name=name)


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits `value` along `axis` into num_or_size_splits equal parts (an int: Split) or into
    parts of the given sizes (a list or 1-D tensor, one entry may be -1: SplitV)."""
    if isinstance(num_or_size_splits, (numbers.Integral, np.integer)) and \
            not isinstance(num_or_size_splits, bool):
        return apply_op("Split", split_dim=axis, value=value,
                        num_split=int(num_or_size_splits), name=name)
    if num is None:
        if isinstance(num_or_size_splits, ops.Tensor):
            n = num_or_size_splits.shape.as_list() if num_or_size_splits.shape.ndims else None
            num = n[0] if n else None
        else:
            num = len(num_or_size_splits)
        if num is None:
            raise ValueError("Cannot infer argument `num` from shape %s"
                             % num_or_size_splits.shape)
    size_splits = num_or_size_splits
    if not isinstance(size_splits, ops.Tensor):
        size_splits = np.asarray(size_splits, dtype=np.int64)
    return apply_op("SplitV", value=value, size_splits=size_splits, split_dim=axis,
                    num_split=int(num), name=name)


def slice(input_, begin, size, name=None):  # pylint: disable=redefined-builtin
    """input_[begin[d] : begin[d] + size[d]] in every dim d; size[d] = -1 takes the rest."""
    return apply_op("Slice", input=input_, begin=begin, size=size, name=name or "Slice")


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """StridedSlice with TF's mask semantics (see tx.Tensor.__getitem__ for the friendly form)."""
    if strides is None:
        strides = ones_like_index(begin)
    return apply_op("StridedSlice", input=input_, begin=begin, end=end, strides=strides,
                    begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                    new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask,
                    name=name or "StridedSlice")


def ones_like_index(begin):
    if isinstance(begin, ops.Tensor):
        return apply_op("OnesLike", x=begin)
    return np.ones(np.shape(begin), dtype=np.asarray(begin).dtype if np.size(begin) else np.int32)


def stack(values, axis=0, name="stack"):
    """Stacks tensors of one shape along a new dim `axis` (Pack)."""
    return apply_op("Pack", values=list(values), axis=axis, name=name)


def unstack(value, num=None, axis=0, name="unstack"):
    """The slices of `value` along `axis` (Unpack); num defaults to the static dim size."""
    value = ops.convert_to_tensor(value)
    if num is None:
        shape = value.shape
        if shape.ndims is None:
            raise ValueError("Cannot infer num from shape %s" % shape)
        if axis < -shape.ndims or axis >= shape.ndims:
            raise ValueError("axis = %d not in [%d, %d)" % (axis, -shape.ndims, shape.ndims))
        num = shape.as_list()[axis]
        if num is None:
            raise ValueError("Cannot infer num from shape %s" % shape)
    return apply_op("Unpack", value=value, num=num, axis=axis, name=name)


def expand_dims(input, axis=None, name=None, dim=None):  # pylint: disable=redefined-builtin
    """Inserts a dim of size 1 at `axis` (in [-rank - 1, rank])."""
    if axis is None:
        axis = dim
    if axis is None:
        raise ValueError("Must specify an axis argument to tx.expand_dims()")
    return apply_op("ExpandDims", input=input, dim=axis, name=name or "ExpandDims")


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # pylint: disable=redefined-builtin
    """Removes size-1 dims: those listed in `axis`, or all of them."""
    if axis is None:
        axis = squeeze_dims
    if axis is None:
        axis = []
    if isinstance(axis, (numbers.Integral, np.integer)):
        axis = [int(axis)]
    return apply_op("Squeeze", input=input, squeeze_dims=[int(a) for a in axis],
                    name=name or "Squeeze")


def tile(input, multiples, name=None):  # pylint: disable=redefined-builtin
    """Repeats `input` multiples[d] times along each dim d."""
    return apply_op("Tile", input=input, multiples=multiples, name=name or "Tile")


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """Pads with constant_values; paddings is [rank, 2] (before, after) per dim."""
    if mode.upper() != "CONSTANT":
        raise NotImplementedError("tx.pad supports mode='CONSTANT' only, got %r" % mode)
    is_zero = (not isinstance(constant_values, ops.Tensor) and
               np.all(np.asarray(constant_values) == 0) and
               np.asarray(constant_values).dtype.kind not in "OSU")
    if is_zero:
        return apply_op("Pad", input=tensor, paddings=paddings, name=name or "Pad")
    with ops.name_scope(name, "Pad", [tensor]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        constant_values = ops.convert_to_tensor(constant_values, dtype=tensor.dtype,
                                                name="constant_values")
        return apply_op("PadV2", input=tensor, paddings=paddings,
                        constant_values=constant_values, name=scope)


def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """Slices of params along `axis` at `indices` (GatherV2); out-of-range indices raise
    InvalidArgumentError when run."""
    if axis is None:
        axis = batch_dims
    return apply_op("GatherV2", params=params, indices=indices, axis=axis, batch_dims=batch_dims,
                    name=name or "GatherV2")


def gather_nd(params, indices, name=None, batch_dims=0):
    """params[indices[..., :]] (GatherNd)."""
    if batch_dims != 0:
        raise NotImplementedError("tx.gather_nd supports batch_dims=0 only")
    return apply_op("GatherNd", params=params, indices=indices, name=name or "GatherNd")


def scatter_nd(indices, updates, shape, name=None):
    """Zeros of `shape` with `updates` added at `indices` (duplicates sum)."""
    return apply_op("ScatterNd", indices=indices, updates=updates, shape=shape,
                    name=name or "ScatterNd")


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """on_value where a new `depth`-sized dim (at `axis`, default last) equals the index,
    off_value elsewhere; dtype defaults to on/off_value's type, else float32."""
    with ops.name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        given = [v for v in (on_value, off_value) if v is not None]
        if dtype is None:
            dtype = _range_dtype(given[0]) if given else dtypes.float32
            for v in given:
                if isinstance(v, ops.Tensor):
                    dtype = v.dtype.base_dtype
                    break
        dtype = dtypes.as_dtype(dtype)
        on = ops.convert_to_tensor(1 if on_value is None else on_value, dtype=dtype,
                                   name="on_value")
        off = ops.convert_to_tensor(0 if off_value is None else off_value, dtype=dtype,
                                    name="off_value")
        return apply_op("OneHot", indices=indices, depth=depth, on_value=on, off_value=off,
                        axis=-1 if axis is None else axis, name=scope)


_RANGE_ORDER = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]


def _range_dtype(v):
    if isinstance(v, ops.Tensor):
        return v.dtype.base_dtype
    a = np.asarray(v)
    if a.dtype.kind == "f":
        return dtypes.float32 if isinstance(v, float) else dtypes.as_dtype(a.dtype)
    if a.dtype.kind in "SUO":
        return dtypes.string
    if a.dtype.kind in "iu":
        return dtypes.int32 if _INT32_MIN <= int(a) <= _INT32_MAX else dtypes.int64
    return dtypes.as_dtype(a.dtype)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # pylint: disable=redefined-builtin
    """[start, start + delta, ...) below `limit` (Range); range(n) counts from 0. The dtype is
    the widest of the arguments' (int32 < int64 < float32 < float64) unless given."""
    if limit is None:
        start, limit = 0, start
    with ops.name_scope(name, "Range", [start, limit, delta]) as scope:
        if dtype is None:
            kinds = [_range_dtype(v) for v in (start, limit, delta)]
            dtype = max(kinds, key=lambda d: _RANGE_ORDER.index(d) if d in _RANGE_ORDER else -1)
        dtype = dtypes.as_dtype(dtype)

        def conv(v, n):
            if isinstance(v, ops.Tensor) and v.dtype.base_dtype != dtype:
                return apply_op("Cast", x=v, DstT=dtype)
            return ops.convert_to_tensor(v, dtype=dtype, name=n)
        return apply_op("Range", start=conv(start, "start"), limit=conv(limit, "limit"),
                        delta=conv(delta, "delta"), name=scope)


def shape_n(input, out_type=dtypes.int32, name=None):  # pylint: disable=redefined-builtin
    """The shapes of a list of tensors (ShapeN)."""
    return apply_op("ShapeN", input=list(input), out_type=out_type, name=name or "ShapeN")


def stop_gradient(input, name=None):  # pylint: disable=redefined-builtin
    """`input`, through which tx.gradients passes no gradient."""
    return apply_op("StopGradient", input=input, name=name or "StopGradient")


def broadcast_to(input, shape, name=None):  # pylint: disable=redefined-builtin
    """`input` broadcast to `shape` by NumPy rules."""
    return apply_op("BroadcastTo", input=input, shape=shape, name=name or "BroadcastTo")


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """output[s] = sum of data[i] with segment_ids[i] == s; negative ids are dropped."""
    return apply_op("UnsortedSegmentSum", data=data, segment_ids=segment_ids,
                    num_segments=num_segments, name=name or "UnsortedSegmentSum")


def dynamic_stitch(indices, data, name=None):
    """merged[indices[m][i]] = data[m][i]; later entries win (DynamicStitch)."""
    return apply_op("DynamicStitch", indices=list(indices), data=list(data),
                    name=name or "DynamicStitch")


def invert_permutation(x, name=None):
    return apply_op("InvertPermutation", x=x, name=name or "InvertPermutation")


# ---------------------------------------------------------------- Tensor.__getitem__

def _check_index(idx):
    """Ints and scalar int32/int64 tensors are valid single indices."""
    if isinstance(idx, (numbers.Integral, np.integer)) and not isinstance(idx, bool):
        return
    if isinstance(idx, ops.Tensor) and idx.dtype.base_dtype in (dtypes.int32, dtypes.int64) \
            and idx.shape.ndims in (None, 0):
        return
    raise TypeError("Only integers, slices (`:`), ellipsis (`...`), tx.newaxis (`None`) and "
                    "scalar tx.int32/tx.int64 tensors are valid indices, got %r" % (idx,))


def _pack_indices(values, name):
    """A 1-D int32 (or int64) index vector from ints and scalar tensors."""
    if not any(isinstance(v, ops.Tensor) for v in values):
        wide = any(not _INT32_MIN <= int(v) <= _INT32_MAX for v in values)
        return constant_op.constant(np.array([int(v) for v in values],
                                             dtype=np.int64 if wide else np.int32), name=name)
    wide = any(isinstance(v, ops.Tensor) and v.dtype.base_dtype == dtypes.int64 for v in values)
    dtype = dtypes.int64 if wide else dtypes.int32
    converted = []
    for v in values:
        if isinstance(v, ops.Tensor):
            converted.append(v if v.dtype.base_dtype == dtype else apply_op("Cast", x=v, DstT=dtype))
        else:
            converted.append(constant_op.constant(int(v), dtype=dtype))
    return stack(converted, name=name)


def _slice_helper(tensor, slice_spec):
    """tensor[slice_spec] with NumPy's basic indexing, as one StridedSlice."""
    if isinstance(slice_spec, bool) or \
            (isinstance(slice_spec, ops.Tensor) and slice_spec.dtype == dtypes.bool) or \
            (isinstance(slice_spec, np.ndarray) and slice_spec.dtype == bool):
        raise TypeError("Boolean-mask indexing is not supported; use a tx.gather instead")
    if not isinstance(slice_spec, (list, tuple)):
        slice_spec = [slice_spec]
    begin, end, strides = [], [], []
    begin_mask = end_mask = ellipsis_mask = new_axis_mask = shrink_axis_mask = 0
    for index, s in enumerate(slice_spec):
        bit = 1 << index
        if isinstance(s, builtins.slice):
            if s.start is not None:
                _check_index(s.start)
                begin.append(s.start)
            else:
                begin.append(0)
                begin_mask |= bit
            if s.stop is not None:
                _check_index(s.stop)
                end.append(s.stop)
            else:
                end.append(0)
                end_mask |= bit
            if s.step is not None:
                _check_index(s.step)
                strides.append(s.step)
            else:
                strides.append(1)
        elif s is Ellipsis:
            begin.append(0)
            end.append(0)
            strides.append(1)
            ellipsis_mask |= bit
        elif s is newaxis:
            begin.append(0)
            end.append(0)
            strides.append(1)
            new_axis_mask |= bit
        else:
            _check_index(s)
            begin.append(s)
            end.append(s + 1)
            strides.append(1)
            shrink_axis_mask |= bit
    with ops.name_scope(None, "strided_slice", [tensor]) as name:
        tensor = ops.convert_to_tensor(tensor)
        if begin:
            packed = [_pack_indices(v, n) for v, n in ((begin, "stack"), (end, "stack_1"),
                                                        (strides, "stack_2"))]
            if any(p.dtype == dtypes.int64 for p in packed):
                packed = [p if p.dtype == dtypes.int64 else apply_op("Cast", x=p, DstT=dtypes.int64)
                          for p in packed]
        else:
            empty = constant_op.constant(np.zeros([0], np.int32))
            packed = [empty, empty, empty]
        return strided_slice(tensor, packed[0], packed[1], packed[2], begin_mask=begin_mask,
                             end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                             new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask,
                             name=name)


ops.Tensor.__getitem__ = _slice_helper

