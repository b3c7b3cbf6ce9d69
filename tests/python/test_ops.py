"""Every op function against numpy: values, dtypes, broadcasting, matmul transposes."""

import numpy as np
import pytest

import tensorflux as tx

RNG = np.random.default_rng(7)


def run(fetches, feed_dict=None, graph=None):
    with tx.Session(graph=graph or tx.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


BINARY = [
    (tx.add, np.add), (tx.subtract, np.subtract), (tx.multiply, np.multiply),
    (tx.realdiv, np.divide), (tx.maximum, np.maximum), (tx.minimum, np.minimum),
    (tx.divide, np.divide), (tx.truediv, np.divide),
]

BROADCAST_SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1), (1, 5)), ((), (3, 2)),
                    ((2, 1, 3), (4, 1)), ((3,), ())]


@pytest.mark.parametrize("fn,ref", BINARY)
@pytest.mark.parametrize("sa,sb", BROADCAST_SHAPES)
def test_binary_float32_broadcasting(graph, fn, ref, sa, sb):
    a = RNG.uniform(0.5, 2.0, sa).astype(np.float32)
    b = RNG.uniform(0.5, 2.0, sb).astype(np.float32)
    pa = tx.placeholder(tx.float32, sa)
    pb = tx.placeholder(tx.float32, sb)
    out = fn(pa, pb)
    assert out.shape.as_list() == list(np.broadcast_shapes(sa, sb))
    got = run(out, {pa: a, pb: b})
    np.testing.assert_allclose(got, ref(a, b), rtol=1e-6)
    assert np.asarray(got).dtype == np.float32


@pytest.mark.parametrize("np_type", [np.float64, np.int32, np.int64])
@pytest.mark.parametrize("fn,ref", [(tx.add, np.add), (tx.subtract, np.subtract),
                                    (tx.multiply, np.multiply), (tx.maximum, np.maximum),
                                    (tx.minimum, np.minimum)])
def test_binary_other_dtypes(graph, np_type, fn, ref):
    a = np.array([[1, -2, 3], [4, 5, -6]], dtype=np_type)
    b = np.array([3, 2, 1], dtype=np_type)
    got = run(fn(tx.constant(a), tx.constant(b)))
    assert got.dtype == np_type
    np.testing.assert_array_equal(got, ref(a, b))


def test_divide_of_ints_is_true_division(graph):
    a = tx.constant([7, -7, 9], dtype=tx.int32)
    b = tx.constant([2, 2, 3], dtype=tx.int32)
    q = a / b
    assert q.dtype == tx.float64
    np.testing.assert_allclose(run(q), [3.5, -3.5, 3.0])
    # RealDiv itself on integers truncates toward zero (C semantics).
    np.testing.assert_array_equal(run(tx.realdiv(a, b)), [3, -3, 3])


UNARY = [
    (tx.negative, np.negative, (-3, 3)), (tx.square, np.square, (-3, 3)),
    (tx.sqrt, np.sqrt, (0.1, 9)), (tx.exp, np.exp, (-3, 3)), (tx.log, np.log, (0.1, 9)),
]


@pytest.mark.parametrize("fn,ref,bounds", UNARY)
@pytest.mark.parametrize("np_type", [np.float32, np.float64])
def test_unary(graph, fn, ref, bounds, np_type):
    x = RNG.uniform(*bounds, (3, 4)).astype(np_type)
    p = tx.placeholder(tx.as_dtype(np_type), [None, 4])
    out = fn(p)
    assert out.shape.as_list() == [None, 4]
    got = run(out, {p: x})
    assert got.dtype == np_type
    np.testing.assert_allclose(got, ref(x), rtol=1e-6 if np_type == np.float32 else 1e-12)


def test_negative_and_square_of_ints(graph):
    x = np.array([-2, 0, 5], np.int32)
    np.testing.assert_array_equal(run(tx.negative(x)), -x)
    np.testing.assert_array_equal(run(tx.square(x)), x * x)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("np_type", [np.float32, np.float64])
def test_matmul_transposes(graph, ta, tb, np_type):
    m, k, n = 3, 4, 5
    a = RNG.standard_normal((k, m) if ta else (m, k)).astype(np_type)
    b = RNG.standard_normal((n, k) if tb else (k, n)).astype(np_type)
    out = tx.matmul(a, b, transpose_a=ta, transpose_b=tb)
    assert out.shape.as_list() == [m, n]
    want = (a.T if ta else a) @ (b.T if tb else b)
    np.testing.assert_allclose(run(out), want, rtol=1e-5, atol=1e-5)


def test_matmul_operator_and_int(graph):
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.arange(12, dtype=np.int32).reshape(3, 4)
    ta = tx.constant(a)
    np.testing.assert_array_equal(run(ta @ b), a @ b)
    np.testing.assert_array_equal(run(a @ tx.constant(b)), a @ b)


def test_operators(graph):
    x = tx.placeholder(tx.float32, [3])
    v = np.array([1.0, 2.0, 4.0], np.float32)
    exprs = [x + 1, 1 + x, x - 1, 10 - x, x * 3, 3 * x, x / 2, 2 / x, -x,
             x + np.float32(1.0), np.array([1, 1, 1], np.float32) + x]
    wants = [v + 1, 1 + v, v - 1, 10 - v, v * 3, 3 * v, v / 2, 2 / v, -v, v + 1, 1 + v]
    got = run(exprs, {x: v})
    for g, w in zip(got, wants):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    assert [e.op.type for e in exprs[:9]] == ["AddV2", "AddV2", "Sub", "Sub", "Mul", "Mul",
                                             "RealDiv", "RealDiv", "Neg"]


def test_constant_values_and_broadcast(graph):
    np.testing.assert_array_equal(run(tx.constant(7, shape=[2, 3])), np.full((2, 3), 7))
    np.testing.assert_array_equal(run(tx.constant([1, 2], shape=[4])), [1, 2, 2, 2])
    np.testing.assert_array_equal(run(tx.constant([[1, 2], [3, 4]], dtype=tx.int64)),
                                  [[1, 2], [3, 4]])
    np.testing.assert_array_equal(run(tx.constant(np.arange(6), shape=[2, 3])),
                                  np.arange(6).reshape(2, 3))
    c = tx.constant(1.5)
    assert c.dtype == tx.float32 and c.shape.as_list() == []
    assert tx.constant(1).dtype == tx.int32
    assert tx.constant(2 ** 40).dtype == tx.int64
    assert tx.constant(np.float64(1.0)).dtype == tx.float64
    assert tx.constant(True).dtype == tx.bool
    assert tx.constant("hi").dtype == tx.string
    with pytest.raises(ValueError):
        tx.constant([1, 2, 3], shape=[2])
    with pytest.raises(TypeError):
        tx.constant(300, dtype=tx.uint8)


@pytest.mark.parametrize("dt", [tx.float16, tx.float32, tx.float64, tx.int8, tx.int16, tx.int32,
                                tx.int64, tx.uint8, tx.uint16, tx.uint32, tx.uint64, tx.bool])
def test_constant_every_dtype(graph, dt):
    values = np.array([[0, 1, 1], [1, 0, 1]]).astype(dt.as_numpy_dtype)
    got = run([tx.constant(values, dtype=dt), tx.constant(values[0, 1], dtype=dt, shape=[2]),
               tx.constant(values[0, 1], dtype=dt)])
    assert got[0].dtype == dt.as_numpy_dtype
    np.testing.assert_array_equal(got[0], values)
    np.testing.assert_array_equal(got[1], [values[0, 1]] * 2)
    assert np.ndim(got[2]) == 0 and got[2] == values[0, 1]


def test_bfloat16_constants_round_to_nearest_even(graph):
    c = tx.constant([1.0, 3.140625, 1.00390625, 1.01171875], dtype=tx.bfloat16)
    got = run(c)
    assert got.dtype == np.float32  # bfloat16 is represented as float32 in numpy
    # 1.00390625 is halfway between 1.0 and 1.0078125: ties to even (1.0); 1.01171875 -> up.
    np.testing.assert_array_equal(got, [1.0, 3.140625, 1.0, 1.015625])


def test_string_constants_and_add(graph):
    s = tx.constant(["ab", b"cd"])
    got = run(s)
    assert got.dtype == object and list(got) == [b"ab", b"cd"]
    assert run(tx.constant("x")) == b"x"


def test_cast(graph):
    x = tx.constant([1.7, -2.2, 0.0])
    np.testing.assert_array_equal(run(tx.cast(x, tx.int32)), [1, -2, 0])
    np.testing.assert_array_equal(run(tx.cast(x, tx.bool)), [True, True, False])
    np.testing.assert_array_equal(run(tx.cast(tx.constant([1, 0]), tx.float64)), [1.0, 0.0])
    assert tx.cast(x, tx.float32) is x
    np.testing.assert_array_equal(run(tx.to_int64(x)), [1, -2, 0])
    h = run(tx.cast(x, tx.float16))
    assert h.dtype == np.float16
    np.testing.assert_allclose(h, np.array([1.7, -2.2, 0.0], np.float16))


def test_reshape_shape_size_rank(graph):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    p = tx.placeholder(tx.float32, [None, 3, 4])
    got = run([tx.reshape(p, [-1, 4]), tx.reshape(p, [4, 6]), tx.shape(p), tx.size(p),
               tx.rank(p), tx.shape(p, out_type=tx.int64)], {p: x})
    np.testing.assert_array_equal(got[0], x.reshape(-1, 4))
    np.testing.assert_array_equal(got[1], x.reshape(4, 6))
    np.testing.assert_array_equal(got[2], [2, 3, 4])
    assert got[2].dtype == np.int32 and got[5].dtype == np.int64
    assert got[3] == 24 and got[4] == 3


def test_fill_zeros_ones(graph):
    np.testing.assert_array_equal(run(tx.fill([2, 3], 9)), np.full((2, 3), 9))
    z = tx.zeros([2, 2], dtype=tx.int64)
    assert z.dtype == tx.int64
    np.testing.assert_array_equal(run(z), np.zeros((2, 2)))
    np.testing.assert_array_equal(run(tx.ones([3])), np.ones(3, np.float32))
    np.testing.assert_array_equal(run(tx.ones((2, 2), tx.bool)), np.ones((2, 2), bool))
    big = tx.zeros([50, 40])  # built with Fill
    assert big.op.type == "Fill" and big.shape.as_list() == [50, 40]
    np.testing.assert_array_equal(run(big), np.zeros((50, 40), np.float32))
    empty = run([tx.zeros([0, 3]), tx.constant([]), tx.ones([2, 0], tx.int32)])
    assert [e.shape for e in empty] == [(0, 3), (0,), (2, 0)]
    assert empty[2].dtype == np.int32
    dims = tx.placeholder(tx.int32, [2])
    dyn = tx.ones(dims)
    np.testing.assert_array_equal(run(dyn, {dims: [1, 3]}), np.ones((1, 3)))


def test_zeros_like_ones_like(graph):
    x = tx.constant([[1.5, 2.5]])
    got = run([tx.zeros_like(x), tx.ones_like(x), tx.zeros_like(x, dtype=tx.int32),
               tx.ones_like(x, dtype=tx.int64)])
    np.testing.assert_array_equal(got[0], [[0, 0]])
    np.testing.assert_array_equal(got[1], [[1, 1]])
    assert got[0].dtype == np.float32 and got[2].dtype == np.int32 and got[3].dtype == np.int64
    np.testing.assert_array_equal(got[3], [[1, 1]])


def test_identity_identity_n_placeholder_with_default(graph):
    a = tx.constant([1, 2])
    b = tx.constant(3.0)
    ia, ib = tx.identity_n([a, b])
    d = tx.placeholder_with_default(tx.constant([5.0, 6.0]), shape=[None])
    got = run([tx.identity(a), ia, ib, d])
    np.testing.assert_array_equal(got[0], [1, 2])
    np.testing.assert_array_equal(got[1], [1, 2])
    assert got[2] == 3.0
    np.testing.assert_array_equal(got[3], [5.0, 6.0])
    np.testing.assert_array_equal(run(d, {d: [1.0, 2.0, 3.0]}), [1.0, 2.0, 3.0])
    assert d.shape.as_list() == [None]


def test_no_op_and_group(graph):
    a = tx.constant(1.0)
    b = tx.constant(2.0)
    g = tx.group(a, [b.op])
    assert g.type == "NoOp" and g.name == "group_deps"
    assert set(g.control_inputs) == {a.op, b.op}
    n = tx.no_op(name="nothing")
    assert run([g, n]) == [None, None]


def test_python_values_converted_to_tensors(graph):
    y = tx.add([1.0, 2.0], 3.0)
    np.testing.assert_allclose(run(y), [4.0, 5.0])
    assert y.dtype == tx.float32
    x = tx.placeholder(tx.float64, [2])
    z = tx.multiply(2, x)  # the int becomes float64 to match x
    assert z.dtype == tx.float64
    np.testing.assert_allclose(run(z, {x: [1.5, 2.0]}), [3.0, 4.0])
    t = tx.convert_to_tensor(np.array([1, 2], np.uint16))
    assert t.dtype == tx.uint16
    with pytest.raises(ValueError):
        tx.convert_to_tensor(t, dtype=tx.float32)
