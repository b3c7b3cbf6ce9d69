"""tx.random: seeds (TF 1.x get_seed rules), determinism, ranges and moments against numpy."""

import numpy as np
import pytest

import tensorflux as tx


def run(fetches, graph=None, times=1):
    with tx.Session(graph=graph or tx.get_default_graph()) as sess:
        out = [sess.run(fetches) for _ in range(times)]
    return out[0] if times == 1 else out


def node_seeds(t):
    op = t.op
    while op.type not in ("RandomStandardNormal", "TruncatedNormal", "RandomUniform",
                          "RandomUniformInt", "RandomShuffle"):
        op = op.inputs[0].op
    return op.get_attr("seed"), op.get_attr("seed2")


# ------------------------------------------------------------------ seeds

def test_get_seed_rules(graph):
    assert tx.get_seed(None) == (None, None)
    assert tx.get_seed(5) == (87654321, 5)
    tx.set_random_seed(11)
    assert tx.get_seed(None) == (11, 0)  # TF 2.x: a per-graph counter, not the op count
    tx.constant(1.0)
    assert tx.get_seed(None) == (11, 1)
    assert tx.get_seed(7) == (11, 7)
    assert tx.get_seed(None) == (11, 2)
    tx.set_random_seed(0)
    assert tx.get_seed(0) == (0, 2**31 - 1)  # (0, 0) would mean "nondeterministic"
    tx.set_random_seed(2**31 + 4)
    assert tx.get_seed(-1) == (5, (2**31 - 2))  # mod 2^31 - 1
    assert tx.random.get_seed is tx.get_seed


def test_op_attrs_follow_seeds(graph):
    a = tx.random_normal([2], seed=3)
    assert node_seeds(a) == (87654321, 3)
    b = tx.random_uniform([2])
    assert node_seeds(b) == (0, 0)
    tx.random.set_random_seed(42)
    c = tx.truncated_normal([2])
    assert node_seeds(c) == (42, 0)
    d = tx.random_shuffle([1, 2, 3], seed=9)
    assert node_seeds(d) == (42, 9)


def _build_and_run(seed_graph, fn):
    g = tx.Graph()
    with g.as_default():
        if seed_graph is not None:
            tx.set_random_seed(seed_graph)
        t = fn()
    return run(t, graph=g, times=2)


@pytest.mark.parametrize("fn", [
    lambda: tx.random.normal([50], seed=1),
    lambda: tx.random.truncated_normal([50], seed=1),
    lambda: tx.random.uniform([50], seed=1),
    lambda: tx.random.uniform([50], minval=-3, maxval=9, dtype=tx.int32, seed=1),
    lambda: tx.random.shuffle(np.arange(50), seed=1),
])
def test_same_seeds_same_values_in_fresh_graphs(fn):
    first = _build_and_run(None, fn)
    second = _build_and_run(None, fn)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    # Each run of a node continues its stream.
    assert not np.array_equal(first[0], first[1])


def test_graph_seed_alone_is_deterministic():
    first = _build_and_run(123, lambda: tx.random.normal([20]))
    second = _build_and_run(123, lambda: tx.random.normal([20]))
    np.testing.assert_array_equal(first[0], second[0])
    other = _build_and_run(124, lambda: tx.random.normal([20]))
    assert not np.array_equal(first[0], other[0])


def test_no_seed_is_nondeterministic(graph):
    a = run(tx.random.uniform([64]))
    b = run(tx.random.uniform([64]))
    assert not np.array_equal(a, b)


def test_different_op_seeds_differ(graph):
    a, b = run([tx.random.normal([64], seed=1), tx.random.normal([64], seed=2)])
    assert not np.array_equal(a, b)


# ------------------------------------------------------------------ values

N = 200000


def test_normal_moments(graph):
    x = run(tx.random.normal([N], mean=2.0, stddev=3.0, seed=4, dtype=tx.float64))
    assert x.dtype == np.float64 and x.shape == (N,)
    assert abs(x.mean() - 2.0) < 5 * 3.0 / np.sqrt(N)
    assert abs(x.var() - 9.0) < 5 * 9.0 * np.sqrt(2.0 / N)


def test_truncated_normal_bounds_and_variance(graph):
    x = run(tx.truncated_normal([N], mean=-1.0, stddev=0.5, seed=4))
    assert x.dtype == np.float32
    assert x.min() >= -2.0 and x.max() <= 0.0  # mean +- 2 stddev
    # Variance of N(0,1) cut at +-2 is 0.77374; scaled by stddev^2.
    assert abs(x.var() / 0.25 - 0.77374) < 0.01


@pytest.mark.parametrize("dtype", [tx.float16, tx.bfloat16, tx.float32, tx.float64])
def test_uniform_range_and_dtype(graph, dtype):
    x = run(tx.random.uniform([100, 100], minval=-2.0, maxval=6.0, dtype=dtype, seed=8))
    assert x.shape == (100, 100)
    x = np.asarray(x, dtype=np.float64)
    assert x.min() >= -2.0 and x.max() <= 6.0
    assert abs(x.mean() - 2.0) < 5 * 8.0 / np.sqrt(12 * 10000) + 0.02


def test_uniform_default_is_unit_interval(graph):
    t = tx.random.uniform([1000], seed=3)
    assert t.op.type == "RandomUniform"  # no scaling ops for [0, 1)
    x = run(t)
    assert x.min() >= 0.0 and x.max() < 1.0


@pytest.mark.parametrize("dtype", [tx.int32, tx.int64])
def test_uniform_int(graph, dtype):
    t = tx.random_uniform([N], minval=-4, maxval=6, dtype=dtype, seed=2)
    assert t.op.type == "RandomUniformInt"
    x = run(t)
    assert x.dtype == dtype.as_numpy_dtype
    counts = np.bincount(x + 4, minlength=10)
    assert counts.shape == (10,) and x.min() == -4 and x.max() == 5
    expected = N / 10
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 9 + 5 * np.sqrt(18)


def test_uniform_int_needs_maxval_and_valid_range(graph):
    with pytest.raises(ValueError):
        tx.random.uniform([3], dtype=tx.int32)
    bad = tx.random.uniform([3], minval=5, maxval=5, dtype=tx.int32, seed=1)
    with pytest.raises(tx.errors.InvalidArgumentError, match="minval < maxval"):
        run(bad)


def test_shape_from_tensor_and_static_shape(graph):
    p = tx.placeholder(tx.int32, [2])
    t = tx.random.normal(p, seed=1)
    assert t.shape.ndims == 2
    with tx.Session() as sess:
        assert sess.run(t, {p: [3, 4]}).shape == (3, 4)
    assert tx.random.uniform((2, 5)).shape.as_list() == [2, 5]
    assert tx.random.uniform(tx.TensorShape([4])).shape.as_list() == [4]


def test_negative_shape_is_an_error(graph):
    p = tx.placeholder(tx.int32, [2])
    t = tx.random.uniform(p, seed=1)
    with tx.Session() as sess:
        with pytest.raises(tx.errors.InvalidArgumentError):
            sess.run(t, {p: [3, -4]})


def test_bad_dtype(graph):
    with pytest.raises(ValueError):
        tx.random.normal([2], dtype=tx.int32)


def test_shuffle_is_a_permutation_of_rows(graph):
    value = np.arange(60, dtype=np.float32).reshape(20, 3)
    out = run(tx.random.shuffle(value, seed=5))
    assert out.shape == (20, 3)
    assert not np.array_equal(out, value)
    np.testing.assert_array_equal(out[np.argsort(out[:, 0])], value)
    # Rows stay whole.
    np.testing.assert_array_equal(out[:, 1] - out[:, 0], np.ones(20))
    strings = run(tx.random_shuffle(np.array([b"a", b"b", b"c", b"d"]), seed=5))
    assert sorted(strings.tolist()) == [b"a", b"b", b"c", b"d"]


def test_namespace_names():
    assert tx.random.normal is tx.random_normal
    assert tx.random.uniform is tx.random_uniform
    assert tx.random.truncated_normal is tx.truncated_normal
    assert tx.random.shuffle is tx.random_shuffle
    assert tx.random.set_random_seed is tx.set_random_seed
