"""FileWriter (TF 1.x's tf.summary.FileWriter): Events appended to an event file in `logdir`.

Writes are synchronous into the file's buffer; the buffer reaches the OS when `max_queue` events
were added since the last flush, when `flush_secs` have passed at an add, and on flush()/close().
(TF's writer flushes from a background thread; this one holds at most `max_queue` unflushed
events and needs no thread.)
"""

import os
import threading
import time

from tensorflux import _pywrap_tensorflux as _pw
from tensorflux.event_pb2 import Event, SessionLog, TaggedRunMetadata
from tensorflux.summary_pb2 import Summary


class FileWriter:
    """FileWriter(logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
    filename_suffix=None, session=None).

    Creates `logdir` (and parents) and a new event file in it
    ("events.out.tfevents.<seconds>.<host>.<pid>.<n><suffix>", n counting the event files of
    this process: two writers never share a file); with `graph` (a tx.Graph) or `graph_def`
    its GraphDef is written first, for TensorBoard's Graphs tab. Raises the OS error (as a
    tx.errors error naming the file) when the directory cannot be created or written.
    `session` (TF: write through summary ops of that session) is not supported: a value other
    than None raises NotImplementedError."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if session is not None:
            raise NotImplementedError("tx.summary.FileWriter: session is not supported (events "
                                      "are written by the writer itself)")
        self._logdir = str(logdir)
        os.makedirs(self._logdir, exist_ok=True)
        self._writer = _pw.EventsWriter(os.path.join(self._logdir, "events"),
                                        filename_suffix or "")
        self._max_queue = max(1, int(max_queue))
        self._flush_secs = float(flush_secs)
        self._pending = 0
        self._last_flush = time.time()
        self._closed = False
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def get_logdir(self):
        return self._logdir

    @property
    def filename(self):
        """Path of the event file."""
        return self._writer.filename

    def add_event(self, event):
        """Appends an Event proto (wall_time set to now if unset)."""
        if self._closed:
            raise RuntimeError("FileWriter for %s is closed" % self._logdir)
        if not event.wall_time:
            event.wall_time = time.time()
        self._writer.write_event(event.SerializeToString())
        self._pending += 1
        if self._pending >= self._max_queue or time.time() - self._last_flush >= self._flush_secs:
            self.flush()

    def add_summary(self, summary, global_step=None):
        """Appends a Summary: a Summary proto or its serialization (what a summary op's tensor
        evaluates to: bytes)."""
        if isinstance(summary, (bytes, bytearray)):
            parsed = Summary()
            parsed.ParseFromString(bytes(summary))
            summary = parsed
        elif not isinstance(summary, Summary):
            raise TypeError("add_summary needs a Summary proto or its serialized bytes, got %s"
                            % type(summary).__name__)
        event = Event(summary=summary)
        if global_step is not None:
            event.step = int(global_step)
        self.add_event(event)

    def add_scalars(self, values, global_step=None):
        """Appends one Summary with a simple_value per (tag, number) of the dict `values` (a
        TensorFlux convenience for values computed outside the graph)."""
        s = Summary(value=[Summary.Value(tag=t, simple_value=float(v))
                           for t, v in values.items()])
        self.add_summary(s, global_step)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Appends the GraphDef of `graph` (a tx.Graph) or `graph_def` (a GraphDef proto)."""
        if graph_def is None:
            graph_def = graph.as_graph_def()
        event = Event(graph_def=graph_def.SerializeToString())
        if global_step is not None:
            event.step = int(global_step)
        self.add_event(event)

    def add_meta_graph(self, meta_graph_def, global_step=None):
        """Appends a MetaGraphDef (a tx.MetaGraphDef proto)."""
        event = Event(meta_graph_def=meta_graph_def.SerializeToString())
        if global_step is not None:
            event.step = int(global_step)
        self.add_event(event)

    def add_session_log(self, session_log, global_step=None):
        event = Event(session_log=session_log)
        if global_step is not None:
            event.step = int(global_step)
        self.add_event(event)

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Appends a RunMetadata (step stats, for TensorBoard's per-step compute time) under `tag`."""
        event = Event(tagged_run_metadata=TaggedRunMetadata(
            tag=tag, run_metadata=run_metadata.SerializeToString()))
        if global_step is not None:
            event.step = int(global_step)
        self.add_event(event)

    def flush(self):
        if self._closed:
            return
        self._writer.flush()
        self._pending = 0
        self._last_flush = time.time()

    def close(self):
        if not self._closed:
            self._writer.close()
            self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class FileWriterCache:
    """One FileWriter per log directory for the process (TF's tf.summary.FileWriterCache): the
    hooks of tx.train share them. get() makes it on first use with the default graph (written
    as the file's first event, as TF does)."""

    _cache = {}
    _lock = threading.Lock()

    @staticmethod
    def get(logdir):
        from tensorflux.framework import ops  # pylint: disable=g-import-not-at-top
        with FileWriterCache._lock:
            writer = FileWriterCache._cache.get(logdir)
            if writer is None or writer._closed:  # pylint: disable=protected-access
                writer = FileWriter(logdir, graph=ops.get_default_graph())
                FileWriterCache._cache[logdir] = writer
            return writer

    @staticmethod
    def clear():
        """Closes and forgets every cached writer."""
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache = {}


def summary_iterator(path):
    """Yields the Event protos of an event file (tf.compat.v1.train.summary_iterator). A corrupt
    or truncated record raises DataLossError naming the file and offset."""
    for record in _pw.RecordIterator(str(path), False):
        event = Event()
        event.ParseFromString(record)
        yield event


__all__ = ["FileWriter", "FileWriterCache", "summary_iterator", "SessionLog"]
