"""tx.get_variable and tx.variable_scope (ops/variable_scope.py): names, reuse modes and their
errors (TF's messages), default and scope initializers, regularization losses, default names,
re-entering a scope object, dtypes and collections; values checked after initialization."""

import math

import numpy as np
import pytest

import tensorflux as tx


def init_and_run(fetches):
    with tx.Session() as sess:
        sess.run(tx.global_variables_initializer())
        return sess.run(fetches)


def test_get_variable_names_and_default_initializers(graph):
    w = tx.get_variable("w", [30, 20])
    k = tx.get_variable("k", [4], dtype=tx.int32)
    b = tx.get_variable("flag", [2], dtype=tx.bool)
    assert w.name == "w:0" and w.dtype.base_dtype == tx.float32
    assert w.get_shape().as_list() == [30, 20]
    # The initializer's ops sit under "<name>/Initializer/", as TF.
    assert any(op.name.startswith("w/Initializer/") for op in graph.get_operations())
    wv, kv, bv = init_and_run([w, k, b])
    limit = math.sqrt(6.0 / 50)  # glorot_uniform
    assert np.abs(wv).max() <= limit and np.abs(wv).max() > 0.8 * limit
    np.testing.assert_array_equal(kv, [0, 0, 0, 0])
    np.testing.assert_array_equal(bv, [False, False])
    assert w in tx.trainable_variables() and w in tx.global_variables()


def test_nested_scopes_and_name_scopes(graph):
    with tx.variable_scope("foo"):
        with tx.variable_scope("bar") as scope:
            v = tx.get_variable("v", [1])
            op = tx.constant(1.0, name="c")
            assert tx.get_variable_scope() is scope
    assert scope.name == "foo/bar" and scope.original_name_scope == "foo/bar/"
    assert v.name == "foo/bar/v:0" and op.name == "foo/bar/c:0"
    # Re-entered by name: variables keep the scope name, ops get a fresh name scope.
    with tx.variable_scope("foo"):
        c2 = tx.constant(2.0, name="c")
        w = tx.get_variable("w", [1])
    assert w.name == "foo/w:0" and c2.name == "foo_1/c:0"
    assert tx.get_variable_scope().name == ""
    # Inside a name scope, variable names ignore it (TF).
    with tx.name_scope("ns"):
        with tx.variable_scope("vs"):
            u = tx.get_variable("u", [1])
            c3 = tx.constant(0.0, name="c")
    assert u.name == "vs/u:0" and c3.name == "ns/vs/c:0"


def test_reuse_modes_and_errors(graph):
    with tx.variable_scope("s"):
        v = tx.get_variable("v", [2, 3])
    with pytest.raises(ValueError, match="Variable s/v already exists, disallowed"):
        with tx.variable_scope("s"):
            tx.get_variable("v", [2, 3])
    with tx.variable_scope("s", reuse=True):
        assert tx.get_variable("v", [2, 3]) is v
        assert tx.get_variable("v") is v  # shape may be left out when reusing
        with tx.variable_scope("inner", reuse=False):  # False inherits: still reusing
            assert tx.get_variable_scope().reuse is True
        with pytest.raises(ValueError, match="Variable s/w does not exist, or was not created"):
            tx.get_variable("w", [1])
        with pytest.raises(ValueError, match="specified shape"):
            tx.get_variable("v", [3, 2])
        with pytest.raises(ValueError, match="specified dtype"):
            tx.get_variable("v", [2, 3], dtype=tx.float64)
    with tx.variable_scope("s") as scope:
        scope.reuse_variables()
        assert tx.get_variable("v") is v
    with tx.variable_scope("s", reuse=tx.AUTO_REUSE):
        assert tx.get_variable("v", [2, 3]) is v
        new = tx.get_variable("new", [1])
        assert new.name == "s/new:0"
        assert tx.get_variable("new", [1]) is new
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with tx.variable_scope(None, default_name="d", reuse=True):
            pass
    with pytest.raises(TypeError, match="name_or_scope is required"):
        with tx.variable_scope(None):
            pass


def test_scope_object_reentry(graph):
    with tx.variable_scope("model") as model_scope:
        w = tx.get_variable("w", [2])
    with tx.variable_scope("other"):
        with tx.variable_scope(model_scope, reuse=True) as again:
            assert again.name == "model"  # not nested under "other"
            assert tx.get_variable("w", [2]) is w
            c = tx.constant(1.0, name="c")
    assert c.name == "model/c:0"  # the scope's original name scope


def test_default_names(graph):
    names = []
    for _ in range(3):
        with tx.variable_scope(None, default_name="dense"):
            names.append(tx.get_variable("kernel", [1]).name)
    assert names == ["dense/kernel:0", "dense_1/kernel:0", "dense_2/kernel:0"]
    with tx.variable_scope("outer"):
        with tx.variable_scope(None, default_name="dense") as s:
            assert s.name == "outer/dense"


def test_initializer_values_and_scope_defaults(graph):
    c = tx.get_variable("c", initializer=tx.constant([1.0, 2.0, 3.0]))
    assert c.get_shape().as_list() == [3]
    i = tx.get_variable("i", [2, 2], initializer=tx.constant_initializer(4.0))
    with tx.variable_scope("sc", initializer=tx.ones_initializer(), dtype=tx.float64):
        o = tx.get_variable("o", [3])
        with tx.variable_scope("sub"):
            o2 = tx.get_variable("o2", [2])
            z = tx.get_variable("z", [2], initializer=tx.zeros_initializer())
    assert o.dtype.base_dtype == tx.float64 and o2.dtype.base_dtype == tx.float64
    cv, iv, ov, o2v, zv = init_and_run([c, i, o, o2, z])
    np.testing.assert_array_equal(cv, [1, 2, 3])
    np.testing.assert_array_equal(iv, np.full((2, 2), 4.0))
    np.testing.assert_array_equal(ov, np.ones(3))
    np.testing.assert_array_equal(o2v, np.ones(2))
    np.testing.assert_array_equal(zv, np.zeros(2))
    # An initializer class is instantiated.
    assert init_and_run(tx.get_variable("k", [2], initializer=tx.ones_initializer)).tolist() == \
        [1.0, 1.0]


def test_get_variable_argument_errors(graph):
    with pytest.raises(ValueError, match="do not specify shape"):
        tx.get_variable("a", [3], initializer=tx.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="must be fully defined"):
        tx.get_variable("b", [None, 3])
    with pytest.raises(ValueError, match="must be fully defined"):
        tx.get_variable("b2")
    with pytest.raises(ValueError, match="don't match"):
        tx.get_variable("c", dtype=tx.float64, initializer=tx.constant([1.0]))
    with pytest.raises(ValueError, match="An initializer for variable d"):
        tx.get_variable("d", [1], dtype=tx.resource)


def test_regularizers_go_to_regularization_losses(graph):
    def l2(v):
        return tx.reduce_sum(tx.square(v)) * 0.5

    w = tx.get_variable("w", initializer=tx.constant([1.0, -2.0]), regularizer=l2)
    with tx.variable_scope("r", regularizer=lambda v: tx.reduce_sum(tx.abs(v))):
        u = tx.get_variable("u", initializer=tx.constant([3.0, -4.0]))
        tx.get_variable("none", [2], regularizer=tx.no_regularizer)
    losses = tx.get_collection(tx.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 2
    assert losses[0].name.startswith("w/Regularizer/")
    assert losses[1].name.startswith("r/u/Regularizer/")
    lv = init_and_run(losses)
    assert lv[0] == pytest.approx(2.5) and lv[1] == pytest.approx(7.0)
    assert u.name == "r/u:0" and w.name == "w:0"


def test_trainable_and_collections(graph):
    a = tx.get_variable("a", [1], trainable=False)
    b = tx.get_variable("b", [1], collections=["mine"])
    assert a in tx.global_variables() and a not in tx.trainable_variables()
    assert tx.get_collection("mine") == [b]
    assert b not in tx.global_variables()


def test_variables_ignore_control_dependencies(graph):
    gate = tx.no_op(name="gate")
    with tx.control_dependencies([gate]):
        v = tx.get_variable("v", [2])
        c = tx.constant(1.0, name="c")
    assert c.op.control_inputs == [gate]
    made = [op for op in graph.get_operations() if op.name.startswith("v")]
    assert made and all(gate not in op.control_inputs for op in made)
    assert v.initializer.control_inputs == []
