"""tx.gradients against numpy-derived gradients and finite differences."""

import numpy as np
import pytest

import tensorflux as tx

RNG = np.random.default_rng(11)


def run(fetches, feed_dict=None, graph=None):
    with tx.Session(graph=graph or tx.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


def has_op(name):
    return hasattr(tx.raw_ops, name)


def numeric_grad(f, x, h=1e-6):
    """d sum(f(x)) / dx by central differences (float64)."""
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        g[i] = (np.sum(f(xp)) - np.sum(f(xm))) / (2 * h)
    return g


def test_square_matches_numpy(graph):
    x = tx.placeholder(tx.float64, [2, 3], name="x")
    y = tx.square(x) * 3.0
    (gx,) = tx.gradients(y, x)
    assert isinstance(gx, tx.Tensor)
    assert gx.dtype == tx.float64
    assert gx.shape.as_list() == [2, 3]
    xv = RNG.uniform(-2, 2, (2, 3))
    np.testing.assert_allclose(run(gx, {x: xv}), 6 * xv, rtol=1e-12)


def test_returns_list_for_list_and_single(graph):
    x = tx.placeholder(tx.float32, [3])
    y = tx.exp(x)
    assert isinstance(tx.gradients(y, x), list)
    assert len(tx.gradients([y], [x, x])) == 2


def test_matmul_chain_against_finite_differences(graph):
    a = tx.placeholder(tx.float64, [2, 3], name="a")
    w = tx.placeholder(tx.float64, [3, 4], name="w")
    y = tx.log(tx.exp(tx.matmul(a, w)) + 1.0)  # softplus(a w)
    ga, gw = tx.gradients(y, [a, w])
    av = RNG.uniform(-1, 1, (2, 3))
    wv = RNG.uniform(-1, 1, (3, 4))
    got_a, got_w = run([ga, gw], {a: av, w: wv})

    def f_a(v):
        return np.log(np.exp(v @ wv) + 1)

    def f_w(v):
        return np.log(np.exp(av @ v) + 1)

    np.testing.assert_allclose(got_a, numeric_grad(f_a, av), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got_w, numeric_grad(f_w, wv), rtol=1e-6, atol=1e-8)
    # numpy-derived: sigmoid(a w) contracted.
    s = 1 / (1 + np.exp(-(av @ wv)))
    np.testing.assert_allclose(got_a, s @ wv.T, rtol=1e-10)
    np.testing.assert_allclose(got_w, av.T @ s, rtol=1e-10)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_transposes(graph, ta, tb):
    sa = (3, 2) if ta else (2, 3)
    sb = (4, 3) if tb else (3, 4)
    a = tx.placeholder(tx.float64, sa)
    b = tx.placeholder(tx.float64, sb)
    y = tx.matmul(a, b, transpose_a=ta, transpose_b=tb)
    ga, gb = tx.gradients(y, [a, b])
    av, bv = RNG.normal(size=sa), RNG.normal(size=sb)
    got_a, got_b = run([ga, gb], {a: av, b: bv})
    oa = av.T if ta else av
    ob = bv.T if tb else bv
    np.testing.assert_allclose(got_a, numeric_grad(lambda v: (v.T if ta else v) @ ob, av),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got_b, numeric_grad(lambda v: oa @ (v.T if tb else v), bv),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.skipif(not (has_op("BroadcastGradientArgs") and has_op("Sum") and has_op("AddN")),
                    reason="BroadcastGradientArgs/Sum/AddN not registered yet")
def test_broadcasting_is_reduced(graph):
    x = tx.placeholder(tx.float64, [2, 3])
    b = tx.placeholder(tx.float64, [3])
    y = (x + b) * x
    gx, gb = tx.gradients(y, [x, b])
    assert gb.shape.as_list() == [3]
    xv, bv = RNG.normal(size=(2, 3)), RNG.normal(size=3)
    got_x, got_b = run([gx, gb], {x: xv, b: bv})
    np.testing.assert_allclose(got_x, 2 * xv + bv, rtol=1e-12)
    np.testing.assert_allclose(got_b, xv.sum(axis=0), rtol=1e-12)


@pytest.mark.skipif(not has_op("AddN"), reason="AddN not registered yet")
def test_fan_out_and_several_ys(graph):
    x = tx.placeholder(tx.float64, [4])
    y1 = x * x + x
    y2 = tx.sqrt(x)
    (gx,) = tx.gradients([y1, y2], [x])
    xv = RNG.uniform(0.5, 2, 4)
    np.testing.assert_allclose(run(gx, {x: xv}), 2 * xv + 1 + 0.5 / np.sqrt(xv), rtol=1e-12)
    assert any(op.type == "AddN" for op in graph.get_operations())


def test_grad_ys(graph):
    x = tx.placeholder(tx.float32, [3])
    y = tx.square(x)
    gy = tx.constant([1.0, 10.0, 100.0])
    (gx,) = tx.gradients(y, x, grad_ys=gy)
    np.testing.assert_allclose(run(gx, {x: np.array([1, 2, 3], np.float32)}), [2, 40, 600])
    # A None entry means ones; numpy values are converted.
    (gx2,) = tx.gradients([y], [x], grad_ys=[None])
    np.testing.assert_allclose(run(gx2, {x: np.array([1, 2, 3], np.float32)}), [2, 4, 6])
    (gx3,) = tx.gradients(y, x, grad_ys=np.array([2, 2, 2], np.float32))
    np.testing.assert_allclose(run(gx3, {x: np.array([1, 2, 3], np.float32)}), [4, 8, 12])


def test_unconnected_and_integer_give_none(graph):
    x = tx.placeholder(tx.float32, [2])
    u = tx.placeholder(tx.float32, [2])
    i = tx.placeholder(tx.int32, [2])
    y = tx.square(x) + tx.cast(i, tx.float32)
    gx, gu, gi = tx.gradients(y, [x, u, i])
    assert gx is not None
    assert gu is None
    assert gi is None
    # Through an integer cast: no gradient.
    z = tx.cast(tx.cast(x, tx.int32), tx.float32)
    assert tx.gradients(z, x) == [None]


def test_stop_gradients_argument(graph):
    x = tx.placeholder(tx.float64, [3])
    a = tx.square(x)
    y = a * x
    gx, ga = tx.gradients(y, [x, a], stop_gradients=[a])
    xv = np.array([1.0, 2.0, 3.0])
    got_x, got_a = run([gx, ga], {x: xv})
    np.testing.assert_allclose(got_x, xv ** 2)
    np.testing.assert_allclose(got_a, xv)


@pytest.mark.skipif(not has_op("StopGradient"), reason="StopGradient not registered yet")
def test_stop_gradient_op(graph):
    x = tx.placeholder(tx.float64, [3])
    y = x * tx.raw_ops.StopGradient(input=x)
    (gx,) = tx.gradients(y, x)
    xv = np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(run(gx, {x: xv}), xv)


def test_names_and_scopes(graph):
    x = tx.placeholder(tx.float32, [2], name="x")
    y = tx.exp(x, name="e")
    (g1,) = tx.gradients(y, x)
    (g2,) = tx.gradients(y, x, name="my_grads")
    (g3,) = tx.gradients(y, x)
    assert g1.name.startswith("gradients/e_grad/")
    assert g2.name.startswith("my_grads/e_grad/")
    assert g3.name.startswith("gradients_1/")
    xv = np.array([0.0, 1.0], np.float32)
    np.testing.assert_allclose(run(g3, {x: xv}), np.exp(xv), rtol=1e-6)


def test_errors(graph):
    x = tx.placeholder(tx.float32, [2])
    y = tx.square(x)
    with pytest.raises(TypeError):
        tx.gradients(y, [np.ones(2)])
    with pytest.raises(ValueError):
        tx.gradients(y, x, grad_ys=[None, None])
    with pytest.raises(ValueError):
        tx.gradients(y, x, grad_ys=tx.constant([1.0, 2.0], dtype=tx.float64))
    other = tx.Graph()
    with other.as_default():
        z = tx.placeholder(tx.float32, [2])
    with pytest.raises(ValueError):
        tx.gradients(y, z)


def test_mean_gradient_divides_its_int32_count_with_floordiv(graph):
    # TensorFlow registers no int32 CPU kernel for RealDiv: a Mean gradient that divided the
    # element counts with RealDiv made every exported training graph fail to run in TensorFlow
    # (found by tools/oracle/reverse_check.py). TF's own gradient uses FloorDiv there.
    x = tx.placeholder(tx.float32, [None, 3])
    loss = tx.reduce_mean(tx.square(x), axis=1)
    (g,) = tx.gradients(tx.reduce_mean(loss), [x])
    int_types = {tx.int8.as_datatype_enum, tx.int16.as_datatype_enum,
                 tx.int32.as_datatype_enum, tx.int64.as_datatype_enum}
    int_divs = [op.name for op in graph.get_operations()
                if op.type == "RealDiv" and op.node_def.attr["T"].type in int_types]
    assert not int_divs
    v = RNG.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(run(g, {x: v}), 2 * v / 12, rtol=1e-6)
