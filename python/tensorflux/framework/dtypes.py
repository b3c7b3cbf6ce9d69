"""Element types (tx.float32, tx.int32, ...) with TensorFlow's DataType enum values.

bfloat16 has no numpy type: its values are represented in numpy as float32 (exact widening), and
float values fed or given to constants are rounded to the nearest bfloat16 (ties to even).
"""

import builtins

import numpy as np

from tensorflux import types_pb2


class DType:
    """An element type: name, numpy type and DataType enum (tx.float32, tx.int64, ...)."""

    __slots__ = ("_type_enum",)

    def __init__(self, type_enum, handle_data=None):
        if handle_data is not None:
            raise NotImplementedError("tx.DType: handle_data (the shapes and dtypes a resource "
                                      "handle refers to) is not supported")
        type_enum = int(type_enum)
        if type_enum not in _TYPE_TO_NAME:
            raise TypeError("%d does not correspond to a valid tx.DType" % type_enum)
        self._type_enum = type_enum

    @property
    def _is_ref_dtype(self):
        return self._type_enum > 100

    @property
    def _as_ref(self):
        return self if self._is_ref_dtype else as_dtype(self._type_enum + 100)

    @property
    def base_dtype(self):
        """The non-reference type: float32 for float32_ref."""
        return as_dtype(self._type_enum - 100) if self._is_ref_dtype else self

    @property
    def real_dtype(self):
        return self.base_dtype

    @property
    def as_datatype_enum(self):
        return self._type_enum

    @property
    def name(self):
        return _TYPE_TO_NAME[self._type_enum]

    @property
    def as_numpy_dtype(self):
        """The numpy scalar type (np.float32, ...); object for strings, float32 for bfloat16."""
        return _TO_NUMPY[self.base_dtype._type_enum]

    @property
    def is_bool(self):
        return self.base_dtype._type_enum == types_pb2.DT_BOOL

    @property
    def is_floating(self):
        return self.base_dtype._type_enum in (types_pb2.DT_HALF, types_pb2.DT_BFLOAT16,
                                             types_pb2.DT_FLOAT, types_pb2.DT_DOUBLE)

    @property
    def is_integer(self):
        return self.base_dtype._type_enum in _INTEGER_TYPES

    @property
    def is_unsigned(self):
        return self.base_dtype._type_enum in (types_pb2.DT_UINT8, types_pb2.DT_UINT16,
                                             types_pb2.DT_UINT32, types_pb2.DT_UINT64,
                                             types_pb2.DT_BOOL)

    @property
    def is_complex(self):
        return self.base_dtype._type_enum in (types_pb2.DT_COMPLEX64, types_pb2.DT_COMPLEX128)

    @property
    def is_numpy_compatible(self):
        return self.base_dtype._type_enum in _TO_NUMPY

    @property
    def size(self):
        """Bytes per element (1 for bool); 0 for types without a fixed size."""
        e = self.base_dtype._type_enum
        if e in (types_pb2.DT_STRING, types_pb2.DT_RESOURCE, types_pb2.DT_VARIANT):
            return 0
        if e == types_pb2.DT_BFLOAT16:
            return 2
        if e in _TO_NUMPY:
            return np.dtype(_TO_NUMPY[e]).itemsize
        return 0

    @property
    def min(self):
        if self.is_floating:
            if self.base_dtype == bfloat16:
                return float(-3.3895313892515355e38)
            return np.finfo(self.as_numpy_dtype).min
        if self.is_integer:
            return np.iinfo(self.as_numpy_dtype).min
        if self.is_bool:
            return False
        raise TypeError("Cannot find minimum value of %s." % self)

    @property
    def max(self):
        if self.is_floating:
            if self.base_dtype == bfloat16:
                return float(3.3895313892515355e38)
            return np.finfo(self.as_numpy_dtype).max
        if self.is_integer:
            return np.iinfo(self.as_numpy_dtype).max
        if self.is_bool:
            return True
        raise TypeError("Cannot find maximum value of %s." % self)

    @property
    def limits(self):
        return (self.min, self.max)

    def is_compatible_with(self, other):
        """True when a value of `other` can be used where this type is expected."""
        other = as_dtype(other)
        return self._type_enum in (other.as_datatype_enum, other.base_dtype.as_datatype_enum)

    def __eq__(self, other):
        if isinstance(other, DType):
            return self._type_enum == other._type_enum
        if other is None:
            return False
        try:
            return self._type_enum == as_dtype(other)._type_enum
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return self._type_enum

    def __reduce__(self):
        return as_dtype, (self.name,)

    def __repr__(self):
        return "tx." + self.name

    def __str__(self):
        return "<dtype: %r>" % self.name


_TYPE_TO_NAME = {
    types_pb2.DT_HALF: "float16",
    types_pb2.DT_FLOAT: "float32",
    types_pb2.DT_DOUBLE: "float64",
    types_pb2.DT_INT32: "int32",
    types_pb2.DT_UINT8: "uint8",
    types_pb2.DT_UINT16: "uint16",
    types_pb2.DT_UINT32: "uint32",
    types_pb2.DT_UINT64: "uint64",
    types_pb2.DT_INT16: "int16",
    types_pb2.DT_INT8: "int8",
    types_pb2.DT_STRING: "string",
    types_pb2.DT_COMPLEX64: "complex64",
    types_pb2.DT_COMPLEX128: "complex128",
    types_pb2.DT_INT64: "int64",
    types_pb2.DT_BOOL: "bool",
    types_pb2.DT_QINT8: "qint8",
    types_pb2.DT_QUINT8: "quint8",
    types_pb2.DT_QINT16: "qint16",
    types_pb2.DT_QUINT16: "quint16",
    types_pb2.DT_QINT32: "qint32",
    types_pb2.DT_BFLOAT16: "bfloat16",
    types_pb2.DT_RESOURCE: "resource",
    types_pb2.DT_VARIANT: "variant",
}
_TYPE_TO_NAME.update({k + 100: v + "_ref" for k, v in list(_TYPE_TO_NAME.items())})

_INTEGER_TYPES = (types_pb2.DT_INT8, types_pb2.DT_INT16, types_pb2.DT_INT32, types_pb2.DT_INT64,
                  types_pb2.DT_UINT8, types_pb2.DT_UINT16, types_pb2.DT_UINT32,
                  types_pb2.DT_UINT64)

_TO_NUMPY = {
    types_pb2.DT_HALF: np.float16,
    types_pb2.DT_FLOAT: np.float32,
    types_pb2.DT_DOUBLE: np.float64,
    types_pb2.DT_INT32: np.int32,
    types_pb2.DT_UINT8: np.uint8,
    types_pb2.DT_UINT16: np.uint16,
    types_pb2.DT_UINT32: np.uint32,
    types_pb2.DT_UINT64: np.uint64,
    types_pb2.DT_INT16: np.int16,
    types_pb2.DT_INT8: np.int8,
    types_pb2.DT_STRING: object,
    types_pb2.DT_COMPLEX64: np.complex64,
    types_pb2.DT_COMPLEX128: np.complex128,
    types_pb2.DT_INT64: np.int64,
    types_pb2.DT_BOOL: np.bool_,
    types_pb2.DT_BFLOAT16: np.float32,
}

_INTERN = {e: DType(e) for e in _TYPE_TO_NAME}

float16 = half = _INTERN[types_pb2.DT_HALF]
float32 = _INTERN[types_pb2.DT_FLOAT]
float64 = double = _INTERN[types_pb2.DT_DOUBLE]
bfloat16 = _INTERN[types_pb2.DT_BFLOAT16]
int8 = _INTERN[types_pb2.DT_INT8]
int16 = _INTERN[types_pb2.DT_INT16]
int32 = _INTERN[types_pb2.DT_INT32]
int64 = _INTERN[types_pb2.DT_INT64]
uint8 = _INTERN[types_pb2.DT_UINT8]
uint16 = _INTERN[types_pb2.DT_UINT16]
uint32 = _INTERN[types_pb2.DT_UINT32]
uint64 = _INTERN[types_pb2.DT_UINT64]
bool = _INTERN[types_pb2.DT_BOOL]  # pylint: disable=redefined-builtin
string = _INTERN[types_pb2.DT_STRING]
complex64 = _INTERN[types_pb2.DT_COMPLEX64]
complex128 = _INTERN[types_pb2.DT_COMPLEX128]
qint8 = _INTERN[types_pb2.DT_QINT8]
quint8 = _INTERN[types_pb2.DT_QUINT8]
qint16 = _INTERN[types_pb2.DT_QINT16]
quint16 = _INTERN[types_pb2.DT_QUINT16]
qint32 = _INTERN[types_pb2.DT_QINT32]
resource = _INTERN[types_pb2.DT_RESOURCE]
variant = _INTERN[types_pb2.DT_VARIANT]

_STRING_TO_TYPE = {dt.name: dt for dt in _INTERN.values()}
_STRING_TO_TYPE.update({"half": float16, "float": float32, "double": float64})
for _e, _dt in list(_INTERN.items()):
    _STRING_TO_TYPE[types_pb2.DataType.Name(_e)] = _dt

# numpy dtype -> DType, keyed by (kind, itemsize) so every platform alias maps.
_NUMPY_KIND = {("b", 1): bool, ("i", 1): int8, ("i", 2): int16, ("i", 4): int32, ("i", 8): int64,
               ("u", 1): uint8, ("u", 2): uint16, ("u", 4): uint32, ("u", 8): uint64,
               ("f", 2): float16, ("f", 4): float32, ("f", 8): float64,
               ("c", 8): complex64, ("c", 16): complex128}

_PYTHON_TO_TYPE = {builtins.float: float32, builtins.bool: bool, builtins.int: int32,
                   builtins.str: string, builtins.bytes: string, builtins.object: string}


def as_dtype(type_value):
    """Converts a DType, DataType enum, name ("float32", "DT_FLOAT"), numpy type or Python type
    to a tx.DType. Raises TypeError for anything else."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, builtins.bool):
        raise TypeError("Cannot convert value %r to a TensorFlux DType." % (type_value,))
    if isinstance(type_value, (builtins.int, np.integer)):
        try:
            return _INTERN[builtins.int(type_value)]
        except KeyError:
            raise TypeError("Cannot convert value %r to a TensorFlux DType." % (type_value,))
    if isinstance(type_value, builtins.str):
        try:
            return _STRING_TO_TYPE[type_value]
        except KeyError:
            raise TypeError("Cannot convert value %r to a TensorFlux DType." % (type_value,))
    if isinstance(type_value, type) and type_value in _PYTHON_TO_TYPE:
        return _PYTHON_TO_TYPE[type_value]
    try:
        npdt = np.dtype(type_value)
    except (TypeError, ValueError):
        npdt = None
    if npdt is not None:
        if npdt.kind in "OSU":
            return string
        dt = _NUMPY_KIND.get((npdt.kind, npdt.itemsize))
        if dt is not None:
            return dt
    raise TypeError("Cannot convert value %r to a TensorFlux DType." % (type_value,))


QUANTIZED_DTYPES = frozenset([qint8, quint8, qint16, quint16, qint32])


def bfloat16_bits(values):
    """float values -> uint16 bfloat16 bit patterns (round to nearest, ties to even)."""
    f = np.ascontiguousarray(values, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(f)
    out = rounded.astype(np.uint16)
    if nan.any():
        out = np.where(nan, ((bits >> 16) | 0x40).astype(np.uint16), out)
    return out
