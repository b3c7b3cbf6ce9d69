"""tx.DType and tx.TensorShape behave like TF 1.x's."""

import numpy as np
import pytest

import tensorflux as tx

DTYPES = [
    (tx.float16, 19, np.float16, "float16"), (tx.float32, 1, np.float32, "float32"),
    (tx.float64, 2, np.float64, "float64"), (tx.bfloat16, 14, np.float32, "bfloat16"),
    (tx.int8, 6, np.int8, "int8"), (tx.int16, 5, np.int16, "int16"),
    (tx.int32, 3, np.int32, "int32"), (tx.int64, 9, np.int64, "int64"),
    (tx.uint8, 4, np.uint8, "uint8"), (tx.uint16, 17, np.uint16, "uint16"),
    (tx.uint32, 22, np.uint32, "uint32"), (tx.uint64, 23, np.uint64, "uint64"),
    (tx.bool, 10, np.bool_, "bool"), (tx.string, 7, object, "string"),
]


@pytest.mark.parametrize("dt,enum,np_type,name", DTYPES)
def test_dtype_properties(dt, enum, np_type, name):
    assert dt.as_datatype_enum == enum
    assert dt.as_numpy_dtype is np_type
    assert dt.name == name
    assert tx.as_dtype(enum) is dt
    assert tx.as_dtype(name) is dt
    assert dt.base_dtype is dt
    assert repr(dt) == "tx." + name
    if np_type is not object and name != "bfloat16":
        assert tx.as_dtype(np_type) is dt
        assert tx.as_dtype(np.dtype(np_type)) is dt


def test_dtype_aliases_and_python_types():
    assert tx.as_dtype("float") is tx.float32
    assert tx.as_dtype("double") is tx.float64
    assert tx.as_dtype("half") is tx.float16
    assert tx.as_dtype("DT_INT64") is tx.int64
    assert tx.as_dtype(float) is tx.float32
    assert tx.as_dtype(bool) is tx.bool
    assert tx.as_dtype(np.dtype("S5")) is tx.string
    assert tx.float32 == "float32" and tx.float32 != tx.float64
    assert tx.float32 == np.float32


def test_dtype_classification():
    assert tx.float16.is_floating and tx.bfloat16.is_floating and not tx.int32.is_floating
    assert tx.uint8.is_integer and tx.uint8.is_unsigned and not tx.int8.is_unsigned
    assert tx.bool.is_bool
    assert tx.int8.min == -128 and tx.int8.max == 127
    assert tx.uint16.max == 65535
    assert tx.float32.size == 4 and tx.bfloat16.size == 2 and tx.bool.size == 1


def test_ref_dtypes():
    ref = tx.as_dtype(101)
    assert ref.name == "float32_ref"
    assert ref.base_dtype is tx.float32
    assert tx.float32.is_compatible_with(ref)


@pytest.mark.parametrize("bad", ["float33", 99, object(), [1]])
def test_as_dtype_rejects(bad):
    with pytest.raises(TypeError):
        tx.as_dtype(bad)


def test_tensor_shape_basics():
    s = tx.TensorShape([2, None, 3])
    assert s.ndims == 3 and s.rank == 3 and len(s) == 3
    assert s.as_list() == [2, None, 3]
    assert s[0] == 2 and s[0].value == 2 and s[1].value is None
    assert not s.is_fully_defined() and s.num_elements() is None
    assert str(s) == "(2, ?, 3)"
    assert s.is_compatible_with([2, 5, 3]) and not s.is_compatible_with([2, 5])
    assert s.merge_with([None, 4, 3]).as_list() == [2, 4, 3]
    with pytest.raises(ValueError):
        s.merge_with([3, None, 3])
    assert s[1:].as_list() == [None, 3]
    assert tx.TensorShape([4, 5]).num_elements() == 20
    assert tx.TensorShape([]).num_elements() == 1


def test_unknown_shape():
    s = tx.TensorShape(None)
    assert s.ndims is None and str(s) == "<unknown>"
    with pytest.raises(ValueError):
        s.as_list()
    assert s.is_compatible_with([1, 2, 3])
    assert s.merge_with([1, 2]).as_list() == [1, 2]
    assert s.as_proto().unknown_rank


def test_shape_proto_round_trip():
    s = tx.TensorShape([None, 7])
    p = s.as_proto()
    assert [d.size for d in p.dim] == [-1, 7]
    assert tx.TensorShape(p) == s


def test_dimension_arithmetic():
    d = tx.Dimension(4)
    assert d + 1 == 5 and d * 2 == 8 and int(d) == 4
    assert (tx.Dimension(None) + 1).value is None
    with pytest.raises(ValueError):
        tx.Dimension(-1)
