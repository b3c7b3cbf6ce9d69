"""tx.nn.dropout and tx.layers.dropout: kept values scaled by 1 / keep, zero fraction near rate
(binomial bounds), mean preserved, noise_shape, seeds (same seeds -> same mask in fresh graphs,
a new mask per run), the training switch (Python bool, constant, boolean placeholder), the
gradient (mask / keep), and argument errors."""

import numpy as np
import pytest

import tensorflux as tx

N = 20000


def run(fetches, feed_dict=None):
    with tx.Session(graph=tx.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


def _check_mask(got, x, rate):
    kept = got != 0
    np.testing.assert_allclose(got[kept], x[kept] / (1 - rate), rtol=1e-6)
    frac = 1 - kept.mean()
    sd = np.sqrt(rate * (1 - rate) / x.size)
    assert abs(frac - rate) < 5 * sd, (frac, rate)


@pytest.mark.parametrize("rate", [0.1, 0.5, 0.8])
def test_dropout_rate(graph, rate):
    x = np.random.default_rng(1).uniform(1, 2, N).astype(np.float32)
    got = run(tx.nn.dropout(tx.constant(x), rate=rate, seed=3))
    _check_mask(got, x, rate)
    # the mean is preserved: E[out] = x; the bound is 5 sd of the sample mean
    ones = run(tx.nn.dropout(tx.ones([N]), rate=rate, seed=4))
    assert abs(ones.mean() - 1) < 5 * np.sqrt(rate / (1 - rate) / N)


def test_keep_prob_and_tensor_rate(graph):
    x = np.ones(N, np.float32)
    a = tx.nn.dropout(tx.constant(x), 0.75, seed=5)  # TF 1.x: second positional is keep_prob
    r = tx.placeholder(tx.float32, [])
    b = tx.nn.dropout(tx.constant(x), rate=r, seed=6)
    got_a, got_b = run([a, b], {r: 0.25})
    _check_mask(got_a, x, 0.25)
    _check_mask(got_b, x, 0.25)
    assert tx.nn.dropout(tx.constant(x), rate=0.0).op.type == "Const"  # rate 0: x itself


def test_noise_shape(graph):
    x = np.ones((200, 50), np.float32)
    got = run(tx.nn.dropout(tx.constant(x), rate=0.5, noise_shape=[200, 1], seed=7))
    # whole rows are kept or dropped together
    assert all(len(set(row)) == 1 for row in got)
    assert set(np.unique(got)) <= {0.0, 2.0}
    got = run(tx.nn.dropout(tx.constant(x), rate=0.5, noise_shape=[None, 1], seed=7))
    assert all(len(set(row)) == 1 for row in got)


def _mask_of_fresh_graph(graph_seed, op_seed):
    with tx.Graph().as_default():
        if graph_seed is not None:
            tx.set_random_seed(graph_seed)
        y = tx.nn.dropout(tx.ones([1000]), rate=0.5, seed=op_seed)
        with tx.Session() as sess:
            return sess.run(y), sess.run(y)


def test_seeds():
    a1, a2 = _mask_of_fresh_graph(None, 11)
    b1, b2 = _mask_of_fresh_graph(None, 11)
    c1, _ = _mask_of_fresh_graph(None, 12)
    d1, _ = _mask_of_fresh_graph(42, None)
    e1, _ = _mask_of_fresh_graph(42, None)
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    np.testing.assert_array_equal(d1, e1)
    assert not np.array_equal(a1, a2)  # each run draws a new mask
    assert not np.array_equal(a1, c1)


def test_gradient_is_mask_over_keep(graph):
    x = tx.constant(np.full(1000, 3.0, np.float32))
    y = tx.nn.dropout(x, rate=0.4, seed=9)
    (g,) = tx.gradients(y, [x])
    got_y, got_g = run([y, g])
    np.testing.assert_allclose(got_g, (got_y != 0) / 0.6, rtol=1e-6)


def test_dropout_errors(graph):
    x = tx.ones([3])
    with pytest.raises(ValueError, match="range"):
        tx.nn.dropout(x, rate=1.0)
    with pytest.raises(ValueError, match="range"):
        tx.nn.dropout(x, keep_prob=0.0)
    with pytest.raises(ValueError, match="exactly one"):
        tx.nn.dropout(x)
    with pytest.raises(ValueError, match="exactly one"):
        tx.nn.dropout(x, keep_prob=0.5, rate=0.5)
    with pytest.raises(ValueError, match="floating"):
        tx.nn.dropout(tx.ones([3], tx.int32), rate=0.5)
    with pytest.raises(ValueError, match="scalar"):
        tx.nn.dropout(x, rate=tx.constant([0.1, 0.2]))


def test_layers_dropout_training_switch(graph):
    x = np.random.default_rng(2).uniform(1, 2, N).astype(np.float32)
    xt = tx.constant(x)
    np.testing.assert_array_equal(run(tx.layers.dropout(xt, rate=0.5)), x)  # default: off
    off = tx.layers.dropout(xt, rate=0.5, training=False)
    on = tx.layers.dropout(xt, rate=0.5, training=True, seed=1)
    training = tx.placeholder(tx.bool, [])
    switched = tx.layers.dropout(xt, rate=0.5, training=training, seed=1)
    np.testing.assert_array_equal(run(off), x)
    _check_mask(run(on), x, 0.5)
    np.testing.assert_array_equal(run(switched, {training: False}), x)
    _check_mask(run(switched, {training: True}), x, 0.5)
    const_true = tx.layers.dropout(xt, rate=0.5, training=tx.constant(True), seed=1)
    assert const_true.op.type == "Mul"  # decided when the graph is built: no SelectV2
    assert switched.op.type == "SelectV2"
    _check_mask(run(const_true), x, 0.5)
    (g,) = tx.gradients(switched, [xt])
    np.testing.assert_array_equal(run(g, {training: False}), np.ones(N, np.float32))
    with pytest.raises(ValueError):
        tx.layers.dropout(xt, training=tx.placeholder(tx.bool, [2]))
