"""tx.Session's per-step fast paths: make_callable, run()'s cache of resolved fetches and feeds,
and feeds that share an aligned numpy array's buffer instead of copying it."""

import collections
import sys

import numpy as np
import pytest

import tensorflux as tx


def aligned(shape, dtype=np.float32, offset_bytes=0):
    """An array of `shape` whose data starts `offset_bytes` past a 64-byte boundary."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    raw = np.empty(n * dtype.itemsize + 128 + offset_bytes, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset_bytes
    out = raw[start:start + n * dtype.itemsize].view(dtype).reshape(shape)
    assert out.ctypes.data % 64 == offset_bytes % 64
    return out


# ------------------------------------------------------------------ make_callable

def test_make_callable_runs_fetch_structures_with_positional_feeds(graph):
    x = tx.placeholder(tx.float32, [None], name="x")
    k = tx.placeholder(tx.int32, [], name="k")
    y = x * tx.cast(k, tx.float32)
    Pair = collections.namedtuple("Pair", ["value", "op"])
    with tx.Session() as sess:
        f = sess.make_callable(Pair(y, y.op), feed_list=[x, "k"])
        for values, scale in (([1.0, 2.0], 3), ([-1.5], 2)):
            got = f(np.asarray(values, np.float32), scale)
            assert isinstance(got, Pair) and got.op is None
            np.testing.assert_array_equal(got.value, np.asarray(values, np.float32) * scale)
        g = sess.make_callable(y.op, [x, k])
        assert g(np.ones(2, np.float32), 1) is None
        h = sess.make_callable(tx.constant(7.0))  # no feeds
        assert h() == 7.0


def test_make_callable_errors(graph):
    x = tx.placeholder(tx.float32, [2], name="x")
    y = x + 1.0
    other = tx.Graph()
    with other.as_default():
        foreign = tx.placeholder(tx.float32, [2])
    sess = tx.Session()
    f = sess.make_callable(y, [x])
    with pytest.raises(TypeError, match="takes 1 feed value"):
        f()
    with pytest.raises(TypeError, match="unexpected keyword argument 'options'"):
        f(np.zeros(2, np.float32), options=tx.RunOptions())
    with pytest.raises(TypeError):  # lossy conversion, as run()
        f(np.zeros(2, np.complex64))
    with pytest.raises(tx.errors.InvalidArgumentError):  # shape checked by the engine
        f(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="not an element of this session's graph"):
        sess.make_callable(y, [foreign])
    with pytest.raises(TypeError, match="invalid type"):
        sess.make_callable(None)
    with pytest.raises(ValueError):
        sess.make_callable("no_such_node:0")
    sess.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        f(np.zeros(2, np.float32))


def test_make_callable_accepts_options_and_metadata(graph):
    x = tx.placeholder(tx.float32, [2], name="x")
    y = x * 2.0
    with tx.Session() as sess:
        f = sess.make_callable(y, [x], accept_options=True)
        md = tx.RunMetadata()
        out = f(np.array([1.0, 4.0], np.float32),
                options=tx.RunOptions(trace_level=tx.RunOptions.FULL_TRACE), run_metadata=md)
        np.testing.assert_array_equal(out, [2.0, 8.0])
        names = {n.node_name for d in md.step_stats.dev_stats for n in d.node_stats}
        assert any("mul" in n for n in names), names


def test_make_callable_sees_nodes_added_later(graph):
    x = tx.placeholder(tx.float32, [], name="x")
    with tx.Session() as sess:
        sess.run(tx.constant(0.0))  # the session's graph is created before y exists
        y = x * 3.0
        assert sess.make_callable(y, [x])(2.0) == 6.0


# ------------------------------------------------------------------ run()'s cached plans

def test_run_cache_keeps_fetch_types_and_feed_order(graph):
    a = tx.placeholder(tx.float32, [], name="a")
    b = tx.placeholder(tx.float32, [], name="b")
    d = a - b
    Pair = collections.namedtuple("Pair", ["p", "q"])
    with tx.Session() as sess:
        # Equal tuples of different types are different plans.
        assert type(sess.run((a, d), {a: 5.0, b: 2.0})) is tuple
        got = sess.run(Pair(a, d), {a: 5.0, b: 2.0})
        assert isinstance(got, Pair) and got.q == 3.0
        # The same fetch with the feed keys in the other order.
        assert sess.run(d, {a: 5.0, b: 2.0}) == 3.0
        assert sess.run(d, {b: 2.0, a: 5.0}) == 3.0
        assert sess.run(d, {"b:0": 1.0, "a": 9.0}) == 8.0
        # Unhashable fetches and repeated runs still work.
        for i in range(3):
            assert sess.run([d, {"k": a}], {a: float(i), b: 1.0})[1]["k"] == i
        with pytest.raises(tx.errors.InvalidArgumentError):  # b is needed and not fed
            sess.run(d, {a: 1.0})


# ------------------------------------------------------------------ feeds sharing numpy buffers

def _double_graph(shape):
    x = tx.placeholder(tx.float32, shape, name="x")
    return x, x * 2.0


@pytest.mark.parametrize("offset", [0, 1, 4, 16])
def test_feed_values_aligned_or_not(graph, offset):
    x, y = _double_graph([3, 5])
    value = aligned([3, 5], offset_bytes=offset)  # 1: not even float-aligned, copied
    value[...] = np.arange(15, dtype=np.float32).reshape(3, 5) - 7.0
    with tx.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: value}), value.astype(np.float64) * 2)


def test_fetched_feed_is_a_copy_of_the_fed_array(graph):
    x, _ = _double_graph([4])
    value = aligned([4])
    value[...] = [1, 2, 3, 4]
    with tx.Session() as sess:
        out = sess.run(x, {x: value})
    np.testing.assert_array_equal(out, [1, 2, 3, 4])
    assert not np.shares_memory(out, value)
    out[0] = 100.0
    assert value[0] == 1.0


def test_read_only_and_non_contiguous_feeds(graph):
    x, y = _double_graph([2, 3])
    base = aligned([2, 6])
    base[...] = np.arange(12, dtype=np.float32).reshape(2, 6)
    read_only = base.copy()
    read_only.setflags(write=False)
    with tx.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: read_only[:, :3]}), base[:, :3] * 2)
        np.testing.assert_array_equal(sess.run(y, {x: base[:, ::2]}), base[:, ::2] * 2)


def test_fed_array_is_released_after_the_step(graph):
    x, y = _double_graph([64])
    value = aligned([64])
    value[...] = 1.0
    before = sys.getrefcount(value)
    with tx.Session() as sess:
        for _ in range(5):
            sess.run(y, {x: value})
        f = sess.make_callable(y, [x])
        for _ in range(5):
            f(value)
    assert sys.getrefcount(value) == before


def test_variable_assigned_from_a_shared_feed_owns_its_copy(graph):
    x = tx.placeholder(tx.float32, [4], name="x")
    v = tx.Variable(tx.zeros([4]), name="v")
    assign = v.assign(x)
    step = v.assign_sub(tx.ones([4]))
    value = aligned([4])
    value[...] = [10, 20, 30, 40]
    with tx.Session() as sess:
        sess.run(tx.global_variables_initializer())
        sess.run(assign.op, {x: value})
        value[...] = -1.0  # the variable must not follow the array
        np.testing.assert_array_equal(sess.run(v), [10, 20, 30, 40])
        sess.run(step.op)  # an in-place update must not write the array
        np.testing.assert_array_equal(sess.run(v), [9, 19, 29, 39])
    np.testing.assert_array_equal(value, [-1, -1, -1, -1])


@pytest.mark.parametrize("offset,shared", [(0, True), (16, True), (2, False)])
def test_feed_kept_by_a_queue_is_released_once_dequeued(graph, offset, shared):
    x = tx.placeholder(tx.float32, [8], name="x")
    q = tx.FIFOQueue(capacity=2, dtypes=[tx.float32], shapes=[[8]])
    enqueue = q.enqueue([x])
    dequeued = q.dequeue() * 1.0
    value = aligned([8], offset_bytes=offset)
    value[...] = np.arange(8)
    before = sys.getrefcount(value)
    with tx.Session() as sess:
        sess.run(enqueue, {x: value})
        # The queue holds the fed tensor: an array of aligned floats is shared (referenced), one
        # that is not is copied.
        assert sys.getrefcount(value) == before + (1 if shared else 0)
        np.testing.assert_array_equal(sess.run(dequeued), np.arange(8))
        # The next feed releases references that were freed without the GIL.
        sess.run(enqueue, {x: np.zeros(8, np.float32)})
        assert sys.getrefcount(value) == before
