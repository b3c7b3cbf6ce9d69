"""tx.graph_util: a model trained a few steps, frozen, serialized, imported into a fresh graph and
run without variables gives the trained session's outputs bit for bit."""

import numpy as np
import pytest

import tensorflux as tx


def _train_small_model():
    g = tx.Graph()
    with g.as_default():
        tx.set_random_seed(3)
        x = tx.placeholder(tx.float32, [None, 4], name="x")
        y = tx.placeholder(tx.int32, [None], name="y")
        h = tx.layers.dense(x, 8, activation=tx.nn.relu)
        h = tx.layers.dropout(h, rate=0.5, training=False)
        logits = tx.layers.dense(h, 3)
        probs = tx.nn.softmax(logits, name="probs")
        loss = tx.losses.sparse_softmax_cross_entropy(y, logits)
        train_op = tx.train.AdamOptimizer(0.05).minimize(loss)
        init = tx.global_variables_initializer()
    sess = tx.Session(graph=g)
    sess.run(init)
    rng = np.random.default_rng(0)
    data = rng.standard_normal((16, 4)).astype(np.float32)
    labels = rng.integers(0, 3, 16).astype(np.int32)
    for _ in range(5):
        sess.run(train_op, {x: data, y: labels})
    return g, sess, data


def test_frozen_model_matches_trained_session():
    g, sess, data = _train_small_model()
    want = sess.run("probs:0", {"x:0": data})
    frozen = tx.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["probs"])
    frozen = tx.graph_util.remove_training_nodes(frozen, protected_nodes=["probs"])
    ops = {n.op for n in frozen.node}
    assert not ops & {"VarHandleOp", "ReadVariableOp", "VariableV2", "ResourceApplyAdam"}
    assert "Const" in ops
    blob = frozen.SerializeToString()
    with tx.Graph().as_default() as g2:
        gd = tx.GraphDef()
        gd.ParseFromString(blob)
        tx.import_graph_def(gd, name="")
        with tx.Session(graph=g2) as s2:
            got = s2.run("probs:0", {"x:0": data})
    np.testing.assert_array_equal(got, want)
    sess.close()


def test_extract_sub_graph_and_errors():
    g, sess, _ = _train_small_model()
    gd = g.as_graph_def()
    sub = tx.graph_util.extract_sub_graph(gd, ["probs"])
    names = {n.name for n in sub.node}
    assert "probs" in names and "x" in names and "y" not in names
    with pytest.raises(tx.errors.NotFoundError, match="nope"):
        tx.graph_util.extract_sub_graph(gd, ["nope"])
    with pytest.raises(TypeError, match="list of node names"):
        tx.graph_util.extract_sub_graph(gd, "probs")
    with pytest.raises(TypeError, match="GraphDef"):
        tx.graph_util.extract_sub_graph(b"xx", ["probs"])
    sess.close()


def test_uninitialized_variable_fails():
    with tx.Graph().as_default() as g:
        v = tx.get_variable("v", [2], initializer=tx.zeros_initializer())
        tx.identity(v, name="out")
    with tx.Session(graph=g) as sess:
        with pytest.raises(tx.errors.FailedPreconditionError):
            tx.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["out"])
