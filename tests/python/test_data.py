"""tx.data: datasets and iterators in a graph, against numpy and hand-worked sequences."""

import numpy as np
import pytest

import tensorflux as tx


def drain(ds, sess=None, limit=10000):
    """Every element of `ds` through an initializable iterator."""
    it = tx.data.make_initializable_iterator(ds)
    nxt = it.get_next()
    own = sess is None
    sess = sess or tx.Session()
    try:
        sess.run(it.initializer)
        out = []
        for _ in range(limit):
            try:
                out.append(sess.run(nxt))
            except tx.errors.OutOfRangeError:
                break
        return out
    finally:
        if own:
            sess.close()


# ------------------------------------------------------------------ sources

def test_range_and_structure(graph):
    ds = tx.data.Dataset.range(2, 11, 3)
    assert ds.output_types == tx.int64
    assert ds.output_shapes.as_list() == []
    assert drain(ds) == [2, 5, 8]
    assert drain(tx.data.Dataset.range(4)) == [0, 1, 2, 3]
    assert drain(tx.data.Dataset.range(5, 0, -2)) == [5, 3, 1]
    f = tx.data.Dataset.range(3, output_type=tx.float32)
    assert f.output_types == tx.float32
    vals = drain(f)
    assert [v.dtype for v in vals] == [np.float32] * 3


def test_from_tensor_slices_nested_tuples_and_dicts(graph):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = np.array([7, 8, 9, 10], dtype=np.int32)
    ds = tx.data.Dataset.from_tensor_slices((x, {"label": y, "w": y * 2.0}))
    assert ds.output_types == (tx.float32, {"label": tx.int32, "w": tx.float64})
    assert ds.output_shapes[0].as_list() == [3]
    out = drain(ds)
    assert len(out) == 4
    for i, (a, d) in enumerate(out):
        np.testing.assert_array_equal(a, x[i])
        assert d["label"] == y[i] and d["w"] == 2.0 * y[i]
    with pytest.raises(ValueError):
        tx.data.Dataset.from_tensor_slices((np.zeros([3]), np.zeros([4])))


def test_from_tensors_is_one_element(graph):
    ds = tx.data.Dataset.from_tensors(([1, 2, 3], "abc"))
    assert ds.output_shapes[0].as_list() == [3]
    out = drain(ds)
    assert len(out) == 1
    np.testing.assert_array_equal(out[0][0], [1, 2, 3])
    assert out[0][1] == b"abc"


def test_zip_nests_elements_and_ends_with_the_shortest(graph):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    a = tx.data.Dataset.range(10, 16)
    b = tx.data.Dataset.from_tensor_slices((x, np.array([7, 8, 9, 10], np.int32)))
    c = tx.data.Dataset.range(3, output_type=tx.float64)
    ds = tx.data.Dataset.zip((a, (b, c)))
    assert ds.output_types == (tx.int64, ((tx.float32, tx.int32), tx.float64))
    assert ds.output_shapes[1][0][0].as_list() == [3]
    out = drain(ds)
    assert len(out) == 3  # c has 3 elements, b 4, a 6
    for i, (ai, ((xi, yi), ci)) in enumerate(out):
        assert ai == 10 + i and ci == float(i) and yi == 7 + i
        np.testing.assert_array_equal(xi, x[i])
    # A dict of datasets gives dict elements; the first input may be the shorter one.
    d = drain(tx.data.Dataset.zip({"n": tx.data.Dataset.range(2),
                                   "m": tx.data.Dataset.range(5, 9)}))
    assert d == [{"n": 0, "m": 5}, {"n": 1, "m": 6}]
    # Zip then batch: components batched together, as a tuple of batches.
    batches = drain(tx.data.Dataset.zip((a, a.skip(1))).batch(4))
    np.testing.assert_array_equal(batches[0][0], [10, 11, 12, 13])
    np.testing.assert_array_equal(batches[0][1], [11, 12, 13, 14])
    np.testing.assert_array_equal(batches[1][1], [15])


def test_zip_refuses_non_datasets(graph):
    r = tx.data.Dataset.range(3)
    for bad in [r, (), (r, 3), {"a": [r]}]:
        with pytest.raises(TypeError, match="Dataset.zip"):
            tx.data.Dataset.zip(bad)


# ------------------------------------------------------------------ transformations

def test_batch_matches_numpy_split(graph):
    x = np.arange(20, dtype=np.int64).reshape(10, 2)
    ds = tx.data.Dataset.from_tensor_slices(x).batch(4)
    assert ds.output_shapes.as_list() == [None, 2]
    out = drain(ds)
    want = [x[0:4], x[4:8], x[8:10]]
    assert len(out) == 3
    for a, b in zip(out, want):
        np.testing.assert_array_equal(a, b)
    dropped = tx.data.Dataset.from_tensor_slices(x).batch(4, drop_remainder=True)
    assert dropped.output_shapes.as_list() == [4, 2]
    assert len(drain(dropped)) == 2


def test_bad_batch_size_is_invalid_argument(graph):
    ds = tx.data.Dataset.range(5).batch(0)
    it = tx.data.make_initializable_iterator(ds)
    with tx.Session() as sess:
        with pytest.raises(tx.errors.InvalidArgumentError, match="Batch size"):
            sess.run(it.initializer)


def test_batch_of_batches(graph):
    ds = tx.data.Dataset.range(5).batch(2).batch(2)
    assert ds.output_shapes.as_list() == [None, None]
    out = drain(ds)
    np.testing.assert_array_equal(out[0], [[0, 1], [2, 3]])
    # The last inner batch [4] cannot be stacked with anything; it is alone in its batch.
    np.testing.assert_array_equal(out[1], [[4]])


def test_padded_batch_pads_with_value(graph):
    x = np.array([[1, 0, 0], [2, 3, 0], [4, 5, 6]], dtype=np.int32)
    ds = tx.data.Dataset.from_tensor_slices(x).padded_batch(2, padded_shapes=[5],
                                                             padding_values=-1)
    assert ds.output_shapes.as_list() == [None, 5]
    out = drain(ds)
    np.testing.assert_array_equal(out[0], [[1, 0, 0, -1, -1], [2, 3, 0, -1, -1]])
    np.testing.assert_array_equal(out[1], [[4, 5, 6, -1, -1]])
    too_small = tx.data.Dataset.from_tensor_slices(x).padded_batch(2, padded_shapes=[2])
    with pytest.raises(tx.errors.DataLossError, match="smaller size"):
        drain(too_small)


def test_take_skip_repeat_shard_against_python_lists(graph):
    r = tx.data.Dataset.range(10)
    assert drain(r.take(3)) == [0, 1, 2]
    assert drain(r.take(-1)) == list(range(10))  # negative take is "all"
    assert drain(r.skip(7)) == [7, 8, 9]
    assert drain(r.skip(-1)) == []
    assert drain(r.take(2).repeat(3)) == [0, 1] * 3
    assert drain(r.take(2).repeat().take(5)) == [0, 1, 0, 1, 0]
    assert drain(r.shard(3, 2)) == list(range(10))[2::3]


def test_shard_index_out_of_range(graph):
    with tx.Session() as sess:
        for n, i in [(3, 3), (3, -1), (0, 0)]:
            it = tx.data.make_initializable_iterator(tx.data.Dataset.range(10).shard(n, i))
            with pytest.raises(tx.errors.InvalidArgumentError):
                sess.run(it.initializer)


def test_shuffle_is_a_seeded_permutation(graph):
    def order(seed, reshuffle=True, epochs=1, g=None):
        with tx.Graph().as_default():
            ds = tx.data.Dataset.range(40).shuffle(8, seed=seed,
                                                   reshuffle_each_iteration=reshuffle)
            return drain(ds.repeat(epochs))

    a, b = order(3, epochs=2), order(3, epochs=2)
    assert a == b  # same seed, new graph and session: same order
    assert sorted(a[:40]) == list(range(40)) and sorted(a[40:]) == list(range(40))
    assert a[:40] != list(range(40))
    assert a[:40] != a[40:]  # reshuffled each epoch
    fixed = order(3, reshuffle=False, epochs=2)
    assert fixed[:40] == fixed[40:]
    assert order(4) != a[:40]
    # A buffer of 8 can bring an element at most 7 places forward.
    assert all(v <= i + 7 for i, v in enumerate(a[:40]))


def test_shuffle_reinitialized_iterator_reshuffles_but_repeats_across_sessions(graph):
    tx.set_random_seed(5)
    ds = tx.data.Dataset.range(20).shuffle(20)
    it = tx.data.make_initializable_iterator(ds)
    nxt = it.get_next()

    def epochs(sess):
        out = []
        for _ in range(2):
            sess.run(it.initializer)
            out.append([sess.run(nxt) for _ in range(20)])
        return out

    with tx.Session() as s1:
        e1 = epochs(s1)
    with tx.Session() as s2:
        e2 = epochs(s2)
    assert e1 == e2
    assert e1[0] != e1[1]


def test_prefetch_and_cache(graph):
    x = np.arange(30, dtype=np.float32)
    ds = tx.data.Dataset.from_tensor_slices(x).prefetch(4)
    np.testing.assert_array_equal(np.array(drain(ds)), x)
    auto = tx.data.Dataset.range(5).prefetch(tx.data.experimental.AUTOTUNE)
    assert drain(auto) == [0, 1, 2, 3, 4]
    # cache() replays the first pass: a reshuffling shuffle under it gives the same order twice.
    cached = tx.data.Dataset.range(30).shuffle(30, seed=1).cache().repeat(2)
    out = drain(cached)
    assert out[:30] == out[30:]
    assert sorted(out[:30]) == list(range(30))


# ------------------------------------------------------------------ iterators

def test_one_shot_iterator_needs_no_initializer(graph):
    ds = tx.data.Dataset.from_tensor_slices(np.array([3, 1, 4], dtype=np.int32))
    it = tx.data.make_one_shot_iterator(ds)
    nxt = it.get_next()
    assert nxt.shape.as_list() == []
    with tx.Session() as sess:
        assert [sess.run(nxt) for _ in range(3)] == [3, 1, 4]
        with pytest.raises(tx.errors.OutOfRangeError, match="End of sequence"):
            sess.run(nxt)
    with tx.Session() as sess:  # a new session starts over
        assert sess.run(nxt) == 3
    with pytest.raises(ValueError):
        _ = it.initializer
    p = tx.placeholder(tx.int64, [None])
    with pytest.raises(ValueError, match="placeholder"):
        tx.data.make_one_shot_iterator(tx.data.Dataset.from_tensor_slices(p))


def test_initializable_iterator_with_placeholder_reruns_per_epoch(graph):
    p = tx.placeholder(tx.int64, [None])
    ds = tx.data.Dataset.from_tensor_slices(p).batch(2)
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    with tx.Session() as sess:
        with pytest.raises(tx.errors.FailedPreconditionError):
            sess.run(nxt)
        for feed in ([1, 2, 3], [9, 8]):
            sess.run(it.initializer, feed_dict={p: feed})
            got = []
            while True:
                try:
                    got.append(sess.run(nxt).tolist())
                except tx.errors.OutOfRangeError:
                    break
            want = [feed[i:i + 2] for i in range(0, len(feed), 2)]
            assert got == want


def test_reinitializable_iterator_from_structure(graph):
    a = tx.data.Dataset.range(3)
    b = tx.data.Dataset.range(10, 12)
    it = tx.data.Iterator.from_structure(a.output_types, a.output_shapes)
    nxt = it.get_next()
    init_a, init_b = it.make_initializer(a), it.make_initializer(b)
    with tx.Session() as sess:
        sess.run(init_a)
        assert sess.run(nxt) == 0
        sess.run(init_b)
        assert [sess.run(nxt) for _ in range(2)] == [10, 11]
    with pytest.raises(TypeError):
        it.make_initializer(tx.data.Dataset.range(3, output_type=tx.int32))


def test_training_loop_pulls_batches_without_feed(graph):
    # Mean of a data set computed through the pipeline equals numpy's.
    rng = np.random.RandomState(0)
    x = rng.randn(100, 3).astype(np.float32)
    ds = tx.data.Dataset.from_tensor_slices(x).shuffle(50, seed=2).batch(16).prefetch(2)
    it = tx.data.make_one_shot_iterator(ds)
    batch = it.get_next()
    total = tx.reduce_sum(batch, axis=0)
    with tx.Session() as sess:
        acc = np.zeros(3, np.float64)
        while True:
            try:
                acc += sess.run(total)
            except tx.errors.OutOfRangeError:
                break
    np.testing.assert_allclose(acc, x.astype(np.float64).sum(axis=0), rtol=1e-5)


# ------------------------------------------------------------------ map / filter

def test_map_matches_numpy_and_is_a_library_function(graph):
    x = np.linspace(-2, 2, 12).astype(np.float32).reshape(6, 2)
    y = np.arange(6, dtype=np.int32)
    ds = tx.data.Dataset.from_tensor_slices((x, y)).map(
        lambda a, b: {"sq": a * a + 1.0, "lbl": tx.cast(b, tx.int64) * 10})
    assert ds.output_types == {"sq": tx.float32, "lbl": tx.int64}
    assert ds.output_shapes["sq"].as_list() == [2]
    gd = graph.as_graph_def()
    assert any(f.signature.name.startswith("Dataset_map_lambda") for f in gd.library.function)
    out = drain(ds)
    for i, e in enumerate(out):
        np.testing.assert_allclose(e["sq"], x[i] * x[i] + 1.0, rtol=1e-6)
        assert e["lbl"] == 10 * y[i]


def test_map_then_batch_and_filter(graph):
    ds = (tx.data.Dataset.range(20)
          .filter(lambda v: tx.equal(tx.floormod(v, 3), 0))
          .map(lambda v: tx.cast(v, tx.float64) / 2.0)
          .batch(3))
    out = [b.tolist() for b in drain(ds)]
    want = [v / 2.0 for v in range(20) if v % 3 == 0]
    assert out == [want[0:3], want[3:6], want[6:7]]


def test_parallel_map_keeps_order_when_deterministic(graph):
    x = np.arange(64, dtype=np.float32)
    ds = tx.data.Dataset.from_tensor_slices(x).map(lambda v: tx.sqrt(v) * 3.0,
                                                   num_parallel_calls=4, deterministic=True)
    np.testing.assert_allclose(np.array(drain(ds)), np.sqrt(x) * 3.0, rtol=1e-6)
    nd = tx.data.Dataset.from_tensor_slices(x).map(lambda v: v + 1.0, num_parallel_calls=3,
                                                   deterministic=False)
    got = np.array(drain(nd))
    np.testing.assert_array_equal(np.sort(got), x + 1.0)  # every element once, any order
    auto = tx.data.Dataset.range(10).map(lambda v: v * 2,
                                         num_parallel_calls=tx.data.experimental.AUTOTUNE)
    assert drain(auto) == [2 * v for v in range(10)]


def test_map_error_names_the_function_node(graph):
    # Reshaping 3 elements to [2] fails inside the function at node "bad_reshape".
    ds = tx.data.Dataset.from_tensors(np.zeros([3], np.float32)).map(
        lambda v: tx.reshape(tx.identity(v), tx.placeholder_with_default(
            np.array([2], np.int32), [1]), name="bad_reshape"))
    with pytest.raises(tx.errors.InvalidArgumentError, match="bad_reshape"):
        drain(ds)
    # Elements of different shapes cannot be batched.
    ragged = tx.data.Dataset.range(1, 4).map(lambda n: tx.range(n)).batch(3)
    with pytest.raises(tx.errors.InvalidArgumentError, match="different shapes"):
        drain(ragged)
    padded = tx.data.Dataset.range(1, 4).map(lambda n: tx.range(n)).padded_batch(3, [None])
    np.testing.assert_array_equal(drain(padded)[0], [[0, 0, 0], [0, 1, 0], [0, 1, 2]])


def test_filter_predicate_must_be_bool(graph):
    with pytest.raises(ValueError, match="boolean"):
        tx.data.Dataset.range(3).filter(lambda v: v)


def test_map_and_filter_capture_outer_tensors_at_initialization(graph):
    c = tx.constant(3, tx.int64)
    assert drain(tx.data.Dataset.range(4).map(lambda v: v + c)) == [3, 4, 5, 6]
    # A placeholder captured by map and filter is read when the initializer runs.
    scale = tx.placeholder(tx.float32, [])
    limit = tx.placeholder(tx.float32, [])
    ds = (tx.data.Dataset.from_tensor_slices(np.arange(6, dtype=np.float32))
          .map(lambda v: v * scale).filter(lambda v: tx.less(v, limit)))
    it = tx.data.make_initializable_iterator(ds)
    nxt = it.get_next()
    fdefs = graph.as_graph_def().library.function
    assert [len(f.signature.input_arg) for f in fdefs][-2:] == [2, 2]  # element + capture
    with tx.Session() as sess:
        for k, lim in [(2.0, 7.0), (10.0, 25.0)]:
            sess.run(it.initializer, feed_dict={scale: k, limit: lim})
            got = []
            while True:
                try:
                    got.append(float(sess.run(nxt)))
                except tx.errors.OutOfRangeError:
                    break
            assert got == [k * v for v in range(6) if k * v < lim]


def test_parallel_map_error_names_the_node_and_get_next_is_thread_safe(graph):
    bad = tx.data.Dataset.from_tensors(np.zeros([3], np.float32)).repeat(4).map(
        lambda v: tx.reshape(v, tx.placeholder_with_default(np.array([2], np.int32), [1]),
                             name="bad_reshape_p"), num_parallel_calls=2)
    with pytest.raises(tx.errors.InvalidArgumentError, match="bad_reshape_p"):
        drain(bad)
    # Two threads pulling from one iterator get every element exactly once.
    import threading
    ds = tx.data.Dataset.range(400).map(lambda v: v * 2, num_parallel_calls=2).prefetch(3)
    it = tx.data.make_one_shot_iterator(ds)
    nxt = it.get_next()
    got = [[], []]
    with tx.Session() as sess:
        sess.run(tx.no_op())  # runs the one-shot initializer once, before the threads start

        def pull(k):
            while True:
                try:
                    got[k].append(int(sess.run(nxt)))
                except tx.errors.OutOfRangeError:
                    return
        threads = [threading.Thread(target=pull, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(got[0] + got[1]) == [2 * v for v in range(400)]


def test_interleave_and_flat_map_against_python(graph):
    # Element v -> dataset [10v, 10v + 1, 10v + 2]; cycle 2, block 2.
    ds = tx.data.Dataset.range(1, 4).interleave(
        lambda v: tx.data.Dataset.range(3).map(lambda k: 10 * v + k), cycle_length=2,
        block_length=2)
    assert ds.output_types == tx.int64
    got = drain(ds)
    # Hand-worked (TF's order): slot 0 = [10 11 12], slot 1 = [20 21 22], two at a time; an
    # exhausted slot moves the cycle on and refills from the input when its turn comes back.
    assert got == [10, 11, 20, 21, 12, 22, 30, 31, 32]
    flat = tx.data.Dataset.range(3).flat_map(lambda v: tx.data.Dataset.range(v))
    assert drain(flat) == [0, 0, 1]
    with pytest.raises(TypeError, match="Dataset"):
        tx.data.Dataset.range(3).interleave(lambda v: v)
    bad = tx.data.Dataset.range(3).interleave(lambda v: tx.data.Dataset.range(v),
                                              block_length=0)
    with pytest.raises(tx.errors.InvalidArgumentError, match="block_length"):
        drain(bad)
