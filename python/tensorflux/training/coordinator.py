"""tx.train.Coordinator (TF 1.x's tf.train.Coordinator): stops a set of threads together.

    coord = tx.train.Coordinator()
    threads = tx.train.start_queue_runners(sess, coord=coord)
    while not coord.should_stop(): sess.run(train_op)
    coord.request_stop(); coord.join(threads)

A thread that fails calls request_stop(exc) (or runs inside `with coord.stop_on_exception():`);
join() then re-raises the first such exception, except the "clean stop" ones
(OutOfRangeError: an input queue ran out), as TF does.
"""

import contextlib
import sys
import threading
import time

from tensorflux.framework import errors


class Coordinator:
    """A stop flag shared by threads, with the first exception that raised it."""

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads = set()

    def request_stop(self, ex=None):
        """Asks every thread to stop. `ex` (an exception or an exc_info triple), the first one
        given, is re-raised by join() unless it is a clean-stop type."""
        with self._lock:
            if ex is not None and self._exc_info_to_raise is None and not self._joined:
                if isinstance(ex, tuple):
                    exc_info = ex
                else:
                    exc_info = (type(ex), ex, ex.__traceback__)
                if not issubclass(exc_info[0], self._clean_stop_exception_types):
                    self._exc_info_to_raise = exc_info
            self._stop_event.set()

    def clear_stop(self):
        """Clears the stop flag and the recorded exception (to reuse the coordinator)."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self):
        return self._stop_event.is_set()

    def wait_for_stop(self, timeout=None):
        """True when stop was requested within `timeout` seconds (None: wait forever)."""
        return self._stop_event.wait(timeout)

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Requests a stop with the exception raised inside the block (swallowing it)."""
        try:
            yield
        except:  # noqa: E722  pylint: disable=bare-except
            self.request_stop(ex=sys.exc_info())

    def register_thread(self, thread):
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits until stop is requested, then for the threads (and the registered ones) to
        end, up to stop_grace_period_secs after the request; re-raises the recorded exception.
        RuntimeError naming the threads still alive after the grace period (unless
        ignore_live_threads)."""
        threads = set(threads or []) | set(self._registered_threads)
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(0.1):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        alive = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            exc_info = self._exc_info_to_raise
        if exc_info is not None:
            raise exc_info[1].with_traceback(exc_info[2])
        if alive and not ignore_live_threads:
            raise RuntimeError("Coordinator stopped with threads still running: %s"
                               % " ".join(alive))

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        with self._lock:
            exc_info = self._exc_info_to_raise
        if exc_info is not None:
            raise exc_info[1].with_traceback(exc_info[2])
