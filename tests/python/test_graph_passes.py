"""The master's graph passes from Python (passes/graph_optimizer.h): switched through TF's
tx.ConfigProto(graph_options=tx.GraphOptions(optimizer_options=..., rewrite_options=...)),
visible in RunMetadata.partition_graphs, and giving the same bits on and off for the examples'
graphs: examples/fashion_mnist/mlp.py's model (dense-ReLU-dense, sparse softmax cross-entropy,
Adam) and examples/fashion_mnist/model.py's CNN trained three steps on random data, and
examples/python/hello.py."""

import os
import sys

import numpy as np

import tensorflux as tx
from tensorflux.rewriter_config_pb2 import RewriterConfig

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                                "fashion_mnist"))
import model  # noqa: E402  pylint: disable=wrong-import-position


def _config(level=None, **toggles):
    opts = tx.OptimizerOptions(opt_level=level) if level is not None else None
    rewrite = RewriterConfig(**toggles) if toggles else None
    return tx.ConfigProto(graph_options=tx.GraphOptions(optimizer_options=opts,
                                                        rewrite_options=rewrite))


OFF = _config(level=tx.OptimizerOptions.L0)


def _mlp_logits(x):
    return tx.layers.dense(tx.layers.dense(x, 32, activation=tx.nn.relu), 10)


def _cnn_logits(x):
    return model.cnn_logits(x, training=False, dropout_rate=0.0, seed=3)


def _graph(logits_fn, x_shape):
    g = tx.Graph()
    with g.as_default():
        tx.set_random_seed(3)
        x = tx.placeholder(tx.float32, [None] + list(x_shape), name="x")
        y = tx.placeholder(tx.int32, [None], name="y")
        logits = logits_fn(x)
        loss = tx.losses.sparse_softmax_cross_entropy(y, logits)
        train = tx.train.AdamOptimizer(1e-2).minimize(loss)
        init = tx.global_variables_initializer()
        variables = tx.trainable_variables()
    return g, x, y, loss, train, init, variables


def _train(config, logits_fn=_mlp_logits, x_shape=(64,)):
    g, x, y, loss, train, init, variables = _graph(logits_fn, x_shape)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((16,) + tuple(x_shape)).astype(np.float32)
    ys = rng.integers(0, 10, 16).astype(np.int32)
    losses, ops = [], set()
    with tx.Session(graph=g, config=config) as sess:
        sess.run(init)
        for _ in range(3):
            md = tx.RunMetadata()
            _, l = sess.run([train, loss], {x: xs, y: ys},
                            options=tx.RunOptions(output_partition_graphs=True), run_metadata=md)
            losses.append(l)
            ops = {n.op for pg in md.partition_graphs for n in pg.node}
        values = sess.run(variables)
    return losses, values, ops


def test_mlp_training_is_bit_identical_with_passes_on_and_off():
    on_losses, on_values, on_ops = _train(None)
    off_losses, off_values, off_ops = _train(OFF)
    assert on_losses[0] != on_losses[2]  # it trained
    for a, b in zip(on_losses + on_values, off_losses + off_values):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    # Both dense layers fused (with and without the ReLU) when on; nothing fused when off.
    assert "_FusedMatMul" in on_ops and "MatMul" in on_ops  # MatMul stays in the gradients
    assert "_FusedMatMul" not in off_ops


def test_cnn_training_is_bit_identical_with_passes_on_and_off():
    on_losses, on_values, on_ops = _train(None, _cnn_logits, (28, 28, 1))
    off_losses, off_values, off_ops = _train(OFF, _cnn_logits, (28, 28, 1))
    assert on_losses[0] != on_losses[2]  # it trained
    for a, b in zip(on_losses + on_values, off_losses + off_values):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    # Both conv blocks' forward chains and both pools' MaxPoolGrad -> ReluGrad -> BiasAddGrad
    # fused (the dense layer's ReluGrad and BiasAddGrad stay).
    assert {"_FusedConv2D", "_FusedMaxPoolGrad"} <= on_ops
    assert "MaxPoolGrad" not in on_ops and "MaxPoolGrad" in off_ops
    assert "_FusedMaxPoolGrad" not in off_ops


def test_rewriter_config_switches_one_pass():
    _, _, ops = _train(_config(remapping=RewriterConfig.OFF))
    assert "_FusedMatMul" not in ops
    _, _, ops = _train(_config(level=tx.OptimizerOptions.L0, remapping=RewriterConfig.ON))
    assert "_FusedMatMul" in ops


def test_constant_folding_in_the_executed_graph():
    g = tx.Graph()
    with g.as_default():
        x = tx.placeholder(tx.float32, [2], name="x")
        c = tx.add(tx.constant(2.0), tx.constant(3.0), name="c")
        out = tx.multiply(x, c, name="out")
    for config, want in ((None, "Const"), (OFF, "AddV2"),
                         (_config(constant_folding=RewriterConfig.OFF), "AddV2")):
        with tx.Session(graph=g, config=config) as sess:
            md = tx.RunMetadata()
            v = sess.run(out, {x: np.array([1.5, -1], np.float32)},
                         options=tx.RunOptions(output_partition_graphs=True), run_metadata=md)
        np.testing.assert_array_equal(v, np.array([7.5, -5], np.float32))
        ops = {n.name: n.op for n in md.partition_graphs[0].node}
        assert ops["c"] == want


def test_hello_example_same_with_passes_on_and_off():
    g = tx.Graph()
    with g.as_default():
        x = tx.placeholder(tx.float32, shape=[None, 2], name="x")
        w = tx.constant([[1.0, 2.0], [3.0, 4.0]], name="w")
        y = tx.add(tx.matmul(x, w), 1.0, name="y")
    feed = {x: np.array([[1.0, 1.0], [0.5, -2]], dtype=np.float32)}
    results = []
    for config in (None, OFF):
        with tx.Session(graph=g, config=config) as sess:
            results.append(sess.run(y, feed))
    np.testing.assert_array_equal(results[0], np.array([[5, 7], [-4.5, -6]], np.float32))
    assert results[0].tobytes() == results[1].tobytes()
