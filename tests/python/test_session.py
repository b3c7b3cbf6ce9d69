"""tx.Session: fetch structures, feeds, extension between runs, errors, threads."""

import collections
import threading

import numpy as np
import pytest

import tensorflux as tx


@pytest.fixture
def ab(graph):
    a = tx.constant([1.0, 2.0], name="a")
    b = tx.constant([[3, 4]], name="b")
    return a, b


def test_single_fetches(graph, ab):
    a, b = ab
    with tx.Session() as sess:
        np.testing.assert_array_equal(sess.run(a), [1.0, 2.0])
        np.testing.assert_array_equal(sess.run("b:0"), [[3, 4]])
        assert sess.run(a.op) is None
        assert sess.run("a") is None  # an op name is a target


def test_nested_fetch_structures(graph, ab):
    a, b = ab
    Pair = collections.namedtuple("Pair", ["x", "y"])
    fetches = {"list": [a, (b, "a:0")], "pair": Pair(a, b.op),
               "od": collections.OrderedDict([("z", b), ("y", a)]),
               "dd": collections.defaultdict(int, {"k": a})}
    with tx.Session() as sess:
        got = sess.run(fetches)
    assert set(got) == {"list", "pair", "od", "dd"}
    assert isinstance(got["list"], list) and isinstance(got["list"][1], tuple)
    np.testing.assert_array_equal(got["list"][0], [1.0, 2.0])
    np.testing.assert_array_equal(got["list"][1][0], [[3, 4]])
    np.testing.assert_array_equal(got["list"][1][1], [1.0, 2.0])
    assert isinstance(got["pair"], Pair) and got["pair"].y is None
    np.testing.assert_array_equal(got["pair"].x, [1.0, 2.0])
    assert isinstance(got["od"], collections.OrderedDict) and list(got["od"]) == ["z", "y"]
    assert isinstance(got["dd"], collections.defaultdict) and got["dd"]["missing"] == 0


def test_duplicate_fetches(graph, ab):
    a, _ = ab
    with tx.Session() as sess:
        x, y = sess.run([a, a])
    np.testing.assert_array_equal(x, y)


def test_scalar_fetch_is_numpy_scalar(graph):
    with tx.Session() as sess:
        v = sess.run(tx.constant(2.5))
    assert isinstance(v, np.float32) and v == 2.5


def test_feeds_by_tensor_and_name(graph):
    x = tx.placeholder(tx.float32, [None], name="x")
    y = x * 2.0
    with tx.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1, 2]}), [2.0, 4.0])
        np.testing.assert_array_equal(sess.run(y, {"x:0": np.array([3.0])}), [6.0])
        np.testing.assert_array_equal(sess.run(y, {"x": [4.0]}), [8.0])
        # float64 numpy input is cast to the placeholder's float32
        out = sess.run(y, {x: np.array([0.5, 1.5])})
        assert out.dtype == np.float32


def test_feed_non_placeholder_tensor(graph):
    a = tx.constant(3.0, name="a")
    b = tx.square(a, name="b")
    c = tx.add(b, 1.0, name="c")
    with tx.Session() as sess:
        assert sess.run(c) == 10.0
        assert sess.run(c, {b: 5.0}) == 6.0
        assert sess.run(c, {a: 2.0}) == 5.0


def test_extend_between_runs(graph):
    a = tx.constant(2.0)
    with tx.Session() as sess:
        assert sess.run(a) == 2.0
        b = a * 5.0
        assert sess.run(b) == 10.0
        c = tx.sqrt(b + 6.0)
        assert sess.run([c, b]) == [4.0, 10.0]


def test_pruning_skips_failing_nodes(graph):
    x = tx.placeholder(tx.float32, name="never_fed")
    bad = tx.identity(x, name="would_fail")
    ok = tx.constant(1.0) + 1.0
    with tx.Session() as sess:
        assert sess.run(ok) == 2.0
    del bad


def test_eval_and_run_with_default_session(graph):
    a = tx.constant(4.0)
    noop = tx.no_op()
    sess = tx.Session()
    with sess.as_default():
        assert tx.get_default_session() is sess
        assert a.eval() == 4.0
        noop.run()
    with pytest.raises(ValueError):
        a.eval()
    assert a.eval(session=sess) == 4.0
    sess.close()


def test_interactive_session():
    g = tx.Graph()
    with g.as_default():
        a = tx.constant(1.5)
    sess = tx.InteractiveSession(graph=g)
    try:
        assert a.eval() == 1.5
    finally:
        sess.close()
    assert tx.get_default_session() is None


def test_closed_session(graph):
    a = tx.constant(1)
    sess = tx.Session()
    sess.close()
    with pytest.raises(RuntimeError):
        sess.run(a)
    sess.close()  # twice is fine


def test_run_options_and_metadata(graph):
    a = tx.constant(1.0) + 1.0
    md = tx.RunMetadata()
    opts = tx.RunOptions(trace_level=tx.RunOptions.FULL_TRACE)
    with tx.Session(config=tx.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        assert sess.run(a, options=opts, run_metadata=md) == 2.0
    assert isinstance(md, tx.RunMetadata)


def test_session_with_explicit_graph():
    g1, g2 = tx.Graph(), tx.Graph()
    with g1.as_default():
        a = tx.constant(1, name="v")
    with g2.as_default():
        b = tx.constant(2, name="v")
    with tx.Session(graph=g2) as sess:
        assert sess.run(b) == 2
        assert sess.run("v:0") == 2
        with pytest.raises(ValueError):
            sess.run(a)


# ------------------------------------------------------------------ errors

def test_unfed_placeholder_error(graph):
    x = tx.placeholder(tx.float32, [2], name="my_input")
    y = tx.identity(x, name="y")
    with tx.Session() as sess:
        with pytest.raises(tx.errors.InvalidArgumentError) as info:
            sess.run(y)
    assert "my_input" in str(info.value)
    assert info.value.error_code == tx.errors.INVALID_ARGUMENT


def test_matmul_shape_mismatch_at_run_time(graph):
    a = tx.placeholder(tx.float32, name="a")
    b = tx.placeholder(tx.float32, name="b")
    c = tx.matmul(a, b, name="the_matmul")
    with tx.Session() as sess:
        with pytest.raises(tx.errors.InvalidArgumentError) as info:
            sess.run(c, {a: np.ones((2, 3)), b: np.ones((4, 5))})
    assert "the_matmul" in str(info.value)
    assert info.value.op is c.op
    assert info.value.node_def.name == "the_matmul"


def test_wrong_feed_dtype(graph):
    x = tx.placeholder(tx.int32, [2], name="ints")
    with tx.Session() as sess:
        with pytest.raises(tx.errors.InvalidArgumentError) as info:
            sess.run(x, {x: np.array([1.5, 2.5])})
        assert "ints:0" in str(info.value)
        assert isinstance(info.value, TypeError)
        with pytest.raises(tx.errors.InvalidArgumentError):
            sess.run(x, {x: ["a", "b"]})
        with pytest.raises(tx.errors.InvalidArgumentError):
            sess.run(x, {x: [2 ** 40, 1]})
        with pytest.raises(TypeError):
            sess.run(x, {x: tx.constant([1, 2])})


def test_wrong_feed_shape(graph):
    x = tx.placeholder(tx.float32, [2], name="pair")
    with tx.Session() as sess:
        with pytest.raises(tx.errors.InvalidArgumentError) as info:
            sess.run(x, {x: [1.0, 2.0, 3.0]})
    assert "pair" in str(info.value)


def test_unknown_fetch_and_feed(graph):
    tx.constant(1, name="c")
    with tx.Session() as sess:
        with pytest.raises(tx.errors.NotFoundError) as info:
            sess.run("nope:0")
        assert "nope" in str(info.value)
        assert isinstance(info.value, ValueError)
        with pytest.raises(tx.errors.NotFoundError):
            sess.run("missing_op")
        with pytest.raises(tx.errors.NotFoundError):
            sess.run("c:0", {"nope:0": 1})
        with pytest.raises(TypeError):
            sess.run(None)
        with pytest.raises(TypeError):
            sess.run(3.5)


def test_kernel_error_integer_division_by_zero(graph):
    a = tx.placeholder(tx.int32, name="num")
    q = tx.realdiv(a, tx.constant([0, 1]), name="intdiv")
    with tx.Session() as sess:
        with pytest.raises(tx.errors.InvalidArgumentError) as info:
            sess.run(q, {a: [1, 1]})
    assert "intdiv" in str(info.value)


def test_unknown_session_target():
    with pytest.raises(tx.errors.OpError):
        tx.Session("bogus://nowhere", graph=tx.Graph())


# ------------------------------------------------------------------ threads

def test_run_from_many_threads(graph):
    x = tx.placeholder(tx.float64, [None, 64], name="x")
    w = tx.constant(np.eye(64) * 2.0)
    y = tx.matmul(x, w)
    errors = []
    results = {}
    with tx.Session() as sess:
        sess.run(y, {x: np.zeros((1, 64))})

        def worker(i):
            try:
                for j in range(20):
                    v = np.full((8, 64), float(i * 100 + j))
                    out = sess.run(y, {x: v})
                    if not np.array_equal(out, v * 2.0):
                        errors.append((i, j))
                results[i] = True
            except Exception as e:  # pylint: disable=broad-except
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    assert len(results) == 8


def test_build_and_run_from_threads(graph):
    # Each thread adds its own ops to the shared graph and runs them (the session is extended
    # under a lock).
    errors = []
    with tx.Session() as sess:
        def worker(i):
            try:
                with graph.as_default():
                    c = tx.constant(float(i)) * 3.0
                for _ in range(5):
                    if sess.run(c) != 3.0 * i:
                        errors.append(i)
            except Exception as e:  # pylint: disable=broad-except
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors


# ------------------------------------------------------------------ dtypes through a session

def test_string_half_bool_uint_feeds(graph):
    s = tx.placeholder(tx.string, [None], name="s")
    h = tx.placeholder(tx.float16, [2], name="h")
    b = tx.placeholder(tx.bool, [2], name="b")
    u = tx.placeholder(tx.uint64, [1], name="u")
    with tx.Session() as sess:
        got = sess.run([tx.identity(s), h * h, tx.identity(b), tx.identity(u)],
                       {s: ["ab", b"c\x00d"], h: [1.5, -2.0], b: [True, False],
                        u: np.array([2 ** 63 + 5], np.uint64)})
    assert list(got[0]) == [b"ab", b"c\x00d"]
    assert got[1].dtype == np.float16
    np.testing.assert_array_equal(got[1], [2.25, 4.0])
    np.testing.assert_array_equal(got[2], [True, False])
    assert got[3].dtype == np.uint64 and int(got[3][0]) == 2 ** 63 + 5


def test_bfloat16_feed_and_fetch(graph):
    x = tx.placeholder(tx.bfloat16, [3], name="bf")
    y = tx.identity(x)
    with tx.Session() as sess:
        got = sess.run(y, {x: [1.0, 1.00390625, 3.0]})
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [1.0, 1.0, 3.0])


def test_fetched_arrays_do_not_alias_graph_constants(graph):
    c = tx.constant([1.0, 2.0])
    with tx.Session() as sess:
        first = sess.run(c)
        first[0] = 100.0
        np.testing.assert_array_equal(sess.run(c), [1.0, 2.0])
        x = tx.placeholder(tx.float32, [2])
        fed = np.array([3.0, 4.0], np.float32)
        out = sess.run(x, {x: fed})
        out[0] = -1.0
        assert fed[0] == 3.0


def test_string_feed_keeps_trailing_nul_bytes():
    """bytes fed to a string tensor arrive whole, as in TF (whose feeds are object arrays):
    numpy's fixed-width bytes would drop trailing NULs, and a serialized proto may end in one."""
    g = tx.Graph()
    with g.as_default():
        p = tx.placeholder(tx.string, [])
        q = tx.placeholder(tx.string, [2])
        with tx.Session() as sess:
            assert sess.run(tx.identity(p), {p: b"ab\x00"}) == b"ab\x00"
            got = sess.run(tx.identity(q), {q: [b"x\x00\x00", b"y"]})
            assert list(got) == [b"x\x00\x00", b"y"]
