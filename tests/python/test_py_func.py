"""tx.py_func (PyFunc): values against numpy, several outputs, inside Dataset.map (sequential and
parallel), and Python exceptions becoming the op's error with TF's codes, naming the node."""

import numpy as np
import pytest

import tensorflux as tx
from conftest import drain_one_shot


def test_values_and_dtypes(graph):
    x = np.array([[1.5, -2.0], [3.0, 0.25]], dtype=np.float32)
    calls = []

    def f(a, b):
        calls.append((a.dtype, b.dtype))
        # not an op the engine has in one piece; the result must have Tout's dtype, as in TF
        return (np.sort(a, axis=1) * b).astype(np.float32)

    y = tx.py_func(f, [tx.constant(x), tx.constant(3, dtype=tx.int64)], tx.float32)
    assert isinstance(y, tx.Tensor) and y.dtype == tx.float32
    two = tx.py_func(lambda a: (a.sum(dtype=np.float64), [b"x" * int(a.size)]), [x],
                     [tx.float64, tx.string], name="two_outputs")
    assert [t.dtype for t in two] == [tx.float64, tx.string]
    with tx.Session() as sess:
        np.testing.assert_array_equal(sess.run(y), np.sort(x, axis=1) * 3)
        total, strings = sess.run(two)
    assert calls == [(np.float32, np.int64)]
    assert total.dtype == np.float64 and total == pytest.approx(float(x.astype(np.float64).sum()))
    assert list(strings) == [b"xxxx"]
    # Tout [] returns the Operation; it runs for its side effect.
    seen = []
    op = tx.py_func(lambda v: seen.append(int(v)), [tx.constant(7)], [])
    with tx.Session() as sess:
        sess.run(op)
    assert seen == [7]


@pytest.mark.parametrize("parallel", [None, 3])
def test_inside_dataset_map(graph, parallel):
    def collatz_steps(n):  # plain Python control flow
        n, steps = int(n), 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        return np.int64(steps)

    def fn(x):
        steps = tx.py_func(collatz_steps, [x], tx.int64)
        steps.set_shape([])
        return x, steps

    ds = tx.data.Dataset.range(1, 30).map(fn, num_parallel_calls=parallel).batch(10)
    out = drain_one_shot(ds)
    xs = np.concatenate([b[0] for b in out])
    steps = np.concatenate([b[1] for b in out])
    np.testing.assert_array_equal(xs, np.arange(1, 30))
    assert list(steps[:9]) == [0, 1, 7, 2, 5, 8, 16, 3, 19]  # hand-worked Collatz step counts
    assert steps[26] == 111  # 27, the well-known long one


@pytest.mark.parametrize("exc, error", [
    (ValueError("bad value 42"), tx.errors.InvalidArgumentError),
    (TypeError("bad type"), tx.errors.InvalidArgumentError),
    (StopIteration(), tx.errors.OutOfRangeError),
    (NotImplementedError("todo"), tx.errors.UnimplementedError),
    (RuntimeError("boom"), tx.errors.UnknownError),
    (tx.errors.DataLossError(None, None, "lost"), tx.errors.DataLossError),
])
def test_exceptions_become_op_errors_naming_the_node(graph, exc, error):
    def raiser(x):
        raise exc

    y = tx.py_func(raiser, [tx.constant(1.0)], tx.float32, name="my_py_func")
    with tx.Session() as sess:
        with pytest.raises(error, match=r"my_py_func.*" + type(exc).__name__) as info:
            sess.run(y)
    assert type(info.value) is error


def test_wrong_results_are_invalid_argument(graph):
    two = tx.py_func(lambda: 1.0, [], [tx.float32, tx.float32], name="count")
    bad = tx.py_func(lambda: "not a number", [], tx.float32, name="dtype")
    with tx.Session() as sess:
        with pytest.raises(tx.errors.InvalidArgumentError,
                           match="count.*returned 1 values, Tout has 2"):
            sess.run(two)
        with pytest.raises(tx.errors.InvalidArgumentError,
                           match="dtype.*returns str[0-9]* values but expects float32"):
            sess.run(bad)


def test_error_inside_map_names_the_function_node(graph):
    def fn(x):
        return tx.py_func(lambda v: 1 // int(v), [x], tx.int64, name="divide")

    ds = tx.data.Dataset.range(3, -1, -1).map(fn)
    with pytest.raises(tx.errors.UnknownError, match="divide.*ZeroDivisionError"):
        drain_one_shot(ds)


def test_function_is_released_with_its_graph():
    import gc  # pylint: disable=g-import-not-at-top
    from tensorflux.ops import script_ops  # pylint: disable=g-import-not-at-top
    before = set(script_ops._funcs)  # noqa
    g = tx.Graph()
    with g.as_default():
        y = tx.py_func(lambda: np.float32(2.0), [], tx.float32)
        ds = tx.data.Dataset.range(2).map(lambda x: tx.py_func(lambda v: v + 1, [x], tx.int64))
        assert drain_one_shot(ds) == [1, 2]
        with tx.Session() as sess:
            assert sess.run(y) == 2.0
    tokens = set(script_ops._funcs) - before  # noqa
    assert len(tokens) == 2 and y.op.get_attr("token").decode() in tokens
    del g, y, ds, sess
    gc.collect()
    assert not tokens & set(script_ops._funcs)  # noqa
