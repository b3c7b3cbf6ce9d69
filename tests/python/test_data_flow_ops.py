"""tx.FIFOQueue and tx.ConditionalAccumulator: values through a session, blocking ops that another
thread releases, a blocked op cancelled by the step's timeout or the session's close, bad input."""

import threading
import time

import numpy as np
import pytest

import tensorflux as tx
from conftest import wait_until


def _timeout(ms):
    return tx.RunOptions(timeout_in_ms=ms)


def test_fifo_queue_values_and_order():
    with tx.Graph().as_default():
        q = tx.FIFOQueue(10, [tx.float32, tx.int32], shapes=[[2], []])
        x = tx.placeholder(tx.float32, [None, 2])
        i = tx.placeholder(tx.int32, [None])
        enq_many = q.enqueue_many([x, i])
        enq = q.enqueue([tx.constant([9.0, 9.5]), tx.constant(99)])
        deq = q.dequeue()
        deq2 = q.dequeue_many(2)
        assert deq2[0].shape.as_list() == [2, 2]
        with tx.Session() as sess:
            sess.run(enq_many, {x: [[1, 2], [3, 4], [5, 6]], i: [10, 11, 12]})
            sess.run(enq)
            assert sess.run(q.size()) == 4
            a, b = sess.run(deq)
            np.testing.assert_array_equal(a, [1, 2])
            assert b == 10
            a, b = sess.run(deq2)
            np.testing.assert_array_equal(a, [[3, 4], [5, 6]])
            np.testing.assert_array_equal(b, [11, 12])
            a, b = sess.run(deq)
            np.testing.assert_array_equal(a, [9.0, 9.5])
            assert b == 99


def test_fifo_queue_dequeue_waits_for_another_thread():
    with tx.Graph().as_default():
        q = tx.FIFOQueue(-1, tx.float32, shapes=[])
        enq = q.enqueue(7.5)
        deq = q.dequeue()
        with tx.Session() as sess:
            got = []
            t = threading.Thread(target=lambda: got.append(sess.run(deq)))
            t.start()
            time.sleep(0.05)
            assert t.is_alive()
            sess.run(enq)
            t.join(10)
            assert got == [7.5]


def test_fifo_queue_close_and_cancellation():
    with tx.Graph().as_default():
        q = tx.FIFOQueue(1, tx.int32, shapes=[[]])
        enq = q.enqueue(tx.placeholder_with_default(3, []))
        deq = q.dequeue()
        with tx.Session() as sess:
            with pytest.raises(tx.errors.DeadlineExceededError):
                sess.run(deq, options=_timeout(50))  # empty: the step's timeout ends the wait
            sess.run(enq)
            with pytest.raises(tx.errors.DeadlineExceededError):
                sess.run(enq, options=_timeout(50))  # full
            sess.run(q.close())
            with pytest.raises(tx.errors.CancelledError, match="is closed"):
                sess.run(enq)
            assert sess.run(deq) == 3  # a closed queue drains
            with pytest.raises(tx.errors.OutOfRangeError, match="insufficient elements"):
                sess.run(deq)


def test_blocked_dequeue_ends_when_the_session_closes():
    with tx.Graph().as_default():
        q = tx.FIFOQueue(-1, tx.float32, shapes=[[]])
        enq = q.enqueue(1.0)
        deq = q.dequeue_many(2)
        size = q.size()
        sess = tx.Session()
        sess.run(enq)
        errors = []

        def run():
            try:
                sess.run(deq)
            except tx.errors.OpError as e:
                errors.append(type(e))
        t = threading.Thread(target=run)
        t.start()
        # The waiting DequeueMany holds the one element it took: the size is 0 once it waits
        # (a close before the step started would fail run() itself, not the dequeue).
        assert wait_until(lambda: sess.run(size) == 0), "the dequeue never started"
        sess.close()
        t.join(10)
        assert not t.is_alive()
        assert errors == [tx.errors.CancelledError]


def test_fifo_queue_bad_input():
    with tx.Graph().as_default():
        q = tx.FIFOQueue(5, [tx.float32], shapes=[[2]])
        with pytest.raises(ValueError, match="incompatible"):
            q.enqueue([[1.0, 2.0, 3.0]])
        with pytest.raises(ValueError, match="Expected 1 components, got 2"):
            q.enqueue([[1.0, 2.0], [1.0, 2.0]])
        with pytest.raises(ValueError, match="fully defined"):
            tx.FIFOQueue(5, [tx.float32], shapes=[[None]])
        x = tx.placeholder(tx.float32)
        enq = q.enqueue([x])
        with tx.Session() as sess:
            with pytest.raises(tx.errors.InvalidArgumentError, match="Shape mismatch"):
                sess.run(enq, {x: [1.0, 2.0, 3.0]})


def test_conditional_accumulator_mean_stale_and_global_step():
    with tx.Graph().as_default():
        acc = tx.ConditionalAccumulator(tx.float32, shape=[3], shared_name="acc")
        g = tx.placeholder(tx.float32, [3])
        step = tx.placeholder(tx.int64, [])
        apply = acc.apply_grad(g, local_step=step)
        take = acc.take_grad(2)
        with tx.Session() as sess:
            rng = np.random.RandomState(0)
            grads = rng.randn(2, 3).astype(np.float32)
            for gr in grads:
                sess.run(apply, {g: gr, step: 0})
            assert sess.run(acc.num_accumulated()) == 2
            np.testing.assert_allclose(sess.run(take), grads.astype(np.float64).mean(0),
                                       rtol=1e-6)
            sess.run(apply, {g: grads[0], step: 0})  # stale now: the take made the step 1
            assert sess.run(acc.num_accumulated()) == 0
            sess.run(acc.set_global_step(5))
            sess.run(apply, {g: grads[0], step: 4})
            assert sess.run(acc.num_accumulated()) == 0
            sess.run(apply, {g: grads[0], step: 5})
            assert sess.run(acc.num_accumulated()) == 1
            with pytest.raises(tx.errors.DeadlineExceededError):
                sess.run(take, options=_timeout(50))  # one of two: waits, then cancelled
        with pytest.raises(ValueError, match="incompatible"):
            acc.apply_grad(tx.zeros([4]))
