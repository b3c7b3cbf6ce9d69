"""numpy <-> Tensor conversion in the extension, for every supported dtype."""

import numpy as np
import pytest

import tensorflux as tx
from tensorflux.framework import _pywrap

NUMERIC = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
           np.uint64, np.float16, np.float32, np.float64]


@pytest.mark.parametrize("np_type", NUMERIC)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3), (2, 0, 4), (1, 1, 1, 1, 1, 1, 1, 2)])
def test_round_trip_numeric(np_type, shape):
    v = (np.arange(int(np.prod(shape))) % 7).astype(np_type).reshape(shape)
    dtype_enum, back = _pywrap.tensor_round_trip(v)
    assert dtype_enum == tx.as_dtype(np_type).as_datatype_enum
    assert back.dtype == np.dtype(np_type) and back.shape == shape
    np.testing.assert_array_equal(back, v)


def test_round_trip_copies_input():
    v = np.arange(4, dtype=np.float32)
    _, back = _pywrap.tensor_round_trip(v)
    back[0] = 100.0
    assert v[0] == 0.0


def test_non_contiguous_and_big_endian_inputs():
    v = np.arange(12, dtype=np.float64).reshape(3, 4)
    _, back = _pywrap.tensor_round_trip(v.T)
    np.testing.assert_array_equal(back, v.T)
    be = np.arange(5, dtype=">i4")
    dtype_enum, back = _pywrap.tensor_round_trip(be)
    assert dtype_enum == tx.int32.as_datatype_enum
    np.testing.assert_array_equal(back, [0, 1, 2, 3, 4])


def test_strings():
    for v in [np.array([b"a", b"bc", b""], dtype=object), np.array(["x", "\u00e9"]),
              np.array([b"xy", b"z"]), np.array([[b"a\x00b"]], dtype=object)]:
        dtype_enum, back = _pywrap.tensor_round_trip(v)
        assert dtype_enum == tx.string.as_datatype_enum
        assert back.dtype == object and back.shape == v.shape
        want = [x.encode("utf-8") if isinstance(x, str) else bytes(x) for x in v.flat]
        assert list(back.flat) == want
    with pytest.raises(tx.errors.InvalidArgumentError):
        _pywrap.tensor_round_trip(np.array([1, "a"], dtype=object))


def test_bfloat16_from_floats():
    dtype_enum, back = _pywrap.tensor_round_trip(np.array([1.0, 2.5, 1.00390625], np.float32),
                                                 tx.bfloat16.as_datatype_enum)
    assert dtype_enum == tx.bfloat16.as_datatype_enum
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back, [1.0, 2.5, 1.0])


def test_rejections():
    with pytest.raises(tx.errors.InvalidArgumentError):
        _pywrap.tensor_round_trip(np.zeros(3, np.complex64))
    with pytest.raises(tx.errors.InvalidArgumentError):
        _pywrap.tensor_round_trip(np.zeros([1] * 9, np.float32))
    with pytest.raises(tx.errors.InvalidArgumentError):
        _pywrap.tensor_round_trip(np.zeros(3, np.float32), tx.int32.as_datatype_enum)


def test_make_tensor_proto_decodes_in_cpp():
    for value, dtype in [([1.5, 2.5], tx.float32), ([[1, 2], [3, 4]], tx.int64),
                         ([True, False], tx.bool), ([1, 2, 3], tx.uint16),
                         (np.array([0.5, -1.25], np.float16), tx.float16),
                         ([b"p", b"q"], tx.string)]:
        proto = tx.make_tensor_proto(value, dtype=dtype)
        assert proto.dtype == dtype.as_datatype_enum
        back = tx.make_ndarray(proto)
        expect = np.array(value, dtype=dtype.as_numpy_dtype)
        np.testing.assert_array_equal(back, expect)


def test_make_tensor_proto_broadcast_rule():
    proto = tx.make_tensor_proto(5.0, shape=[2, 2])
    assert list(proto.float_val) == [5.0] and not proto.tensor_content
    np.testing.assert_array_equal(tx.make_ndarray(proto), np.full((2, 2), 5.0, np.float32))


def test_cpp_encoder_matches():
    b = _pywrap.tensor_to_proto(np.array([[1, 2]], np.int32))
    p = tx.TensorProto()
    p.ParseFromString(b)
    assert [d.size for d in p.tensor_shape.dim] == [1, 2]
    np.testing.assert_array_equal(tx.make_ndarray(p), [[1, 2]])
