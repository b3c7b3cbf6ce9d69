"""tx.train.QueueRunner (TF 1.x's tf.train.QueueRunner): threads that run a queue's enqueue ops
in a loop.

    qr = tx.train.QueueRunner(queue, [enqueue_op])
    threads = qr.create_threads(sess, coord=coord, start=True)

Each enqueue op gets one thread that runs it until the queue is closed (OutOfRangeError or
CancelledError end the thread quietly), the coordinator asks to stop, or another error occurs
(then reported to the coordinator). When the last enqueue thread ends the queue is closed
(close_op); with a coordinator one more thread waits for its stop and then runs cancel_op
(close with cancel_pending_enqueues), so an enqueue blocked on a full queue ends too.
"""

import threading

from tensorflux.framework import errors
from tensorflux.framework import ops


class QueueRunner:
    """Runs `enqueue_ops` of `queue` in threads (see the module docstring)."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        # import_scope applies to queue_runner_def only (TF ignores it without one).
        del import_scope
        if queue_runner_def is not None:
            raise NotImplementedError("QueueRunner: queue_runner_def (building from a "
                                      "QueueRunnerDef proto) is not supported")
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and at least one enqueue op")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(
            cancel_pending_enqueues=True)
        self._queue_closed_exception_types = tuple(
            queue_closed_exception_types or (errors.OutOfRangeError, errors.CancelledError))
        self._lock = threading.Lock()
        self._runs_per_session = {}
        self._exceptions_raised = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return list(self._enqueue_ops)

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def exceptions_raised(self):
        return list(self._exceptions_raised)

    @property
    def name(self):
        return self._queue.name

    def _run(self, sess, enqueue_op, coord):
        decremented = False
        try:
            while coord is None or not coord.should_stop():
                try:
                    sess.run(enqueue_op)
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        last = self._runs_per_session[sess] == 0
                    if last:
                        try:
                            sess.run(self._close_op)
                        except Exception:  # noqa: BLE001  the session may be closing
                            pass
                    return
        except Exception as e:  # noqa: BLE001  reported to the coordinator
            if coord is not None:
                coord.request_stop(e)
            else:
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, coord):
        coord.wait_for_stop()
        try:
            sess.run(self._cancel_op)
        except Exception:  # noqa: BLE001  the session may already be closed
            pass

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """The threads for `sess` (none when threads of this runner still run in it)."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord), daemon=daemon,
                                    name="QueueRunnerThread-%s-%s" % (self.name, op.name))
                   for op in self._enqueue_ops]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, coord),
                                            daemon=daemon,
                                            name="QueueRunnerThread-%s-close_on_stop"
                                            % self.name))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            if start:
                t.start()
        return threads


def add_queue_runner(qr, collection=ops.GraphKeys.QUEUE_RUNNERS):
    ops.add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=ops.GraphKeys.QUEUE_RUNNERS):
    """Starts the threads of every QueueRunner of the graph's `collection`."""
    if sess is None:
        from tensorflux.client import session as session_lib  # pylint: disable=g-import-not-at-top
        sess = session_lib.get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered.")
    graph = getattr(sess, "graph", None) or ops.get_default_graph()
    threads = []
    for qr in graph.get_collection(collection):
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
