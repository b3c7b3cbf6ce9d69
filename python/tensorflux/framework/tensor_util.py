"""numpy / Python values <-> TensorProto, and static evaluation of constant tensors."""

import numpy as np

from tensorflux import tensor_pb2
from tensorflux.framework import dtypes
from tensorflux.framework import tensor_shape
from tensorflux.framework import _pywrap

# TensorProto field holding each dtype's values (see spec: int_val covers the small ints).
_TYPED_FIELD = {
    dtypes.float32: "float_val",
    dtypes.float64: "double_val",
    dtypes.int8: "int_val",
    dtypes.int16: "int_val",
    dtypes.int32: "int_val",
    dtypes.uint8: "int_val",
    dtypes.uint16: "int_val",
    dtypes.int64: "int64_val",
    dtypes.uint32: "uint32_val",
    dtypes.uint64: "uint64_val",
    dtypes.bool: "bool_val",
    dtypes.float16: "half_val",
    dtypes.bfloat16: "half_val",
    dtypes.string: "string_val",
}


def _contains_tensor(value):
    from tensorflux.framework import ops  # pylint: disable=g-import-not-at-top
    if isinstance(value, (ops.Tensor, ops.Operation)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_tensor(v) for v in value)
    return False


def _flat_python(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _flat_python(v)
    else:
        yield value


def _as_bytes(v):
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, np.bytes_):
        return bytes(v)
    if isinstance(v, np.str_):
        return str(v).encode("utf-8")
    raise TypeError("Expected string or bytes, got %r of type '%s' instead."
                    % (v, type(v).__name__))


def _python_to_numpy(values, dtype):
    """A Python scalar / nested list -> ndarray, with TF's defaults (float -> float32, int ->
    int32 unless it needs int64) and TF's compatibility checks when `dtype` is given."""
    try:
        arr = np.array(values)
    except ValueError as e:
        raise ValueError("Argument must be a dense tensor: %r - got shape inconsistent with "
                         "its elements (%s)." % (values, e))
    if arr.dtype == object and arr.size and not all(
            isinstance(v, (bytes, str)) for v in arr.flat):
        raise TypeError("Failed to convert elements of %r to Tensor. Consider casting elements "
                        "to a supported type." % (values,))
    if dtype is None:
        if arr.dtype.kind == "f":
            return arr.astype(np.float32)
        if arr.dtype.kind in "iu":
            info = np.iinfo(np.int32)
            if arr.size == 0 or (arr.min() >= info.min and arr.max() <= info.max):
                return arr.astype(np.int32)
            return arr.astype(np.int64)
        if arr.dtype.kind in "OSU":
            return np.array([_as_bytes(v) for v in arr.flat], dtype=object).reshape(arr.shape)
        if arr.dtype.kind == "b":
            return arr
        raise TypeError("Cannot convert %r to a Tensor: unsupported type %s" % (values, arr.dtype))
    if dtype == dtypes.string:
        if arr.size and arr.dtype.kind not in "OSU":
            raise TypeError("Expected string, got %r of type '%s' instead."
                            % (next(iter(_flat_python(values))), arr.dtype))
        return np.array([_as_bytes(v) for v in arr.flat], dtype=object).reshape(arr.shape)
    if arr.dtype.kind in "OSU" and arr.size:
        raise TypeError("Expected %s, got %r of type 'str' instead." % (dtype.name, values))
    if (dtype.is_integer or dtype.is_bool) and arr.dtype.kind == "f" and arr.size:
        bad = next(v for v in _flat_python(values) if isinstance(v, float))
        raise TypeError("Expected %s, got %r of type 'float' instead." % (dtype.name, bad))
    if dtype.is_bool and arr.dtype.kind in "iu":
        raise TypeError("Expected bool, got %r of type 'int' instead." % (values,))
    if dtype.is_integer and arr.dtype.kind in "iu" and arr.size:
        info = np.iinfo(dtype.as_numpy_dtype)
        if int(arr.min()) < info.min or int(arr.max()) > info.max:
            raise TypeError("Value %r is out of range for %s." % (values, dtype.name))
    return arr.astype(dtype.as_numpy_dtype)


def _to_numpy(values, dtype):
    if _contains_tensor(values):
        raise TypeError("Cannot build a constant from a value containing a tx.Tensor (%r); use "
                        "the tensor itself or tx.identity." % (values,))
    if isinstance(values, (np.ndarray, np.generic)):
        arr = np.asarray(values)
        if dtype is None:
            if arr.dtype.kind in "OSU":
                return np.array([_as_bytes(v) for v in arr.flat],
                                dtype=object).reshape(arr.shape)
            dtypes.as_dtype(arr.dtype)  # TypeError for unsupported numpy types
            return arr
        if dtype == dtypes.string:
            return np.array([_as_bytes(v) for v in arr.flat], dtype=object).reshape(arr.shape)
        if arr.dtype.kind in "OSU":
            raise TypeError("Cannot convert a string array to %s" % dtype.name)
        return arr.astype(dtype.as_numpy_dtype)
    return _python_to_numpy(values, dtype)


def _set_typed_values(proto, dtype, flat):
    field = _TYPED_FIELD.get(dtype)
    if field is None:
        raise TypeError("Cannot make a TensorProto of type %s" % dtype.name)
    if dtype == dtypes.float16:
        values = np.asarray(flat, dtype=np.float16).view(np.uint16).astype(np.int32)
    elif dtype == dtypes.bfloat16:
        values = dtypes.bfloat16_bits(flat).astype(np.int32)
    elif dtype == dtypes.string:
        getattr(proto, field).extend(flat)
        return
    else:
        values = np.asarray(flat, dtype=dtype.as_numpy_dtype)
    getattr(proto, field).extend(values.tolist())


def _content_bytes(arr, dtype):
    if dtype == dtypes.bfloat16:
        return dtypes.bfloat16_bits(arr).astype("<u2").tobytes()
    np_dtype = np.dtype(dtype.as_numpy_dtype).newbyteorder("<")
    return np.ascontiguousarray(arr, dtype=np_dtype).tobytes()


def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False, allow_broadcast=False):
    """Builds a TensorProto from a Python or numpy value.

    With `shape`, a value with fewer elements than the shape is stored as is and the last value
    repeats to fill (TF 1.x Const rule: a scalar fills the whole shape); more elements than the
    shape is a ValueError. dtype defaults to the value's type (Python float -> float32, int ->
    int32 or int64, str/bytes -> string). verify_shape: the value's shape must be `shape`
    (TypeError otherwise). allow_broadcast: only a one-element value fills `shape`; any other
    value must have exactly that shape (TypeError otherwise), as TF; not with verify_shape.
    """
    if verify_shape and allow_broadcast:
        raise ValueError("allow_broadcast and verify_shape are not both allowed.")
    if isinstance(values, tensor_pb2.TensorProto):
        return values
    dtype = None if dtype is None else dtypes.as_dtype(dtype).base_dtype
    if dtype == dtypes.bfloat16:
        arr = _to_numpy(values, dtypes.float32)
    else:
        arr = _to_numpy(values, dtype)
    if dtype is None:
        dtype = dtypes.as_dtype(arr.dtype)
    if arr.dtype == object and dtype != dtypes.string:
        raise TypeError("Cannot convert %r to %s" % (values, dtype.name))

    if shape is None:
        dims = list(arr.shape)
    else:
        dims = tensor_shape.as_shape(shape).as_list()
        if any(d is None for d in dims):
            raise ValueError("Constant shape must be fully defined, got %s" % (shape,))
    num_elements = int(np.prod(dims, dtype=np.int64)) if dims else 1
    if verify_shape and list(arr.shape) != dims:
        raise TypeError("Expected Tensor's shape: %s, got %s." % (tuple(dims), arr.shape))
    if allow_broadcast and shape is not None and arr.size != 1 and list(arr.shape) != dims:
        raise TypeError("Expected Tensor's shape: %s, but got %s." % (tuple(dims), arr.shape))

    proto = tensor_pb2.TensorProto(dtype=dtype.as_datatype_enum,
                                   tensor_shape=tensor_shape.TensorShape(dims).as_proto())
    flat = arr.reshape(-1)
    if num_elements == 0 and arr.size <= 1:
        pass  # an empty tensor: a (broadcast) scalar contributes no values
    elif arr.size == num_elements:
        if num_elements > 1 and dtype != dtypes.string:
            proto.tensor_content = _content_bytes(flat, dtype)
        else:
            _set_typed_values(proto, dtype, list(flat))
    elif arr.size == 0:
        raise ValueError("Cannot fill a tensor of shape %s from an empty value." % (dims,))
    elif arr.size < num_elements:
        _set_typed_values(proto, dtype, list(flat))
    else:
        raise ValueError("Too many elements provided. Needed at most %d, but received %d"
                         % (num_elements, arr.size))
    return proto


def MakeNdarray(tensor):  # pylint: disable=invalid-name
    """The numpy value of a TensorProto, decoded by the engine's rules (bfloat16 -> float32,
    strings -> object array of bytes)."""
    return _pywrap.tensor_proto_to_ndarray(tensor.SerializeToString())


make_ndarray = MakeNdarray


def constant_value(tensor, partial=False):
    """The value of `tensor` when it can be computed without running the graph (Const, and
    Shape/Size/Rank of a statically known shape, through Identity and Cast), else None.
    partial: TF may then return arrays with unknown (None) entries for ops such as Pack; none
    of the ops evaluated here is partial, so it changes nothing."""
    del partial  # the ops evaluated here are all or nothing (docstring)
    from tensorflux.framework import ops  # pylint: disable=g-import-not-at-top
    if not isinstance(tensor, ops.Tensor):
        return np.asarray(tensor)
    op = tensor.op
    kind = op.type
    if kind == "Const":
        if op._const_value is None:
            op._const_value = MakeNdarray(op._node_def.attr["value"].tensor)
        return op._const_value
    if kind in ("Shape", "Size", "Rank"):
        shape = op.inputs[0].shape
        np_type = tensor.dtype.as_numpy_dtype
        if kind == "Rank":
            return None if shape.ndims is None else np.array(shape.ndims, dtype=np_type)
        if not shape.is_fully_defined():
            return None
        if kind == "Shape":
            return np.array(shape.as_list(), dtype=np_type)
        return np.array(shape.num_elements(), dtype=np_type)
    if kind == "Identity":
        return constant_value(op.inputs[0])
    if kind == "Cast":
        v = constant_value(op.inputs[0])
        if v is None or tensor.dtype == dtypes.string or v.dtype == object:
            return None
        return v.astype(tensor.dtype.as_numpy_dtype)
    return None


def is_tensor(x):
    from tensorflux.framework import ops  # pylint: disable=g-import-not-at-top
    return isinstance(x, ops.Tensor)


__all__ = ["make_tensor_proto", "MakeNdarray", "make_ndarray", "constant_value", "is_tensor"]
