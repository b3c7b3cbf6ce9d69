"""tx.raw_ops holds a function for every op registered in C++."""

import numpy as np
import pytest

import tensorflux as tx
from tensorflux.framework import _pywrap
from tensorflux import op_def_pb2


def registered_op_names():
    ops = op_def_pb2.OpList()
    ops.ParseFromString(_pywrap.op_list())
    return [op.name for op in ops.op]


def test_every_registered_op_has_a_raw_op():
    names = registered_op_names()
    for required in ["Const", "Placeholder", "PlaceholderWithDefault", "Identity", "IdentityN",
                     "NoOp", "AddV2", "Add", "Sub", "Mul", "RealDiv", "Neg", "Square", "Sqrt",
                     "Exp", "Log", "Maximum", "Minimum", "MatMul", "Reshape", "Shape", "Size",
                     "Rank", "Fill", "ZerosLike", "OnesLike", "Cast"]:
        assert required in names
    for name in names:
        fn = getattr(tx.raw_ops, name)
        assert callable(fn) and fn.__name__ == name
    assert sorted(tx.raw_ops.__all__) == sorted(names)


def test_raw_ops_calls(graph):
    x = tx.raw_ops.Placeholder(dtype=tx.float32, shape=[2, 2], name="x")
    assert x.op.type == "Placeholder" and x.op.name == "x"
    mm = tx.raw_ops.MatMul(a=x, b=x, transpose_b=True)
    assert mm.op.name == "MatMul"
    s = tx.raw_ops.AddV2(x=mm, y=1.0)
    both = tx.raw_ops.IdentityN(input=[s, tx.constant(3)])
    assert isinstance(both, list) and len(both) == 2
    assert both[1].dtype == tx.int32
    n = tx.raw_ops.NoOp(name="nothing")
    assert isinstance(n, tx.Operation)
    c = tx.raw_ops.Cast(x=s, DstT=tx.int64)
    v = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    with tx.Session() as sess:
        got = sess.run([both[0], both[1], c], {x: v})
    np.testing.assert_allclose(got[0], v @ v.T + 1.0)
    assert got[1] == 3
    np.testing.assert_array_equal(got[2], (v @ v.T + 1.0).astype(np.int64))


def test_raw_ops_reject_positional_and_missing(graph):
    with pytest.raises(TypeError):
        tx.raw_ops.Identity(tx.constant(1))
    with pytest.raises(TypeError):
        tx.raw_ops.AddV2(x=tx.constant(1))
    with pytest.raises(TypeError):
        tx.raw_ops.IdentityN(input=tx.constant(1))


def test_raw_ops_doc():
    assert "MatMul" in tx.raw_ops.MatMul.__doc__ or "transpose_a" in tx.raw_ops.MatMul.__doc__
