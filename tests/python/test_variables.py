"""tx.Variable (resource variables): properties, collections, initializers, reads, updates,
operators, snapshot semantics, errors and gradients, checked against numpy."""

import threading

import numpy as np
import pytest

import tensorflux as tx


def test_properties_and_collections(graph):
    init = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    v = tx.Variable(init, name="v")
    w = tx.Variable(tx.zeros([3], dtype=tx.float64), name="w", trainable=False)
    u = tx.Variable(5, name="u", collections=["mine"])
    assert v.name == "v:0" and v.op.name == "v" and v.op.type == "VarHandleOp"
    assert v.handle.dtype == tx.resource
    assert v.dtype == tx.float32 and w.dtype == tx.float64 and u.dtype == tx.int32
    assert v.shape.as_list() == [2, 2] and v.get_shape().as_list() == [2, 2]
    assert v.initializer.type == "AssignVariableOp"
    assert v.value().dtype == tx.float32 and v.value().shape.as_list() == [2, 2]
    assert v.trainable and not w.trainable
    assert tx.global_variables() == [v, w]
    assert tx.trainable_variables() == [v, u]  # trainable joins TRAINABLE_VARIABLES (TF)
    assert tx.get_collection("mine") == [u]
    assert tx.global_variables("w") == [w]
    # A second variable with the same name gets a unique one, as TF.
    v2 = tx.Variable(1.0, name="v")
    assert v2.name == "v_1:0"


def test_initialize_read_and_update(graph):
    v = tx.Variable([1.0, 2.0, 3.0], name="v")
    n = tx.Variable(tx.ones([2], tx.int64), name="n")
    add = v.assign_add([10.0, 20.0, 30.0])
    sub = v.assign_sub([1.0, 1.0, 1.0], read_value=False)
    assign = v.assign([7.0, 8.0, 9.0])
    with tx.Session() as sess:
        assert not sess.run(v.is_initialized())
        sess.run(tx.global_variables_initializer())
        assert sess.run(v.is_initialized())
        np.testing.assert_array_equal(sess.run(v), [1, 2, 3])
        np.testing.assert_array_equal(sess.run(add), [11, 22, 33])
        assert isinstance(sub, tx.Operation)
        sess.run(sub)
        np.testing.assert_array_equal(v.eval(), [10, 21, 32])
        np.testing.assert_array_equal(sess.run(assign), [7, 8, 9])
        np.testing.assert_array_equal(sess.run(n), [1, 1])
        v.load(np.array([0.5, 0.5, 0.5], np.float32), sess)
        np.testing.assert_array_equal(sess.run(v.read_value()), [0.5, 0.5, 0.5])


def test_values_persist_across_runs_and_die_with_the_session(graph):
    v = tx.Variable(0, name="counter")
    inc = v.assign_add(1)
    init = tx.global_variables_initializer()
    with tx.Session() as sess:
        sess.run(init)
        for _ in range(5):
            sess.run(inc)
        assert sess.run(v) == 5
    with tx.Session() as sess:
        with pytest.raises(tx.errors.FailedPreconditionError):
            sess.run(v)


def test_operators_and_conversion(graph):
    a = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
    v = tx.Variable(a, name="v")
    x = tx.constant([[2.0], [1.0]])
    exprs = [v * 2.0, 3.0 - v, v + v, -v, abs(v), v @ x, tx.matmul(v, x), v[1], v[:, 0],
             v > 0.0, v / 4.0, v ** 2]
    want = [a * 2, 3 - a, a + a, -a, np.abs(a), a @ [[2.0], [1.0]], a @ [[2.0], [1.0]], a[1],
            a[:, 0], a > 0, a / 4, a ** 2]
    with tx.Session() as sess:
        sess.run(v.initializer)
        for got, expected in zip(sess.run(exprs), want):
            np.testing.assert_allclose(got, expected, rtol=1e-6)
        np.testing.assert_array_equal(sess.run(tx.convert_to_tensor(v)), a)
    with pytest.raises(ValueError):
        tx.convert_to_tensor(v, dtype=tx.int32)
    with pytest.raises(TypeError):
        bool(v)


def test_initializer_from_another_variable_and_callable(graph):
    a = tx.Variable(tx.random_normal([3, 2], seed=1), name="a")
    b = tx.Variable(a.initial_value * 2.0, name="b")
    c = tx.Variable(lambda: tx.fill([2], 4.0), name="c")
    with tx.Session() as sess:
        sess.run(tx.variables_initializer([a, b, c]))
        av, bv, cv = sess.run([a, b, c])
        np.testing.assert_allclose(bv, av * 2.0, rtol=1e-6)  # one random draw feeds both
        np.testing.assert_array_equal(cv, [4.0, 4.0])
        assert av.shape == (3, 2)


def test_uninitialized_read_names_the_variable(graph):
    v = tx.Variable([1.0], name="weights")
    with tx.Session() as sess:
        with pytest.raises(tx.errors.FailedPreconditionError) as info:
            sess.run(v)
        assert "weights" in info.value.message
        assert "uninitialized" in info.value.message


def test_assign_of_wrong_shape_or_dtype(graph):
    v = tx.Variable([1.0, 2.0], name="v")
    with pytest.raises(ValueError):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises((TypeError, ValueError)):
        v.assign(tx.constant([1, 2]))
    # The kernel checks too: a placeholder of unknown shape fed a wrong shape.
    p = tx.placeholder(tx.float32)
    assign = v.assign(p)
    with tx.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(tx.errors.InvalidArgumentError) as info:
            sess.run(assign, {p: [1.0, 2.0, 3.0]})
        assert "shape" in info.value.message
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_reads_are_snapshots(graph):
    v = tx.Variable([1.0, 2.0], name="v")
    before = v.read_value()
    with tx.control_dependencies([before]):
        update = v.assign_add([10.0, 10.0], read_value=False)
    with tx.control_dependencies([update]):
        after = v.read_value()
    with tx.Session() as sess:
        sess.run(v.initializer)
        b, a = sess.run([before, after])
        np.testing.assert_array_equal(b, [1.0, 2.0])
        np.testing.assert_array_equal(a, [11.0, 12.0])


def test_concurrent_assign_add_from_threads(graph):
    v = tx.Variable(tx.zeros([8], tx.float64), name="v")
    inc = v.assign_add(tx.ones([8], tx.float64), read_value=False)
    threads, steps = 6, 50
    with tx.Session() as sess:
        sess.run(v.initializer)

        def work():
            for _ in range(steps):
                sess.run(inc)
        ts = [threading.Thread(target=work) for _ in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        np.testing.assert_array_equal(sess.run(v), np.full(8, threads * steps))


def test_gradients_with_respect_to_variable_handle_and_read(graph):
    w0 = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
    x0 = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]], np.float32)
    w = tx.Variable(w0, name="w")
    x = tx.constant(x0)
    read = w.value()
    loss = tx.reduce_sum(tx.square(tx.matmul(x, read)))
    g_handle, = tx.gradients(loss, [w.handle])
    g_var, = tx.gradients(loss, [w])
    g_read, = tx.gradients(loss, [read])
    # Each value() is a new read (as TF): one the loss does not use gets no gradient.
    assert tx.gradients(loss, [w.value()]) == [None]
    want = 2.0 * x0.T @ (x0 @ w0)
    with tx.Session() as sess:
        sess.run(w.initializer)
        for g in sess.run([g_handle, g_var, g_read]):
            np.testing.assert_allclose(g, want, rtol=1e-5)


def test_gradient_of_two_reads_sums(graph):
    w = tx.Variable([1.0, 2.0], name="w")
    loss = tx.reduce_sum(w.read_value() * 3.0) + tx.reduce_sum(w.read_value() * w.value())
    g, = tx.gradients(loss, [w])
    with tx.Session() as sess:
        sess.run(w.initializer)
        np.testing.assert_allclose(sess.run(g), [3.0 + 2.0, 3.0 + 4.0])
