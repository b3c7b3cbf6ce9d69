"""tx.data parallel transformations: Dataset.map(num_parallel_calls) (ParallelMapDatasetV2).

Concurrency is shown with a barrier that only opens when two calls run at once, read-ahead is
counted by a py_func in the input, and every sequence is checked against plain Python."""

import threading
import time

import numpy as np
import pytest

import tensorflux as tx


def drain_errors(ds, limit=1000):
    """Every element of `ds`, with an error's class in its place (the iterator goes on)."""
    it = tx.data.make_initializable_iterator(ds)
    nxt = it.get_next()
    out = []
    with tx.Session() as sess:
        sess.run(it.initializer)
        for _ in range(limit):
            try:
                out.append(sess.run(nxt).tolist())
            except tx.errors.OutOfRangeError:
                break
            except tx.errors.OpError as e:
                out.append(type(e).__name__)
    return out


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
    # num_parallel_calls=2: at most 4 * 2 elements are in flight or buffered, so after the
    # first element is returned the input has given at most 1 + 8.
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
        time.sleep(0.3)  # time for the workers to fill their buffer
        n = len(pulled)
        assert 2 <= n <= 9, n
        assert pulled == list(range(n))  # the input is read in order
        assert [int(sess.run(nxt)) for _ in range(20)] == list(range(2, 22))


def test_parallel_map_iterator_dropped_mid_stream_does_not_hang(graph):
    # Slow calls in flight when the session (and so the iterator) goes away: closing waits for
    # them (a few ms each), not for the rest of the input.
    def slow(v):
        time.sleep(0.005)
        return v

    ds = tx.data.Dataset.range(100000).map(lambda v: tx.py_func(slow, [v], tx.int64),
                                           num_parallel_calls=4)
    it = tx.data.make_initializable_iterator(ds)
    nxt = it.get_next()
    sess = tx.Session()
    sess.run(it.initializer)
    assert [int(sess.run(nxt)) for _ in range(3)] == [0, 1, 2]
    start = time.monotonic()
    sess.close()
    assert time.monotonic() - start < 5.0
    # An iterator that was never read starts no thread and is dropped at once too.
    it2 = tx.data.make_initializable_iterator(ds)
    with tx.Session() as sess2:
        sess2.run(it2.initializer)


def test_parallel_map_deterministic_false_gives_every_element_once(graph):
    # Element 0 is slow: with deterministic=False the others overtake it.
    def maybe_slow(v):
        if v == 0:
            time.sleep(0.2)
        return v

    ds = tx.data.Dataset.range(12).map(lambda v: tx.py_func(maybe_slow, [v], tx.int64),
                                       num_parallel_calls=3, deterministic=False)
    got = [int(v) for v in drain_errors(ds)]
    assert sorted(got) == list(range(12))
    assert got[0] != 0
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
