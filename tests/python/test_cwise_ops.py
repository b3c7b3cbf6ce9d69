"""The second half of the elementwise family (tensorflux/ops/math_ops2.py) against numpy:
floordiv/floormod/pow/squared_difference with broadcasting and dtypes, comparisons and logical
ops, unary math, activations, where/where_v2/clip_by_value/add_n, the Tensor operators, errors
(integer division by zero, mismatched shapes), and gradients vs finite differences, including
tensors used several times (summed with AddN)."""

import math

import numpy as np
import pytest

import tensorflux as tx

RNG = np.random.default_rng(23)


def run(fetches, feed_dict=None):
    with tx.Session(graph=tx.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


SHAPES = [((3, 4), (3, 4)), ((2, 3), (3,)), ((), (2, 3)), ((2, 1), (1, 3)), ((0, 3), (3,)),
          ((), ())]


def _nonzero(shape, dtype, lo=1, hi=9):
    v = RNG.integers(lo, hi, size=shape)
    sign = np.where(RNG.random(shape) < 0.5, -1, 1) if np.issubdtype(dtype, np.signedinteger) \
        or np.issubdtype(dtype, np.floating) else 1
    return (v * sign).astype(dtype)


@pytest.mark.parametrize("xs,ys", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8])
def test_floordiv_floormod_match_numpy(graph, xs, ys, dtype):
    lo = 0 if dtype == np.uint8 else -20
    x = RNG.integers(lo, 20, size=xs).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        x = x + RNG.random(xs).astype(dtype)
    y = _nonzero(ys, dtype)
    q, r = run([tx.floordiv(x, y), tx.floormod(x, y)])
    np.testing.assert_allclose(q, np.floor_divide(x, y), rtol=1e-6)
    np.testing.assert_allclose(r, np.mod(x, y), rtol=1e-5, atol=1e-5)
    assert q.dtype == dtype and r.dtype == dtype


def test_integer_division_by_zero_raises(graph):
    x = tx.constant(np.array([4, 5], np.int32))
    y = tx.constant(np.array([2, 0], np.int32))
    for fn in (tx.floordiv, tx.floormod):
        with pytest.raises(tx.errors.InvalidArgumentError, match="Integer division by zero"):
            run(fn(x, y))
    # INT_MIN // -1 wraps instead of trapping.
    m = tx.constant(np.array([np.iinfo(np.int32).min], np.int32))
    q, r = run([m // -1, m % -1])
    assert q[0] == np.iinfo(np.int32).min and r[0] == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_pow_and_squared_difference(graph, dtype):
    x = RNG.uniform(0.5, 3, (3, 4)).astype(dtype)
    y = RNG.uniform(-2, 2, (4,)).astype(dtype)
    tol = 2e-3 if dtype == np.float16 else 1e-5
    p, s = run([tx.pow(x, y), tx.squared_difference(x, y)])
    np.testing.assert_allclose(p, np.power(x.astype(np.float64), y), rtol=tol)
    np.testing.assert_allclose(s, np.square(x.astype(np.float64) - y), rtol=tol, atol=tol)
    ip = run(tx.pow(np.array([2, -3, 5], np.int64), np.array([10, 3, 0], np.int64)))
    np.testing.assert_array_equal(ip, [1024, -27, 1])
    with pytest.raises(tx.errors.InvalidArgumentError, match="negative integer powers"):
        run(tx.pow(np.array([2], np.int32), np.array([-1], np.int32)))


COMPARISONS = [(tx.less, np.less), (tx.less_equal, np.less_equal), (tx.greater, np.greater),
               (tx.greater_equal, np.greater_equal), (tx.equal, np.equal),
               (tx.not_equal, np.not_equal)]


@pytest.mark.parametrize("fn,ref", COMPARISONS)
@pytest.mark.parametrize("xs,ys", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8])
def test_comparisons_match_numpy(graph, fn, ref, xs, ys, dtype):
    x = RNG.integers(0, 4, size=xs).astype(dtype)
    y = RNG.integers(0, 4, size=ys).astype(dtype)
    out = run(fn(x, y))
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, ref(x, y))


def test_comparisons_with_nan_strings_and_bools(graph):
    x = np.array([1.0, np.nan, 3.0], np.float32)
    for fn, ref in COMPARISONS:
        np.testing.assert_array_equal(run(fn(x, x)), ref(x, x))
    s = run(tx.equal(tx.constant([b"a", b"b"]), tx.constant(b"a")))
    np.testing.assert_array_equal(s, [True, False])
    b = run(tx.not_equal(np.array([True, False]), np.array([True, True])))
    np.testing.assert_array_equal(b, [False, True])
    with pytest.raises(tx.errors.InvalidArgumentError, match="Incompatible shapes"):
        run(tx.equal(np.zeros((2, 3), np.float32), np.zeros((4,), np.float32)))
    # The raw op's incompatible_shape_error=False gives a scalar False instead.
    out = run(tx.raw_ops.Equal(x=np.zeros((2, 3), np.float32), y=np.zeros((4,), np.float32),
                               incompatible_shape_error=False))
    assert out.shape == () and not out


def test_logical_ops(graph):
    a = np.array([[True], [False]])
    b = np.array([True, False, True])
    out = run([tx.logical_and(a, b), tx.logical_or(a, b), tx.logical_not(b),
               tx.logical_xor(a, b)])
    np.testing.assert_array_equal(out[0], np.logical_and(a, b))
    np.testing.assert_array_equal(out[1], np.logical_or(a, b))
    np.testing.assert_array_equal(out[2], np.logical_not(b))
    np.testing.assert_array_equal(out[3], np.logical_xor(a, b))


def _softplus(v):
    return np.maximum(v, 0) + np.log1p(np.exp(-np.abs(v)))


def _erf(v):
    return np.vectorize(math.erf, otypes=[np.float64])(v)


UNARY = [
    (tx.abs, np.abs, (-5, 5)), (tx.sign, np.sign, (-5, 5)),
    (tx.reciprocal, np.reciprocal, (0.2, 5)), (tx.rsqrt, lambda v: 1 / np.sqrt(v), (0.01, 50)),
    (tx.log1p, np.log1p, (-0.9, 10)), (tx.tanh, np.tanh, (-6, 6)),
    (tx.sigmoid, lambda v: 1 / (1 + np.exp(-v)), (-15, 15)), (tx.erf, _erf, (-3, 3)),
    (tx.cos, np.cos, (-7, 7)), (tx.sin, np.sin, (-7, 7)),
    (tx.nn.relu, lambda v: np.maximum(v, 0), (-5, 5)),
    (tx.nn.relu6, lambda v: np.clip(v, 0, 6), (-3, 9)),
    (tx.nn.leaky_relu, lambda v: np.where(v > 0, v, float(np.float32(0.2)) * v), (-5, 5)),
    (tx.nn.elu, lambda v: np.where(v < 0, np.expm1(v), v), (-5, 5)),
    (tx.nn.selu, lambda v: 1.0507009873554805 * np.where(v < 0, 1.6732632423543772 * np.expm1(v),
                                                         v), (-5, 5)),
    (tx.nn.softplus, _softplus, (-20, 20)),
]


@pytest.mark.parametrize("fn,ref,rng", UNARY, ids=[u[0].__name__ for u in UNARY])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape", [(), (7,), (3, 50), (0, 2)])
def test_unary_match_numpy(graph, fn, ref, rng, dtype, shape):
    x = RNG.uniform(rng[0], rng[1], size=shape).astype(dtype)
    out = run(fn(x))
    assert out.dtype == dtype and out.shape == x.shape
    tol = 2e-3 if dtype == np.float16 else (2e-6 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(out, ref(x.astype(np.float64)), rtol=tol, atol=tol)


def test_unary_integers_and_extremes(graph):
    i = np.array([-128, -3, 0, 7], np.int8)
    np.testing.assert_array_equal(run(tx.abs(i)), [-128, 3, 0, 7])  # |MIN| wraps like TF
    np.testing.assert_array_equal(run(tx.sign(i)), [-1, -1, 0, 1])
    np.testing.assert_array_equal(run(tx.nn.relu(i)), [0, 0, 0, 7])
    with pytest.raises(tx.errors.InvalidArgumentError, match="Integer division by zero"):
        run(tx.reciprocal(np.array([1, 0], np.int32)))
    big = np.array([-1e4, 1e4, -800, 800], np.float64)
    sp = run(tx.nn.softplus(big))
    assert np.all(np.isfinite(sp))
    np.testing.assert_allclose(sp, _softplus(big), rtol=1e-12, atol=1e-300)
    sg = run(tx.sigmoid(big.astype(np.float32)))
    np.testing.assert_array_equal(sg, [0, 1, 0, 1])
    assert np.isnan(run(tx.sign(np.float32(np.nan))))  # as TF 2.15's kernel


def test_where_and_where_v2(graph):
    c = np.array([True, False])
    t = RNG.standard_normal((2, 3)).astype(np.float32)
    e = RNG.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_array_equal(run(tx.where(c, t, e)), np.where(c[:, None], t, e))
    c2 = RNG.random((2, 3)) < 0.5
    np.testing.assert_array_equal(run(tx.where(c2, t, e)), np.where(c2, t, e))
    cb = RNG.random((4, 1, 1)) < 0.5
    tb = RNG.standard_normal((1, 3, 1))
    eb = RNG.standard_normal((2,))
    np.testing.assert_array_equal(run(tx.where_v2(cb, tb, eb)), np.where(cb, tb, eb))
    with pytest.raises(tx.errors.InvalidArgumentError):
        run(tx.where(np.array([True, False, True]), t, e))
    with pytest.raises(NotImplementedError):
        tx.where(c)


def test_clip_by_value_and_add_n(graph):
    t = RNG.uniform(-3, 3, (3, 4))
    lo = RNG.uniform(-2, -1, (4,))
    out = run([tx.clip_by_value(t, -1.0, 1.0), tx.clip_by_value(t, lo, 1.5)])
    np.testing.assert_array_equal(out[0], np.clip(t, -1, 1))
    np.testing.assert_array_equal(out[1], np.minimum(np.maximum(t, lo), 1.5))
    xs = [RNG.standard_normal((2, 5)) for _ in range(4)]
    np.testing.assert_allclose(run(tx.add_n(xs)), np.sum(xs, axis=0), rtol=1e-12)
    ints = [np.array([1, 2], np.int32), np.array([3, 4], np.int32)]
    np.testing.assert_array_equal(run(tx.math.add_n(ints)), [4, 6])
    with pytest.raises(ValueError):
        tx.add_n([np.zeros(2), np.zeros(3)])  # the shape function rejects it at build time


def test_tensor_operators(graph):
    x = tx.constant(np.array([7, -7, 8], np.int32))
    y = np.array([2, 2, -3], np.int32)
    out = run([x // y, x % y, x ** 2, 10 // x, x < 0, x >= 7, abs(x)])
    np.testing.assert_array_equal(out[0], np.array([7, -7, 8]) // y)
    np.testing.assert_array_equal(out[1], np.array([7, -7, 8]) % y)
    np.testing.assert_array_equal(out[2], [49, 49, 64])
    np.testing.assert_array_equal(out[3], 10 // np.array([7, -7, 8]))
    np.testing.assert_array_equal(out[4], [False, True, False])
    np.testing.assert_array_equal(out[5], [True, False, True])
    np.testing.assert_array_equal(out[6], [7, 7, 8])
    b = tx.constant([True, False])
    out = run([b & [True, True], b | [False, False], ~b, b ^ [True, True]])
    np.testing.assert_array_equal(out[0], [True, False])
    np.testing.assert_array_equal(out[1], [True, False])
    np.testing.assert_array_equal(out[2], [False, True])
    np.testing.assert_array_equal(out[3], [False, True])


# ------------------------------------------------------------------ gradients

def _numeric(f, x0, eps=1e-6):
    g = np.zeros_like(x0)
    for i in np.ndindex(*x0.shape):
        xp, xm = x0.copy(), x0.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


GRAD_CASES = [
    # (name, f(x), x's shape, range); several use x more than once (gradients summed by AddN).
    ("pow_self", lambda x: tx.pow(x, x), (2, 3), (0.5, 2)),
    ("tanh_sigmoid_fanout", lambda x: tx.tanh(x) * tx.sigmoid(x) + x, (3, 2), (-2, 2)),
    ("softplus_elu", lambda x: tx.nn.softplus(x) + tx.nn.elu(x) * x, (2, 3), (-2, 2)),
    ("abs_sign", lambda x: tx.abs(x) * 3.0 + tx.sign(x), (4,), (0.5, 2)),
    ("floormod", lambda x: tx.floormod(x * 3.0, 2.5), (2, 2), (0.1, 0.5)),
    ("squared_difference", lambda x: tx.squared_difference(x, x * x), (2, 3), (-2, 2)),
    ("where_v2", lambda x: tx.where_v2(x > 0, x * x, -x), (2, 3), (-2, 2)),
    ("clip", lambda x: tx.clip_by_value(x, -1.0, 1.0) * x, (2, 3), (-2, 2)),
    ("add_n", lambda x: tx.add_n([x, x * x, tx.erf(x)]), (3,), (-1, 1)),
    ("log1p_rsqrt_recip", lambda x: tx.log1p(x) + tx.rsqrt(x) + tx.reciprocal(x), (3,), (0.5, 2)),
    ("relu_family", lambda x: tx.nn.relu(x) + tx.nn.relu6(x * 4) + tx.nn.leaky_relu(x, 0.1)
     + tx.nn.selu(x), (2, 3), (-2, 2)),
]


@pytest.mark.parametrize("name,fn,shape,rng", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_finite_differences(graph, name, fn, shape, rng):
    x0 = RNG.uniform(rng[0], rng[1], shape)
    if name in ("where_v2", "clip", "relu_family"):  # stay away from the kinks
        x0 = np.where(np.abs(x0) < 0.05, 0.3, x0)
        x0 = np.where(np.abs(np.abs(x0) - 1) < 0.05, 0.7, x0)
        x0 = np.where(np.abs(x0 * 4 - 6) < 0.1, 1.0, x0)
    x = tx.placeholder(tx.float64, shape)
    w = tx.constant(RNG.standard_normal(shape))
    loss = tx.reduce_sum(fn(x) * w)
    (g,) = tx.gradients(loss, [x])
    with tx.Session(graph=graph) as sess:
        got = sess.run(g, {x: x0})
        num = _numeric(lambda v: sess.run(loss, {x: v}), x0)
    np.testing.assert_allclose(got, num, rtol=1e-6, atol=1e-6)
    if name in ("tanh_sigmoid_fanout", "pow_self", "add_n"):
        assert any(op.type == "AddN" for op in graph.get_operations())


def test_no_gradient_through_comparisons_and_floordiv(graph):
    x = tx.placeholder(tx.float32, [3])
    y = tx.cast(x > 0, tx.float32) + tx.floordiv(x, 2.0)
    (g,) = tx.gradients(y, [x])
    assert g is None
