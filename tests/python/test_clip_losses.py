"""Clipping (tx.clip_by_norm, tx.global_norm, tx.clip_by_global_norm), tx.losses.* with weights
and reductions, tx.nn.sigmoid_cross_entropy_with_logits and the regularizers (tx.contrib.layers,
tx.keras.regularizers), all against float64 numpy formulas; gradients of the clipped and loss
values against numpy-derived ones."""

import numpy as np
import pytest

import tensorflux as tx

RNG = np.random.default_rng(7)


def run(fetches, feed_dict=None):
    with tx.Session(graph=tx.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


# ------------------------------------------------------------------ clipping

@pytest.mark.parametrize("axes", [None, [0], [1], [0, 1]])
@pytest.mark.parametrize("clip", [0.5, 3.0, 100.0])
def test_clip_by_norm(graph, axes, clip):
    t = RNG.standard_normal((3, 4))
    t[1] = 0.0  # an all-zero row stays zero (and finite)
    got = run(tx.clip_by_norm(tx.constant(t), clip, axes=axes))
    norm = np.sqrt(np.sum(t * t, axis=None if axes is None else tuple(axes), keepdims=True))
    want = t * clip / np.maximum(norm, clip)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_clip_by_norm_gradient_is_finite_at_zero(graph):
    x = tx.placeholder(tx.float64, [2, 3])
    (g,) = tx.gradients(tx.reduce_sum(tx.clip_by_norm(x, 1.0, axes=[1])), [x])
    v = np.array([[0.0, 0.0, 0.0], [3.0, 0.0, 4.0]])
    got = run(g, {x: v})
    # Row 1 has norm 5 > 1: y = x / ||x||, dy_j/dx_i = (delta_ij - x_i x_j / n^2) / n.
    n = 5.0
    want1 = (np.ones(3) - v[1] * v[1].sum() / n ** 2) / n
    np.testing.assert_allclose(got[1], want1, rtol=1e-12)
    np.testing.assert_array_equal(got[0], np.ones(3))  # norm 0 <= clip: identity


def test_clip_by_norm_rejects_non_scalar_clip(graph):
    with pytest.raises(ValueError, match="scalar"):
        tx.clip_by_norm(tx.constant([1.0, 2.0]), [1.0, 2.0])


def test_global_norm_and_clip_by_global_norm(graph):
    a, b = RNG.standard_normal((3, 2)), RNG.standard_normal(5)
    norm = np.sqrt(np.sum(a * a) + np.sum(b * b))
    clip = norm / 3.0
    clipped, gn = tx.clip_by_global_norm([tx.constant(a), None, tx.constant(b)], clip)
    assert clipped[1] is None and len(clipped) == 3
    got_a, got_b, got_n, got_n2 = run([clipped[0], clipped[2], gn,
                                       tx.global_norm([tx.constant(a), None, tx.constant(b)])])
    np.testing.assert_allclose(got_n, norm, rtol=1e-12)
    np.testing.assert_allclose(got_n2, norm, rtol=1e-12)
    np.testing.assert_allclose(got_a, a / 3.0, rtol=1e-12)
    np.testing.assert_allclose(got_b, b / 3.0, rtol=1e-12)
    # Under the limit: unchanged; use_norm replaces the computed norm.
    same, _ = tx.clip_by_global_norm([tx.constant(a)], norm * 2)
    forced, n = tx.clip_by_global_norm([tx.constant(a)], 1.0, use_norm=4.0)
    got_same, got_forced, got_n = run([same[0], forced[0], n])
    np.testing.assert_allclose(got_same, a, rtol=1e-12)
    np.testing.assert_allclose(got_forced, a / 4.0, rtol=1e-6)
    assert got_n == 4.0


def test_clip_by_global_norm_inf_norm_gives_nan(graph):
    clipped, n = tx.clip_by_global_norm([tx.constant([1.0, np.inf])], 1.0)
    got, got_n = run([clipped[0], n])
    assert np.isinf(got_n) and np.all(np.isnan(got))


def test_clip_by_global_norm_errors(graph):
    with pytest.raises(TypeError):
        tx.clip_by_global_norm(tx.constant([1.0]), 1.0)
    with pytest.raises(ValueError):
        tx.global_norm([None, None])


# ------------------------------------------------------------------ losses

def np_reduce(losses, weights, reduction):
    w = np.broadcast_to(np.asarray(weights, np.float64), losses.shape)
    weighted = losses * w
    if reduction == tx.losses.Reduction.NONE:
        return weighted
    total = weighted.sum()
    if reduction == tx.losses.Reduction.SUM:
        return total
    if reduction == tx.losses.Reduction.MEAN:
        d = w.sum()
    elif reduction == tx.losses.Reduction.SUM_OVER_BATCH_SIZE:
        d = losses.size
    else:
        d = np.count_nonzero(w)
    return 0.0 if d == 0 else total / d


def np_sigmoid_xent(z, x):
    p = 1.0 / (1.0 + np.exp(-x))
    return -z * np.log(p) - (1 - z) * np.log(1 - p)


Y = RNG.uniform(0, 1, (4, 3))
P = RNG.uniform(0.05, 0.95, (4, 3))
ELEMENTWISE = [
    ("absolute_difference", {}, lambda y, p: np.abs(p - y)),
    ("mean_squared_error", {}, lambda y, p: (p - y) ** 2),
    ("huber_loss", {"delta": 0.3},
     lambda y, p: np.where(np.abs(p - y) <= 0.3, 0.5 * (p - y) ** 2,
                           0.5 * 0.09 + 0.3 * (np.abs(p - y) - 0.3))),
    ("log_loss", {}, lambda y, p: -y * np.log(p + 1e-7) - (1 - y) * np.log(1 - p + 1e-7)),
]
WEIGHTS = [1.0, 0.0, 2.5, np.array([[1.0], [0.0], [2.0], [0.5]]),
           np.array([[0.0, 1.0, 2.0]]), RNG.uniform(0, 1, (4, 3)) * (RNG.uniform(size=(4, 3)) > .3)]


@pytest.mark.parametrize("fn,kwargs,ref", ELEMENTWISE)
@pytest.mark.parametrize("wi", range(len(WEIGHTS)))
@pytest.mark.parametrize("reduction", ["weighted_sum_by_nonzero_weights", "weighted_sum",
                                       "weighted_mean", "weighted_sum_over_batch_size", "none"])
def test_elementwise_losses(graph, fn, kwargs, ref, wi, reduction):
    w = WEIGHTS[wi]
    loss = getattr(tx.losses, fn)(tx.constant(Y), tx.constant(P), weights=w,
                                  reduction=reduction, **kwargs)
    assert loss.dtype == tx.float64
    np.testing.assert_allclose(run(loss), np_reduce(ref(Y, P), w, reduction), rtol=1e-10,
                               atol=1e-12)
    assert tx.losses.get_losses() == [loss]


def test_default_reduction_and_huber_delta_1(graph):
    y, p = np.array([0.0, 1.0, 2.0, 3.0]), np.array([0.5, 3.0, 2.0, 1.0])
    e = np.abs(p - y)
    want = np.mean(np.where(e <= 1, 0.5 * e * e, e - 0.5))
    np.testing.assert_allclose(run(tx.losses.huber_loss(y, p)), want, rtol=1e-12)
    # weights [1, 0, 1, 1]: divided by 3 nonzero weights.
    w = np.array([1.0, 0.0, 1.0, 1.0])
    got = run(tx.losses.absolute_difference(y, p, weights=w))
    np.testing.assert_allclose(got, (0.5 + 0.0 + 2.0) / 3, rtol=1e-12)


def test_float32_loss_and_weight_placeholder(graph):
    y = tx.placeholder(tx.float32, [None])
    p = tx.placeholder(tx.float32, [None])
    w = tx.placeholder(tx.float32, [None])
    loss = tx.losses.mean_squared_error(y, p, weights=w)
    assert loss.dtype == tx.float32
    got = run(loss, {y: [1, 2, 3], p: [2, 2, 5], w: [1, 1, 0]})
    np.testing.assert_allclose(got, 0.5, rtol=1e-6)
    assert run(loss, {y: [1.0], p: [2.0], w: [0.0]}) == 0.0  # no nonzero weight: 0, not NaN


def test_sigmoid_cross_entropy_with_logits(graph):
    x = np.array([-800.0, -3.0, -0.5, 0.0, 0.5, 3.0, 800.0])
    z = np.array([0.0, 1.0, 0.3, 0.5, 1.0, 0.0, 1.0])
    logits = tx.constant(x)
    out = tx.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=logits)
    (g,) = tx.gradients(out, [logits])
    got, got_g = run([out, g])
    want = np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    sigmoid = np.exp(-np.logaddexp(0, -x))
    np.testing.assert_allclose(got_g, sigmoid - z, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(got[1:-1], np_sigmoid_xent(z[1:-1], x[1:-1]), rtol=1e-10)
    with pytest.raises(ValueError):
        tx.nn.sigmoid_cross_entropy_with_logits(labels=[1.0, 0.0], logits=[1.0, 2.0, 3.0])


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_sigmoid_cross_entropy(graph, smoothing):
    x = RNG.standard_normal((4, 3)) * 3
    z = (RNG.uniform(size=(4, 3)) > 0.5).astype(np.float64)
    w = np.array([[1.0], [2.0], [0.0], [1.0]])
    got = run(tx.losses.sigmoid_cross_entropy(z, x, weights=w, label_smoothing=smoothing))
    zs = z * (1 - smoothing) + 0.5 * smoothing
    np.testing.assert_allclose(got, np_reduce(np_sigmoid_xent(zs, x), w,
                                              "weighted_sum_by_nonzero_weights"), rtol=1e-10)


def np_log_softmax(x):
    return x - np.logaddexp.reduce(x, axis=-1, keepdims=True)


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_softmax_cross_entropy(graph, smoothing):
    x = RNG.standard_normal((5, 4)) * 2
    labels = np.eye(4)[RNG.integers(0, 4, 5)]
    w = np.array([1.0, 0.0, 2.0, 1.0, 1.0])
    logits = tx.constant(x)
    loss = tx.losses.softmax_cross_entropy(labels, logits, weights=w, label_smoothing=smoothing)
    (g,) = tx.gradients(loss, [logits])
    got, got_g = run([loss, g])
    ls = labels * (1 - smoothing) + smoothing / 4
    per = -(ls * np_log_softmax(x)).sum(-1)
    np.testing.assert_allclose(got, (per * w).sum() / 4, rtol=1e-10)
    sm = np.exp(np_log_softmax(x))
    np.testing.assert_allclose(got_g, (sm - ls) * w[:, None] / 4, rtol=1e-10, atol=1e-14)


def test_sparse_softmax_cross_entropy(graph):
    x = RNG.standard_normal((6, 5)).astype(np.float32)
    y = RNG.integers(0, 5, 6)
    loss = tx.losses.sparse_softmax_cross_entropy(y.astype(np.int32), x)
    loss_col = tx.losses.sparse_softmax_cross_entropy(y.reshape(6, 1).astype(np.int64), x,
                                                      weights=np.arange(6.0).reshape(6, 1))
    got, got_col = run([loss, loss_col])
    per = -np_log_softmax(x.astype(np.float64))[np.arange(6), y]
    np.testing.assert_allclose(got, per.mean(), rtol=1e-6)
    np.testing.assert_allclose(got_col, (per * np.arange(6)).sum() / 5, rtol=1e-6)
    assert len(tx.losses.get_losses()) == 2
    bad = tx.losses.sparse_softmax_cross_entropy(np.int32([0, 7]), np.zeros((2, 5), np.float32))
    with pytest.raises(tx.errors.InvalidArgumentError):
        run(bad)


def test_loss_errors(graph):
    with pytest.raises(ValueError, match="incompatible"):
        tx.losses.mean_squared_error([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="broadcast"):
        tx.losses.mean_squared_error(Y, P, weights=np.ones(4))
    with pytest.raises(ValueError, match="Reduction"):
        tx.losses.mean_squared_error(Y, P, reduction="average")
    with pytest.raises(ValueError, match="None"):
        tx.losses.log_loss(None, P)
    # loss_collection=None keeps it out of the collection
    tx.losses.absolute_difference(Y, P, loss_collection=None)
    assert tx.losses.get_losses() == []


def test_total_loss(graph):
    a = tx.losses.absolute_difference([0.0, 1.0], [1.0, 1.0])  # 0.5
    tx.add_to_collection(tx.GraphKeys.REGULARIZATION_LOSSES, tx.constant(2.0))
    total = tx.losses.get_total_loss()
    no_reg = tx.losses.get_total_loss(add_regularization_losses=False)
    reg = tx.losses.get_regularization_loss()
    assert total.op.name == "total_loss"
    np.testing.assert_allclose(run([total, no_reg, reg]), [2.5, 0.5, 2.0])
    assert tx.losses.get_losses() == [a]
    with tx.Graph().as_default():
        assert run(tx.losses.get_regularization_loss()) == 0.0
        with pytest.raises(ValueError):
            tx.losses.get_total_loss()


# ------------------------------------------------------------------ regularizers

W = RNG.standard_normal((3, 4))


def test_contrib_regularizers(graph):
    w = tx.constant(W)
    l1 = tx.contrib.layers.l1_regularizer(0.3)(w)
    l2 = tx.contrib.layers.l2_regularizer(0.3)(w)
    l1l2 = tx.contrib.layers.l1_l2_regularizer(0.3, 0.2)(w)
    got = run([l1, l2, l1l2])
    np.testing.assert_allclose(got[0], 0.3 * np.abs(W).sum(), rtol=1e-12)
    np.testing.assert_allclose(got[1], 0.3 * (W * W).sum() / 2, rtol=1e-12)
    np.testing.assert_allclose(got[2], 0.3 * np.abs(W).sum() + 0.2 * (W * W).sum() / 2,
                               rtol=1e-12)
    assert l1.op.name == "l1_regularizer" and l2.op.name == "l2_regularizer"
    assert tx.contrib.layers.l2_regularizer(0.0)(w) is None
    assert tx.contrib.layers.l1_l2_regularizer(0.0, 0.0)(w) is None
    with pytest.raises(ValueError, match="integer"):
        tx.contrib.layers.l2_regularizer(1)
    with pytest.raises(ValueError, match="less than 0"):
        tx.contrib.layers.l1_regularizer(-0.1)
    total = tx.contrib.layers.apply_regularization(tx.contrib.layers.l1_regularizer(0.5),
                                                   [w, tx.constant(2 * W)])
    np.testing.assert_allclose(run(total), 0.5 * 3 * np.abs(W).sum(), rtol=1e-12)
    assert tx.losses.get_regularization_losses() == [total]


def test_keras_regularizers(graph):
    w = tx.constant(W.astype(np.float32))
    got = run([tx.keras.regularizers.l1(0.1)(w), tx.keras.regularizers.l2(0.1)(w),
               tx.keras.regularizers.l1_l2(0.1, 0.2)(w), tx.keras.regularizers.L1L2()(w)])
    np.testing.assert_allclose(got[0], 0.1 * np.abs(W).sum(), rtol=1e-6)
    np.testing.assert_allclose(got[1], 0.1 * (W * W).sum(), rtol=1e-6)
    np.testing.assert_allclose(got[2], 0.1 * np.abs(W).sum() + 0.2 * (W * W).sum(), rtol=1e-6)
    assert got[3] == 0.0
    assert tx.keras.regularizers.l1_l2(0.1, 0.2).get_config() == {"l1": 0.1, "l2": 0.2}
    with pytest.raises(ValueError):
        tx.keras.regularizers.L1L2(l1=-1.0)
