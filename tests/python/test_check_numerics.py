"""The NaN/Inf guard: tx.check_numerics (CheckNumerics, TF's texts) and the session option
ConfigProto.check_numerics that fails a step at the first node with a NaN or Inf output."""

import numpy as np
import pytest

import tensorflux as tx


@pytest.mark.parametrize("dtype", [tx.float32, tx.float64, tx.float16, tx.bfloat16])
def test_check_numerics_messages(graph, dtype):
    x = tx.placeholder(dtype, [None])
    y = tx.check_numerics(x, "checking x")
    with tx.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, -2.0]}).astype(np.float64),
                                      [1.0, -2.0])
        for values, text in (([1.0, np.nan], "NaN"), ([np.inf, 1.0], "Inf"),
                             ([-np.inf, np.nan], "NaN and Inf")):
            with pytest.raises(tx.errors.InvalidArgumentError) as e:
                sess.run(y, {x: values})
            assert "checking x : Tensor had %s values" % text in e.value.message
            assert e.value.op is y.op


def test_check_numerics_gradient_is_checked(graph):
    x = tx.placeholder(tx.float32, [2])
    y = tx.sqrt(tx.check_numerics(x, "x"))  # the gradient reaching x is checked
    g, = tx.gradients(tx.reduce_sum(y), [x])
    with tx.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: [4.0, 1.0]}), [0.25, 0.5])
        with pytest.raises(tx.errors.InvalidArgumentError) as e:
            sess.run(g, {x: [0.0, 1.0]})  # d sqrt(x) at 0 is Inf
        assert ("Not a number (NaN) or infinity (Inf) values detected in gradient. x : "
                "Tensor had Inf values") in e.value.message


def test_session_option_names_the_first_bad_node(graph):
    x = tx.placeholder(tx.float32, [3], name="x")
    a = tx.log(x, name="a")          # log(0) = -Inf: the first bad output
    b = tx.multiply(a, 2.0, name="b")
    c = tx.sqrt(x - 5.0, name="c")   # NaN for x < 5, but independent of a
    ok = tx.add(x, 1.0, name="ok")
    assert tx.ConfigProto(check_numerics=True).check_numerics
    with tx.Session(config=tx.ConfigProto(check_numerics=True,
                                          inter_op_parallelism_threads=-1)) as sess:
        np.testing.assert_allclose(sess.run(b, {x: [1.0, 2.0, 3.0]}), 2 * np.log([1, 2, 3]),
                                   rtol=1e-6)
        with pytest.raises(tx.errors.InvalidArgumentError) as e:
            sess.run(b, {x: [0.0, 1.0, 2.0]})
        assert "{{node a}} (op Log): output 0 has Inf values" in e.value.message
        with pytest.raises(tx.errors.InvalidArgumentError) as e:
            sess.run(c, {x: [0.0, 1.0, 2.0]})
        assert "{{node c}} (op Sqrt): output 0 has NaN values" in e.value.message
        # A fed Inf is not an error by itself (feeds are not checked); the op it reaches is.
        with pytest.raises(tx.errors.InvalidArgumentError) as e:
            sess.run(ok, {x: [np.inf, 0.0, 1.0]})
        assert "{{node ok}}" in e.value.message and "output 0 has Inf values" in e.value.message
    # Without the option the same step returns the non-finite values.
    with tx.Session() as sess:
        out = sess.run(b, {x: [0.0, 1.0, 2.0]})
        assert np.isneginf(out[0])


def test_session_option_checks_variables_updated_in_place(graph):
    # An optimizer step writes no float output: the variable it updated is checked instead.
    w = tx.Variable([1.0, 2.0], name="w")
    step = tx.train.GradientDescentOptimizer(3e38).minimize(tx.reduce_sum(w * w))
    with tx.Session(config=tx.ConfigProto(check_numerics=True)) as sess:
        sess.run(w.initializer)
        with pytest.raises(tx.errors.InvalidArgumentError) as e:
            sess.run(step)  # w - 3e38 * 2w overflows float32
        assert ("(op ResourceApplyGradientDescent): updated variable w (input 0) has Inf values"
                in e.value.message)
