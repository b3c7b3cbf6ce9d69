"""Array ops: placeholders, identity, reshape, shape/size/rank, fill, zeros/ones (TF 1.x names
and defaults)."""

import numpy as np

from tensorflux.framework import constant_op
from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework import tensor_shape
from tensorflux.framework import tensor_util
from tensorflux.framework.op_def_library import apply_op

# zeros/ones with a static shape below this many elements become one Const, else a Fill.
_MAX_CONST_FILL = 1000


def placeholder(dtype, shape=None, name=None):
    """A value fed at run time: Placeholder of `dtype`; shape None means unknown rank."""
    return apply_op("Placeholder", dtype=dtypes.as_dtype(dtype),
                    shape=tensor_shape.as_shape(shape), name=name or "Placeholder")


def placeholder_with_default(input, shape, name=None):  # pylint: disable=redefined-builtin
    """`input` unless a value is fed (PlaceholderWithDefault)."""
    return apply_op("PlaceholderWithDefault", input=input, shape=tensor_shape.as_shape(shape),
                    name=name or "PlaceholderWithDefault")


def identity(input, name=None):  # pylint: disable=redefined-builtin
    return apply_op("Identity", input=input, name=name or "Identity")


def identity_n(input, name=None):  # pylint: disable=redefined-builtin
    """Each of a list of tensors, passed through (IdentityN)."""
    return apply_op("IdentityN", input=list(input), name=name or "IdentityN")


def reshape(tensor, shape, name=None):
    """`tensor` with a new shape (one dim may be -1)."""
    return apply_op("Reshape", tensor=tensor, shape=shape, name=name or "Reshape")


def shape(input, name=None, out_type=None):  # pylint: disable=redefined-builtin
    """The shape of `input` as a 1-D int32 (or int64) tensor (out_type None: int32)."""
    return apply_op("Shape", input=input, out_type=out_type or dtypes.int32,
                    name=name or "Shape")


def size(input, name=None, out_type=None):  # pylint: disable=redefined-builtin
    """The number of elements of `input` as a scalar (out_type None: int32)."""
    return apply_op("Size", input=input, out_type=out_type or dtypes.int32,
                    name=name or "Size")


def rank(input, name=None):  # pylint: disable=redefined-builtin
    """The rank of `input` as an int32 scalar."""
    return apply_op("Rank", input=input, name=name or "Rank")


def _check_layout(where, layout):
    if layout is not None:
        raise NotImplementedError("tx.%s: layout (a DTensor layout) is not supported" % where)


def fill(dims, value, name=None, layout=None):
    """A tensor of shape `dims` (1-D int32/int64) filled with the scalar `value`. layout
    (TF's DTensor layout) is not supported."""
    _check_layout("fill", layout)
    return apply_op("Fill", dims=dims, value=value, name=name or "Fill")


def _filled(shape_value, dtype, scalar, name):
    dtype = dtypes.as_dtype(dtype).base_dtype
    static = None
    if isinstance(shape_value, tensor_shape.TensorShape):
        static = shape_value.as_list() if shape_value.is_fully_defined() else None
    elif isinstance(shape_value, (list, tuple)) and \
            not any(isinstance(d, ops.Tensor) for d in shape_value):
        static = [tensor_shape.dimension_value(d) for d in shape_value]
    elif isinstance(shape_value, ops.Tensor):
        v = tensor_util.constant_value(shape_value)
        static = None if v is None else [int(d) for d in np.reshape(v, -1)]
    elif isinstance(shape_value, (int, np.integer, np.ndarray)):
        static = [int(d) for d in np.reshape(shape_value, -1)]
    if static is not None and all(d is not None for d in static) and \
            int(np.prod(static, dtype=np.int64)) < _MAX_CONST_FILL:
        return constant_op.constant(scalar, dtype=dtype, shape=static, name=name)
    with ops.name_scope(name) as scope:
        dims = ops.convert_to_tensor(static if static is not None else shape_value,
                                     dtype=dtypes.int32 if static is not None else None,
                                     name="shape")
        return fill(dims, constant_op.constant(scalar, dtype=dtype), name=scope)


def _scalar(dtype, value):
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype == dtypes.string:
        if value:
            raise TypeError("tx.ones is not defined for strings")
        return b""
    return np.array(value, dtype=dtype.as_numpy_dtype)


# pylint: disable-next=redefined-outer-name
def zeros(shape, dtype=dtypes.float32, name=None, layout=None):
    """A tensor of `shape` filled with zeros (layout: not supported)."""
    _check_layout("zeros", layout)
    return _filled(shape, dtype, _scalar(dtype, 0), name or "zeros")


# pylint: disable-next=redefined-outer-name
def ones(shape, dtype=dtypes.float32, name=None, layout=None):
    """A tensor of `shape` filled with ones (layout: not supported)."""
    _check_layout("ones", layout)
    return _filled(shape, dtype, _scalar(dtype, 1), name or "ones")


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    """Zeros with the shape (and by default the dtype) of `tensor` (ZerosLike)."""
    with ops.name_scope(name, "zeros_like", [tensor]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        if dtype is not None and dtypes.as_dtype(dtype).base_dtype != tensor.dtype.base_dtype:
            return zeros(shape(tensor), dtype=dtype, name=scope)
        return apply_op("ZerosLike", x=tensor, name=scope)


def ones_like(tensor, dtype=None, name=None, optimize=True):
    """Ones with the shape (and by default the dtype) of `tensor` (OnesLike)."""
    with ops.name_scope(name, "ones_like", [tensor]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        if dtype is not None and dtypes.as_dtype(dtype).base_dtype != tensor.dtype.base_dtype:
            return ones(shape(tensor), dtype=dtype, name=scope)
        return apply_op("OnesLike", x=tensor, name=scope)
