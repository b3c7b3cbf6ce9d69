"""tx.data parallel transformations: Dataset.map(num_parallel_calls) (ParallelMapDatasetV2) and
Dataset.interleave(num_parallel_calls) (ParallelInterleaveDatasetV4).

Concurrency is shown with a barrier that only opens when two calls run at once, read-ahead is
counted by a py_func in the input, and every sequence is checked against plain Python."""

import threading
import time

import numpy as np
import pytest

import tensorflux as tx
from conftest import wait_until


def drain_errors(ds, limit=1000):
    """Every element of `ds`, with an error's class in its place (the iterator goes on)."""
    it = tx.data.make_initializable_iterator(ds)
    nxt = it.get_next()
    out = []
    with tx.Session() as sess:
        sess.run(it.initializer)
        for _ in range(limit):
            try:
                v = sess.run(nxt)
                out.append(v.tolist() if isinstance(v, np.ndarray) else v)
            except tx.errors.OutOfRangeError:
                break
            except tx.errors.OpError as e:
                out.append(type(e).__name__)
    return out


def slow_identity(v):
    """v through a py_func that sleeps 5 ms."""
    def slow(x):
        time.sleep(0.005)
        return x
    return tx.py_func(slow, [v], tx.int64)


def assert_close_is_prompt(ds, first):
    """Reads `first` from ds, then closes the session with slow calls in flight: closing waits
    for them (a few ms each), not for the rest of the input (minutes of calls; the bound leaves
    room for a loaded machine)."""
    it = tx.data.make_initializable_iterator(ds)
    nxt = it.get_next()
    sess = tx.Session()
    sess.run(it.initializer)
    assert [int(sess.run(nxt)) for _ in range(len(first))] == first
    start = time.monotonic()
    sess.close()
    assert time.monotonic() - start < 30.0


def barrier_map(ds, parties, num_parallel_calls):
    """ds.map through a py_func that waits for `parties` calls to be in it at once."""
    barrier = threading.Barrier(parties, timeout=10)

    def meet(v):
        barrier.wait()
        return v * 10

    return ds.map(lambda v: tx.py_func(meet, [v], tx.int64),
                  num_parallel_calls=num_parallel_calls)


def test_parallel_map_runs_calls_at_once(graph):
    # Four calls meet at a 4-party barrier: they can only all finish if they run concurrently.
    ds = barrier_map(tx.data.Dataset.range(8), 4, num_parallel_calls=4)
    assert drain_errors(ds) == [10 * v for v in range(8)]


@pytest.mark.parametrize("deterministic", [True, False])
def test_parallel_map_errors_take_the_elements_place(graph, deterministic):
    # 1 / (v - 3) is Inf for v == 3: check_numerics fails that element only, in the parallel
    # function (f_err) or in the input (in_err); the elements after it still come.
    def f(v):
        x = tx.cast(v, tx.float32)
        return tx.cast(tx.debugging.check_numerics(1.0 / (x - 3.0), "inf") * 0.0 + x, tx.int64)

    f_err = tx.data.Dataset.range(8).map(f, num_parallel_calls=3, deterministic=deterministic)
    in_err = tx.data.Dataset.range(8).map(f).map(lambda v: v * 2, num_parallel_calls=2,
                                                 deterministic=deterministic)
    want_f = [0, 1, 2, "InvalidArgumentError", 4, 5, 6, 7]
    want_in = [0, 2, 4, "InvalidArgumentError", 8, 10, 12, 14]
    for ds, want in [(f_err, want_f), (in_err, want_in)]:
        got = drain_errors(ds)
        if deterministic:
            assert got == want
        else:
            assert sorted(map(str, got)) == sorted(map(str, want))


def test_parallel_map_reads_ahead_a_bounded_number_of_elements(graph):
    # num_parallel_calls=2: the workers keep 4 * 2 elements in flight or buffered and sleep
    # once that buffer is full, so after the first element is returned the input has given
    # exactly 1 + 8, and no more however long one waits.
    pulled = []

    def count(v):
        pulled.append(int(v))
        return v

    ds = (tx.data.Dataset.range(1000).map(lambda v: tx.py_func(count, [v], tx.int64))
          .map(lambda v: v + 1, num_parallel_calls=2))
    it = tx.data.make_initializable_iterator(ds)
    nxt = it.get_next()
    with tx.Session() as sess:
        sess.run(it.initializer)
        assert sess.run(nxt) == 1
        assert wait_until(lambda: len(pulled) >= 9), pulled  # the workers fill their buffer
        time.sleep(0.2)  # and then stop: a reader past the bound would go on meanwhile
        assert pulled == list(range(9))  # read in order
        assert [int(sess.run(nxt)) for _ in range(20)] == list(range(2, 22))


def test_parallel_map_iterator_dropped_mid_stream_does_not_hang(graph):
    # Slow calls in flight when the session (and so the iterator) goes away.
    ds = tx.data.Dataset.range(100000).map(slow_identity, num_parallel_calls=4)
    assert_close_is_prompt(ds, [0, 1, 2])
    # An iterator that was never read starts no thread and is dropped at once too.
    it2 = tx.data.make_initializable_iterator(ds)
    with tx.Session() as sess2:
        sess2.run(it2.initializer)


def test_parallel_map_deterministic_false_gives_every_element_once(graph):
    # Element 0's call returns only once the consumer has an element (at most 60 s): with
    # deterministic=False the others overtake it; an in-order map would have nothing to give
    # first but element 0, after the 60 s.
    received = threading.Event()

    def after_the_first_received(v):
        if v == 0:
            received.wait(60)
        return v

    ds = tx.data.Dataset.range(12).map(
        lambda v: tx.py_func(after_the_first_received, [v], tx.int64), num_parallel_calls=3,
        deterministic=False)
    it = tx.data.make_initializable_iterator(ds)
    nxt = it.get_next()
    got = []
    with tx.Session() as sess:
        sess.run(it.initializer)
        while True:
            try:
                got.append(int(sess.run(nxt)))
            except tx.errors.OutOfRangeError:
                break
            received.set()
    assert sorted(got) == list(range(12))
    assert got[0] != 0

    # Element 0 is slow: deterministic=True keeps the input order all the same.
    def maybe_slow(v):
        if v == 0:
            time.sleep(0.2)
        return v

    det = tx.data.Dataset.range(12).map(lambda v: tx.py_func(maybe_slow, [v], tx.int64),
                                        num_parallel_calls=3, deterministic=True)
    assert drain_errors(det) == list(range(12))


def test_parallel_map_rejects_bad_num_parallel_calls(graph):
    for bad in (0, -2):
        ds = tx.data.Dataset.range(3).map(lambda v: v, num_parallel_calls=bad)
        with pytest.raises(tx.errors.InvalidArgumentError, match="num_parallel_calls"):
            drain_errors(ds)
    np.testing.assert_array_equal(
        drain_errors(tx.data.Dataset.range(3).map(lambda v: v, num_parallel_calls=1)), [0, 1, 2])


# ------------------------------------------------------------------ parallel interleave

def py_interleave(inputs, make, cycle_length, block_length):
    """The sequential interleave order in plain Python (TF's InterleaveDataset): slot k holds an
    iterator, block_length elements are taken per turn, an exhausted slot is refilled from the
    next input when the cycle comes back to it."""
    inputs = iter(inputs)
    cycle = [None] * cycle_length
    input_done = False
    out, pos = [], 0
    while True:
        if input_done and all(c is None for c in cycle):
            return out
        if cycle[pos] is None and not input_done:
            try:
                cycle[pos] = iter(make(next(inputs)))
            except StopIteration:
                input_done = True
        taken = 0
        while cycle[pos] is not None and taken < block_length:
            try:
                out.append(next(cycle[pos]))
                taken += 1
            except StopIteration:
                cycle[pos] = None
        pos = (pos + 1) % cycle_length


def inner_values(v):
    """What element v's dataset gives below: 100 v + k for k < v % 4 (some are empty)."""
    return [100 * v + k for k in range(v % 4)]


def inner_dataset(v):
    return tx.data.Dataset.range(v % 4).map(lambda k: 100 * v + k)


@pytest.mark.parametrize("cycle,block,calls", [(1, 1, 1), (2, 1, 2), (3, 2, 2), (4, 3, 4),
                                               (3, 5, 1)])
def test_parallel_interleave_deterministic_equals_the_sequential_order(graph, cycle, block, calls):
    want = py_interleave(range(1, 12), inner_values, cycle, block)
    ds = tx.data.Dataset.range(1, 12).interleave(inner_dataset, cycle_length=cycle,
                                                 block_length=block, num_parallel_calls=calls)
    assert drain_errors(ds) == want
    seq = tx.data.Dataset.range(1, 12).interleave(inner_dataset, cycle_length=cycle,
                                                  block_length=block)
    assert drain_errors(seq) == want
    nd = tx.data.Dataset.range(1, 12).interleave(inner_dataset, cycle_length=cycle,
                                                 block_length=block, num_parallel_calls=calls,
                                                 deterministic=False)
    assert sorted(drain_errors(nd)) == sorted(want)


def test_parallel_interleave_reads_tfrecord_files(graph, tmp_path):
    files = []
    for i, n in enumerate([5, 0, 3, 7, 2]):
        path = str(tmp_path / ("part-%d.tfrecord" % i))
        with tx.io.TFRecordWriter(path) as w:
            for k in range(n):
                w.write(b"f%d-r%d" % (i, k))
        files.append(path)
    records = {f: [b"f%d-r%d" % (i, k) for k in range([5, 0, 3, 7, 2][i])]
               for i, f in enumerate(files)}
    want = py_interleave(files, lambda f: records[f], 3, 2)
    ds = tx.data.Dataset.from_tensor_slices(np.array(files)).interleave(
        lambda f: tx.data.TFRecordDataset(f), cycle_length=3, block_length=2,
        num_parallel_calls=3)
    assert ds.output_types == tx.string
    got = drain_errors(ds)
    assert got == want
    auto = tx.data.Dataset.from_tensor_slices(np.array(files)).interleave(
        lambda f: tx.data.TFRecordDataset(f), cycle_length=2,
        num_parallel_calls=tx.data.experimental.AUTOTUNE, deterministic=False)
    assert sorted(drain_errors(auto)) == sorted(want)


def test_parallel_interleave_runs_inner_datasets_at_once(graph):
    # Each inner dataset's only element waits at a 3-party barrier: the three datasets of the
    # cycle must be read concurrently.
    barrier = threading.Barrier(3, timeout=10)

    def meet(v):
        barrier.wait()
        return v

    ds = tx.data.Dataset.range(3).interleave(
        lambda v: tx.data.Dataset.from_tensors(v).map(
            lambda x: tx.py_func(meet, [x], tx.int64)),
        cycle_length=3, num_parallel_calls=3)
    assert drain_errors(ds) == [0, 1, 2]


def test_parallel_interleave_errors_as_in_the_sequential_interleave(graph):
    # Input element 3 fails before f (check_numerics on 1 / (v - 3)); inside element 6's
    # dataset the element 601 fails. The parallel interleave gives errors at the same places as
    # the sequential one, and what follows.
    def checked(v):
        x = tx.cast(v, tx.float32)
        return tx.cast(tx.debugging.check_numerics(1.0 / (x - 3.0), "inf") * 0.0 + x, tx.int64)

    def inner(v):
        return tx.data.Dataset.range(v % 4).map(lambda k: 100 * v + k).map(
            lambda y: checked(y - 598) + 598)  # 601 - 598 == 3

    def build(**kw):
        return tx.data.Dataset.range(1, 9).map(checked).interleave(
            inner, cycle_length=2, block_length=2, **kw)

    seq = drain_errors(build())
    # By hand (cycle 2, block 2; datasets 1: [100], 2: [200 201], 4: [], 5: [500],
    # 6: [600 err], 7: [700 701 702], 8: []): a failed input leaves its slot to the next input
    # element; an error inside a dataset does not count toward the block.
    err = "InvalidArgumentError"
    assert seq == [100, 200, 201, err, 500, 600, err, 700, 701, 702]
    assert drain_errors(build(num_parallel_calls=2)) == seq
    assert drain_errors(build(num_parallel_calls=1)) == seq
    nd = drain_errors(build(num_parallel_calls=2, deterministic=False))
    assert sorted(map(str, nd)) == sorted(map(str, seq))


def test_parallel_interleave_dropped_mid_stream_does_not_hang(graph):
    ds = tx.data.Dataset.range(1000).interleave(
        lambda v: tx.data.Dataset.range(1000).map(slow_identity), cycle_length=4,
        num_parallel_calls=4)
    assert_close_is_prompt(ds, [0, 0, 0])


def test_parallel_interleave_rejects_bad_arguments(graph):
    cases = [(dict(cycle_length=0, num_parallel_calls=1), "cycle_length"),
             (dict(cycle_length=2, block_length=0, num_parallel_calls=1), "block_length"),
             (dict(cycle_length=2, num_parallel_calls=3), "num_parallel_calls"),
             (dict(cycle_length=2, num_parallel_calls=0), "num_parallel_calls"),
             (dict(cycle_length=2, num_parallel_calls=-2), "num_parallel_calls")]
    for kw, what in cases:
        ds = tx.data.Dataset.range(3).interleave(lambda v: tx.data.Dataset.range(v), **kw)
        with pytest.raises(tx.errors.InvalidArgumentError, match=what):
            drain_errors(ds)
    with pytest.raises(TypeError, match="Dataset"):
        tx.data.Dataset.range(3).interleave(lambda v: v, num_parallel_calls=2)


def test_parallel_interleave_op_rejects_bad_buffer_and_prefetch(graph):
    from tensorflux.framework.op_def_library import apply_op
    good = tx.data.Dataset.range(3).interleave(lambda v: tx.data.Dataset.range(v),
                                               cycle_length=2, num_parallel_calls=2)
    op = good._variant_tensor.op  # pylint: disable=protected-access
    base = dict(input_dataset=op.inputs[0], other_arguments=[], cycle_length=op.inputs[1],
                block_length=op.inputs[2], num_parallel_calls=op.inputs[5],
                f=op.node_def.attr["f"], output_types=[tx.int64], output_shapes=[[]])
    for buffer, prefetch, det, what in [(0, -1, "true", "buffer_output_elements"),
                                        (-2, -1, "true", "buffer_output_elements"),
                                        (1, -2, "true", "prefetch_input_elements"),
                                        (1, 0, "maybe", "deterministic")]:
        variant = apply_op("ParallelInterleaveDatasetV4",
                           buffer_output_elements=tx.constant(buffer, tx.int64),
                           prefetch_input_elements=tx.constant(prefetch, tx.int64),
                           deterministic=det, **base)
        bad = tx.data.Dataset(variant, tx.int64, tx.TensorShape([]))
        with pytest.raises(tx.errors.InvalidArgumentError, match=what):
            drain_errors(bad)
    # buffer 1, no prefetch, one thread: still the sequential order.
    variant = apply_op("ParallelInterleaveDatasetV4",
                       buffer_output_elements=tx.constant(1, tx.int64),
                       prefetch_input_elements=tx.constant(0, tx.int64), **base)
    ok = tx.data.Dataset(variant, tx.int64, tx.TensorShape([]))
    assert drain_errors(ok) == py_interleave(range(3), range, 2, 1)
