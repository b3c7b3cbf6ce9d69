"""tx.nn (bias_add, softmax, log_softmax, the two softmax cross entropies, l2_loss) and batched
tx.matmul (BatchMatMulV2) against numpy: layouts, axes, ranks, broadcasting, logits of +-1e4,
empty batches, errors; and their tx.gradients against numpy-derived gradients."""

import numpy as np
import pytest

import tensorflux as tx

RNG = np.random.default_rng(23)


def run(fetches, feed_dict=None):
    with tx.Session(graph=tx.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


def np_log_softmax(x, axis=-1):
    """float64 log-softmax: x - logsumexp(x) with numpy's own max-shifted logaddexp reduce."""
    x = np.asarray(x, np.float64)
    if x.size == 0:
        return x.copy()
    return x - np.logaddexp.reduce(x, axis=axis, keepdims=True)


def np_softmax(x, axis=-1):
    return np.exp(np_log_softmax(x, axis))


# ------------------------------------------------------------------ bias_add

@pytest.mark.parametrize("shape,fmt,channel", [
    ((4, 3), None, -1), ((2, 5, 5, 3), "NHWC", -1), ((2, 3, 5, 5), "NCHW", 1),
    ((2, 6, 4), "NWC", -1), ((2, 4, 6), "NCW", 1), ((1, 3, 2, 2, 2), "NCDHW", 1),
    ((0, 3), None, -1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_bias_add(graph, shape, fmt, channel, dtype):
    x = (RNG.standard_normal(shape) * 4).astype(dtype)
    b = (RNG.standard_normal(shape[channel]) * 4).astype(dtype)
    bshape = [1] * len(shape)
    bshape[channel] = shape[channel]
    out = run(tx.nn.bias_add(x, b, data_format=fmt))
    np.testing.assert_allclose(out, x + b.reshape(bshape), rtol=1e-6)


def test_bias_add_errors(graph):
    with pytest.raises(ValueError, match="data_format"):
        tx.nn.bias_add(np.zeros((2, 3), np.float32), np.zeros(3, np.float32), data_format="HWCN")
    with pytest.raises(ValueError):  # static shapes: bias size is not the channel size
        tx.nn.bias_add(np.zeros((2, 3), np.float32), np.zeros(4, np.float32))
    v = tx.placeholder(tx.float32)
    b = tx.placeholder(tx.float32)
    y = tx.nn.bias_add(v, b)
    with pytest.raises(tx.errors.InvalidArgumentError, match="channel dimension"):
        run(y, {v: np.zeros((2, 3), np.float32), b: np.zeros(4, np.float32)})
    with pytest.raises(tx.errors.InvalidArgumentError, match="at least 2-D"):
        run(y, {v: np.zeros(3, np.float32), b: np.zeros(3, np.float32)})


# ------------------------------------------------------------------ softmax, log_softmax

@pytest.mark.parametrize("shape,axis", [((5,), None), ((3, 7), None), ((2, 3, 4), -1),
                                        ((2, 3, 4), 0), ((2, 3, 4), 1), ((0, 4), None),
                                        ((3, 0), None)])
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-6), (np.float64, 1e-13),
                                       (np.float16, 2e-3)])
def test_softmax_and_log_softmax(graph, shape, axis, dtype, tol):
    x = (RNG.standard_normal(shape) * 5).astype(dtype)
    ax = -1 if axis is None else axis
    sm, lsm = run([tx.nn.softmax(x, axis=axis), tx.nn.log_softmax(x, axis=axis)])
    assert sm.dtype == dtype and sm.shape == shape
    np.testing.assert_allclose(sm, np_softmax(x, ax), rtol=tol, atol=tol)
    np.testing.assert_allclose(lsm, np_log_softmax(x, ax), rtol=tol, atol=tol * 20)


def test_softmax_huge_logits(graph):
    x = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, 1e4], [1e4, 1e4 - 1, 1e4 - 2]])
    for dtype in (np.float32, np.float64):
        sm, lsm = run([tx.nn.softmax(x.astype(dtype)), tx.nn.log_softmax(x.astype(dtype))])
        assert np.all(np.isfinite(sm)) and np.all(np.isfinite(lsm))
        np.testing.assert_allclose(sm, np_softmax(x), rtol=1e-6, atol=1e-30)
        np.testing.assert_allclose(lsm, np_log_softmax(x), rtol=1e-6)


def test_softmax_rank0_is_an_error(graph):
    with pytest.raises(ValueError):
        tx.nn.softmax(np.float32(1.0))
    p = tx.placeholder(tx.float32)
    with pytest.raises(tx.errors.InvalidArgumentError, match=">= 1 dimension"):
        run(tx.nn.softmax(p), {p: np.float32(1.0)})


# ------------------------------------------------------------------ cross entropies

@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("batch_shape", [(6,), (2, 3), (0,)])
def test_sparse_softmax_cross_entropy(graph, label_dtype, batch_shape):
    classes = 5
    logits = RNG.standard_normal(batch_shape + (classes,)) * 3
    labels = RNG.integers(0, classes, size=batch_shape).astype(label_dtype)
    loss = tx.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert loss.shape.as_list() == list(batch_shape)
    want = -np.take_along_axis(np_log_softmax(logits), labels[..., None].astype(np.int64),
                               -1)[..., 0]
    np.testing.assert_allclose(run(loss), want, rtol=1e-12)


def test_sparse_cross_entropy_huge_logits_and_bad_labels(graph):
    logits = np.array([[1e4, -1e4], [-1e4, 1e4], [0, 1e4]], np.float32)
    labels = np.array([1, 1, 0], np.int32)
    loss = run(tx.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    np.testing.assert_allclose(loss, [2e4, 0, 1e4], rtol=1e-6)
    lab = tx.placeholder(tx.int64, [3])
    y = tx.nn.sparse_softmax_cross_entropy_with_logits(labels=lab, logits=logits)
    with pytest.raises(tx.errors.InvalidArgumentError, match="label value of 2 in row 1"):
        run(y, {lab: np.array([0, 2, 1], np.int64)})
    with pytest.raises(tx.errors.InvalidArgumentError, match="label value of -1 in row 0"):
        run(y, {lab: np.array([-1, 0, 1], np.int64)})
    with pytest.raises(ValueError, match="Rank mismatch"):
        tx.nn.sparse_softmax_cross_entropy_with_logits(labels=np.zeros((3, 2), np.int32),
                                                       logits=logits)
    # Positional arguments work, as in TF 2.15 (labels, logits); a missing one is ValueError.
    np.testing.assert_allclose(run(tx.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)),
                               [2e4, 0, 1e4], rtol=1e-6)
    with pytest.raises(ValueError, match="Both labels= and logits="):
        tx.nn.sparse_softmax_cross_entropy_with_logits(labels=labels)


@pytest.mark.parametrize("shape,dim", [((4, 6), -1), ((2, 3, 4), -1), ((5, 3), 0),
                                       ((0, 4), -1)])
def test_softmax_cross_entropy(graph, shape, dim):
    logits = RNG.standard_normal(shape) * 3
    labels = np_softmax(RNG.standard_normal(shape), dim)
    loss = tx.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits, dim=dim)
    want = -np.sum(labels * np_log_softmax(logits, dim), axis=dim)
    out = run(loss)
    assert out.shape == want.shape
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    v2 = tx.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=dim)
    np.testing.assert_allclose(run(v2), want, rtol=1e-12, atol=1e-12)


def test_softmax_cross_entropy_huge_logits_and_broadcast(graph):
    logits = np.array([[1e4, -1e4, 0], [-1e4, 1e4, -1e4]], np.float32)
    labels = np.array([[0.25, 0.5, 0.25], [0.5, 0.25, 0.25]], np.float32)
    loss = run(tx.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    want = -np.sum(labels * np_log_softmax(logits.astype(np.float64)), axis=-1)
    np.testing.assert_allclose(loss, want, rtol=1e-6)
    # The raw op broadcasts rank-2 operands: one label distribution for every row.
    loss, backprop = tx.raw_ops.SoftmaxCrossEntropyWithLogits(features=logits,
                                                              labels=labels[0])
    np.testing.assert_allclose(run(loss), -np.sum(labels[0] * np_log_softmax(logits), -1),
                               rtol=1e-6)
    np.testing.assert_allclose(run(backprop), np_softmax(logits) - labels[0], atol=1e-6)


# ------------------------------------------------------------------ l2_loss

@pytest.mark.parametrize("shape", [(), (7,), (3, 4, 5), (0, 2)])
def test_l2_loss(graph, shape):
    for dtype, tol in ((np.float32, 1e-6), (np.float64, 1e-14)):
        t = RNG.standard_normal(shape).astype(dtype)
        out = run(tx.nn.l2_loss(t))
        assert out.shape == () and out.dtype == dtype
        np.testing.assert_allclose(out, np.sum(t.astype(np.float64) ** 2) / 2, rtol=tol)


# ------------------------------------------------------------------ batched matmul

@pytest.mark.parametrize("sa,sb", [((3, 2, 4), (3, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
                                   ((3, 4), (2, 4, 6)), ((2, 3, 4), (4, 6)),
                                   ((0, 3, 4), (1, 4, 2)), ((2, 90, 100), (2, 100, 110))])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_batched_matmul(graph, sa, sb, ta, tb, dtype):
    a = RNG.integers(-4, 5, size=sa).astype(dtype)
    b = RNG.integers(-4, 5, size=sb).astype(dtype)
    if ta:
        a = np.swapaxes(a, -1, -2).copy()
    if tb:
        b = np.swapaxes(b, -1, -2).copy()
    out = tx.matmul(a, b, transpose_a=ta, adjoint_b=tb)
    want = np.matmul(np.swapaxes(a, -1, -2) if ta else a, np.swapaxes(b, -1, -2) if tb else b)
    assert out.op.type == "BatchMatMulV2"
    assert out.shape.as_list() == list(want.shape)
    np.testing.assert_allclose(run(out), want, rtol=1e-5)
    np.testing.assert_allclose(run(tx.linalg.matmul(a, b, adjoint_a=ta, transpose_b=tb)), want,
                               rtol=1e-5)


def test_batched_matmul_errors(graph):
    with pytest.raises(ValueError):
        tx.matmul(np.zeros((2, 2, 3), np.float32), np.zeros((3, 4, 5), np.float32))
    a = tx.placeholder(tx.float32)
    y = tx.matmul(a, np.zeros((2, 3, 4), np.float32))
    with pytest.raises(tx.errors.InvalidArgumentError, match="compatible batch dimensions"):
        run(y, {a: np.zeros((3, 2, 3), np.float32)})
    with pytest.raises(tx.errors.InvalidArgumentError, match="ndims must be >= 2"):
        run(y, {a: np.zeros(3, np.float32)})
    with pytest.raises(ValueError, match="rank >= 2"):
        tx.matmul(np.zeros(3, np.float32), np.zeros((3, 2), np.float32))


# ------------------------------------------------------------------ gradients

def grads(y, xs, feed=None):
    return run(tx.gradients(y, xs), feed)


def test_gradients_bias_add_and_l2_loss(graph):
    x = RNG.standard_normal((2, 3, 4, 5))
    b = RNG.standard_normal(3)
    w = RNG.standard_normal((2, 3, 4, 5))
    xt, bt = tx.constant(x), tx.constant(b)
    y = tx.reduce_sum(tx.nn.bias_add(xt, bt, data_format="NCHW") * w)
    gx, gb = grads(y, [xt, bt])
    np.testing.assert_allclose(gx, w, rtol=1e-12)
    np.testing.assert_allclose(gb, w.sum(axis=(0, 2, 3)), rtol=1e-12)
    (gl,) = grads(tx.nn.l2_loss(xt) * 3.0, [xt])
    np.testing.assert_allclose(gl, 3 * x, rtol=1e-12)


def test_gradients_softmax_family(graph):
    x = RNG.standard_normal((3, 5))
    w = RNG.standard_normal((3, 5))
    xt = tx.constant(x)
    s = np_softmax(x)
    (g,) = grads(tx.reduce_sum(tx.nn.softmax(xt) * w), [xt])
    np.testing.assert_allclose(g, s * (w - np.sum(w * s, -1, keepdims=True)), rtol=1e-10)
    (g,) = grads(tx.reduce_sum(tx.nn.log_softmax(xt) * w), [xt])
    np.testing.assert_allclose(g, w - s * np.sum(w, -1, keepdims=True), rtol=1e-10)


def test_gradients_cross_entropies(graph):
    logits = RNG.standard_normal((4, 6))
    labels = np.array([0, 5, 2, 2], np.int64)
    scale = RNG.standard_normal(4)
    lt = tx.constant(logits)
    loss = tx.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=lt)
    (g,) = grads(tx.reduce_sum(loss * scale), [lt])
    onehot = np.eye(6)[labels]
    np.testing.assert_allclose(g, scale[:, None] * (np_softmax(logits) - onehot), rtol=1e-10)

    dist = np_softmax(RNG.standard_normal((4, 6)))
    dt = tx.constant(dist)
    loss = tx.nn.softmax_cross_entropy_with_logits_v2(labels=dt, logits=lt)
    g_logits, g_labels = grads(tx.reduce_sum(loss * scale), [lt, dt])
    np.testing.assert_allclose(g_logits, scale[:, None] * (np_softmax(logits) - dist),
                               rtol=1e-10)
    np.testing.assert_allclose(g_labels, -scale[:, None] * np_log_softmax(logits), rtol=1e-10)
    # The TF 1.x form stops the gradient at labels.
    loss_v1 = tx.nn.softmax_cross_entropy_with_logits(labels=dt, logits=lt)
    g = tx.gradients(tx.reduce_sum(loss_v1 * scale), [lt, dt])
    assert g[1] is None
    np.testing.assert_allclose(run(g[0]), g_logits, rtol=1e-12)


@pytest.mark.parametrize("sa,sb,ta,tb", [((3, 2, 4), (3, 4, 5), False, False),
                                         ((2, 1, 4, 3), (5, 4, 2), True, False),
                                         ((3, 4), (2, 5, 4), False, True),
                                         ((2, 3, 4), (4, 6), False, False)])
def test_gradients_batched_matmul(graph, sa, sb, ta, tb):
    a = RNG.standard_normal(sa)
    b = RNG.standard_normal(sb)
    at, bt = tx.constant(a), tx.constant(b)
    y = tx.matmul(at, bt, transpose_a=ta, transpose_b=tb)
    w = RNG.standard_normal(y.shape.as_list())
    ga, gb = grads(tx.reduce_sum(y * w), [at, bt])
    # Finite differences of sum(w * op(a) @ op(b)) (linear in each operand: exact).

    def f(a_, b_):
        x = np.swapaxes(a_, -1, -2) if ta else a_
        z = np.swapaxes(b_, -1, -2) if tb else b_
        return np.sum(w * np.matmul(x, z))
    num_a = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[i] = 1
        num_a[i] = (f(a + e, b) - f(a - e, b)) / 2
    num_b = np.zeros_like(b)
    for i in np.ndindex(b.shape):
        e = np.zeros_like(b)
        e[i] = 1
        num_b[i] = (f(a, b + e) - f(a, b - e)) / 2
    assert ga.shape == a.shape and gb.shape == b.shape
    np.testing.assert_allclose(ga, num_a, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(gb, num_b, rtol=1e-9, atol=1e-9)


def test_gradient_through_cross_entropy_backprop(graph):
    """A gradient reaching the backprop output (softmax - labels) flows to the logits through
    softmax's Jacobian (the second-order term) and, for dense labels, to the labels as -w."""
    logits = RNG.standard_normal((3, 4))
    w = RNG.standard_normal((3, 4))
    s = np_softmax(logits)
    want = s * (w - np.sum(w * s, -1, keepdims=True))
    lt = tx.constant(logits)
    _, backprop = tx.raw_ops.SparseSoftmaxCrossEntropyWithLogits(
        features=lt, labels=np.array([0, 3, 1], np.int32))
    (g,) = grads(tx.reduce_sum(backprop * w), [lt])
    np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-14)
    dt = tx.constant(np_softmax(RNG.standard_normal((3, 4))))
    _, backprop = tx.raw_ops.SoftmaxCrossEntropyWithLogits(features=lt, labels=dt)
    g_logits, g_labels = grads(tx.reduce_sum(backprop * w), [lt, dt])
    np.testing.assert_allclose(g_logits, want, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(g_labels, -w, rtol=1e-12)
