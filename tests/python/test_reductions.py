"""Reductions (tensorflux/ops/reduction_ops.py) against numpy: reduce_sum/mean/max/min/prod/
all/any over axis None, ints, lists and negative axes, keepdims, dtypes, empty inputs; argmax/
argmin with output_type; static shapes; gradients of Sum/Mean/Max; errors."""

import numpy as np
import pytest

import tensorflux as tx

RNG = np.random.default_rng(5)
X = RNG.standard_normal((3, 4, 5)).astype(np.float32)

REDUCERS = [
    (tx.reduce_sum, np.sum), (tx.reduce_mean, np.mean), (tx.reduce_max, np.max),
    (tx.reduce_min, np.min), (tx.reduce_prod, np.prod)]


def run(fetches, feed_dict=None):
    with tx.Session(graph=tx.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


@pytest.mark.parametrize("fn,ref", REDUCERS)
@pytest.mark.parametrize("axis", [None, 0, 1, -1, [0, 2], [-1, 0], (0, 1, 2), []])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce_float32(graph, fn, ref, axis, keepdims):
    out = fn(tx.constant(X), axis=axis, keepdims=keepdims)
    np_axis = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    want = ref(X.astype(np.float64), axis=np_axis, keepdims=keepdims)
    assert out.shape.as_list() == list(np.shape(want))
    np.testing.assert_allclose(run(out), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64, np.float16])
def test_reduce_dtypes(graph, dtype):
    x = (RNG.integers(-5, 6, size=(4, 6))).astype(dtype)
    outs = run([tx.reduce_sum(x, 1), tx.reduce_max(x, 0), tx.reduce_min(x), tx.reduce_mean(x, 0)])
    np.testing.assert_array_equal(outs[0], x.sum(1))
    np.testing.assert_array_equal(outs[1], x.max(0))
    np.testing.assert_array_equal(outs[2], x.min())
    if np.issubdtype(dtype, np.integer):
        want = np.trunc(x.astype(np.float64).sum(0) / 4).astype(dtype)
        np.testing.assert_array_equal(outs[3], want)
    else:
        np.testing.assert_allclose(outs[3], x.astype(np.float64).mean(0), rtol=1e-3)
    assert outs[0].dtype == dtype


def test_reduce_empty(graph):
    e = np.zeros((2, 0), np.float32)
    s, m, p = run([tx.reduce_sum(e, 1), tx.reduce_max(e, 1), tx.reduce_prod(e, 1)])
    np.testing.assert_array_equal(s, [0, 0])
    np.testing.assert_array_equal(m, [-np.inf, -np.inf])
    np.testing.assert_array_equal(p, [1, 1])


def test_all_any(graph):
    b = RNG.random((3, 4)) > 0.5
    a1, a2, a3 = run([tx.reduce_all(b, 1), tx.reduce_any(b, 0, keepdims=True), tx.reduce_any(b)])
    np.testing.assert_array_equal(a1, b.all(1))
    np.testing.assert_array_equal(a2, b.any(0, keepdims=True))
    assert a3 == b.any()


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_argmax_argmin(graph, axis):
    x = RNG.integers(0, 4, size=(5, 6)).astype(np.float32)  # many ties: first index wins
    mx, mn = run([tx.argmax(x, axis), tx.argmin(x, axis, output_type=tx.int32)])
    np.testing.assert_array_equal(mx, np.argmax(x, axis))
    np.testing.assert_array_equal(mn, np.argmin(x, axis))
    assert mx.dtype == np.int64 and mn.dtype == np.int32


def test_math_aliases():
    assert tx.math.reduce_sum is tx.reduce_sum
    assert tx.math.argmax is tx.argmax


def test_unknown_rank_axis_none(graph):
    p = tx.placeholder(tx.float32)
    out = tx.reduce_sum(p)
    np.testing.assert_allclose(run(out, {p: X}), X.astype(np.float64).sum(), rtol=1e-5)


def test_bad_axis(graph):
    p = tx.placeholder(tx.float32)
    out = tx.reduce_sum(p, 5)
    with pytest.raises(tx.errors.InvalidArgumentError, match="Invalid reduction dimension 5"):
        run(out, {p: np.ones((2, 2), np.float32)})


def _has_equal():
    try:
        return tx.raw_ops.Equal is not None
    except AttributeError:
        return False


@pytest.mark.parametrize("which", ["sum", "mean", "max"])
def test_gradients(graph, which):
    x = tx.constant(np.array([[1, 5, 5], [2, 0, 7]], np.float32))
    if which == "max" and not _has_equal():
        pytest.skip("Equal op not registered yet")
    y = {"sum": tx.reduce_sum, "mean": tx.reduce_mean, "max": tx.reduce_max}[which](x, 1)
    (g,) = tx.gradients(y, [x])
    want = {"sum": np.ones((2, 3)), "mean": np.full((2, 3), 1 / 3),
            "max": np.array([[0, 0.5, 0.5], [0, 0, 1]])}[which]
    np.testing.assert_allclose(run(g), want, rtol=1e-6)
