"""tf.train.Example parsing (TF 1.x's tf.io.parse_example / parse_single_example) over the
ParseExample and ParseSingleExample ops (C++: io/example_parser.h).

Features are given as a dict key -> FixedLenFeature(shape, dtype, default_value) (a dense
[batch] + shape tensor; no default_value means required) or VarLenFeature(dtype) (a SparseTensor
with indices [N, 2] = (example, position), values [N], dense_shape [batch, longest list]).
dtypes: float32, int64, string. A missing required feature, a list of another type or a dense
list of another length raise InvalidArgumentError naming the record and the feature at run time.
"""

import collections

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework import tensor_shape
from tensorflux.framework.constant_op import constant
from tensorflux.framework.op_def_library import apply_op
from tensorflux.framework.sparse_tensor import SparseTensor

_ALLOWED = (dtypes.float32, dtypes.int64, dtypes.string)


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A dense feature of a fixed shape (tf.io.FixedLenFeature)."""
    __slots__ = ()

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A variable-length feature, parsed into a SparseTensor (tf.io.VarLenFeature)."""
    __slots__ = ()


def _split(features):
    if not isinstance(features, dict) or not features:
        raise ValueError("features must be a non-empty dict of FixedLenFeature / VarLenFeature")
    sparse, dense = [], []
    for key in sorted(features):
        f = features[key]
        if not isinstance(f, (FixedLenFeature, VarLenFeature)):
            raise ValueError("Unsupported feature type for '%s': %r" % (key, f))
        dt = dtypes.as_dtype(f.dtype)
        if dt not in _ALLOWED:
            raise ValueError("Feature '%s' has dtype %s; Example features are float32, int64 "
                             "or string" % (key, dt.name))
        (sparse if isinstance(f, VarLenFeature) else dense).append((key, f, dt))
    return sparse, dense


def _numpy_type(dt):
    return object if dt == dtypes.string else dt.as_numpy_dtype


def _dense_default(key, f, dt):
    shape = tensor_shape.as_shape(f.shape)
    if not shape.is_fully_defined():
        raise ValueError("FixedLenFeature '%s' needs a fully defined shape, got %s"
                         % (key, shape))
    dims = shape.as_list()
    if f.default_value is None:
        return constant(np.zeros([0], _numpy_type(dt)), dtype=dt), dims
    value = np.asarray(f.default_value, dtype=_numpy_type(dt))
    if value.size != int(np.prod(dims, dtype=np.int64)):
        raise ValueError("default_value of feature '%s' has %d elements, its shape %s needs %d"
                         % (key, value.size, dims, int(np.prod(dims, dtype=np.int64))))
    return constant(value.reshape(dims), dtype=dt), dims


def _result(sparse, dense, outputs):
    result = {}
    for i, (key, _, _) in enumerate(sparse):
        result[key] = SparseTensor(outputs[0][i], outputs[1][i], outputs[2][i])
    for j, (key, _, _) in enumerate(dense):
        result[key] = outputs[3][j]
    return result


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def parse_example(serialized, features, name=None, example_names=None):
    """Parses a vector of serialized Examples into a dict of Tensors / SparseTensors."""
    sparse, dense = _split(features)
    defaults = [_dense_default(k, f, dt) for k, f, dt in dense]
    outputs = apply_op(
        "ParseExample", name=name or "ParseExample",
        serialized=serialized,
        names=(example_names if example_names is not None
               else constant(np.zeros([0], object), dtype=dtypes.string)),
        sparse_keys=[constant(k, dtype=dtypes.string) for k, _, _ in sparse],
        dense_keys=[constant(k, dtype=dtypes.string) for k, _, _ in dense],
        dense_defaults=[d for d, _ in defaults],
        sparse_types=[dt for _, _, dt in sparse],
        Tdense=[dt for _, _, dt in dense],
        dense_shapes=[s for _, s in defaults])
    return _result(sparse, dense, [_as_list(o) for o in outputs])


def parse_single_example(serialized, features, name=None, example_names=None):
    """Parses one serialized Example (a scalar string) into a dict of Tensors / SparseTensors,
    without the batch dimension (dense: shape; sparse: indices [N, 1], dense_shape [1])."""
    del example_names  # accepted for TF's signature; the record is named by its index
    sparse, dense = _split(features)
    defaults = [_dense_default(k, f, dt) for k, f, dt in dense]
    outputs = apply_op(
        "ParseSingleExample", name=name or "ParseSingleExample",
        serialized=serialized,
        dense_defaults=[d for d, _ in defaults],
        num_sparse=len(sparse),
        sparse_keys=[k for k, _, _ in sparse],
        dense_keys=[k for k, _, _ in dense],
        sparse_types=[dt for _, _, dt in sparse],
        Tdense=[dt for _, _, dt in dense],
        dense_shapes=[s for _, s in defaults])
    return _result(sparse, dense, [_as_list(o) for o in outputs])


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """Converts CSV records (a string tensor) to a list of tensors, one per column, each of the
    records' shape (tf.io.decode_csv). record_defaults[i] gives column i's type and the value of
    an empty field: a one-element list / tensor, or an empty tensor of the type for a required
    column. Bad rows raise InvalidArgumentError naming the record at run time."""
    defaults = []
    for i, d in enumerate(record_defaults):
        if not isinstance(d, ops.Tensor):
            d = constant(d) if len(np.asarray(d, dtype=object).ravel()) else None
        if d is None:
            raise ValueError("record_defaults[%d] is empty: pass an empty tensor of the column's "
                             "type (e.g. tx.constant([], tx.float32)) for a required column" % i)
        defaults.append(d)
    out = apply_op("DecodeCSV", name=name or "DecodeCSV", records=records,
                   record_defaults=defaults, field_delim=field_delim,
                   use_quote_delim=use_quote_delim, na_value=na_value,
                   select_cols=list(select_cols or []))
    return _as_list(out)
