"""Chrome trace timelines of a step (TF's tensorflow.python.client.timeline).

    run_metadata = tx.RunMetadata()
    sess.run(fetches, options=tx.RunOptions(trace_level=tx.RunOptions.FULL_TRACE),
             run_metadata=run_metadata)
    tl = tx.timeline.Timeline(run_metadata.step_stats)
    with open("timeline.json", "w") as f:
        f.write(tl.generate_chrome_trace_format())

The JSON opens in Perfetto or chrome://tracing: a process per device, a track per executor
thread, one event per node run (args: node name, op, inputs), dataflow arrows between tracks and
from each _Send to its _Recv, and with show_memory the tensors and per-allocator memory. It is
written by the engine's C++ writer (src/tensorflux/summary/timeline.h, which describes every
event), the same one `tensorflux run GRAPH --trace FILE.json` uses.
"""

from tensorflux.framework import _pywrap

_OP_TIMES = ("schedule", "gpu", "all")


class Timeline(object):
    """A step's timeline (TF's Timeline): built from a StepStats message."""

    def __init__(self, step_stats, graph=None):
        """step_stats: the `step_stats` of a tx.RunMetadata filled by Session.run (a StepStats
        message). graph is accepted for TF's signature and not used."""
        if not hasattr(step_stats, "SerializeToString") or not hasattr(step_stats, "dev_stats"):
            raise TypeError("Timeline needs a StepStats message (RunMetadata.step_stats), got %s"
                            % type(step_stats).__name__)
        self._step_stats = step_stats
        self._graph = graph

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False,
                                     op_time="schedule"):
        """The Chrome trace JSON (str, indented as TF's).

        show_dataflow: arrows from each producer to its consumers on other tracks, and from each
          _Send to its _Recv. show_memory: tensor objects and per-allocator memory counters.
        op_time: "schedule", "gpu" or "all" (TF's); TensorFlux records no GPU kernel times, so
          the three give the same trace. ValueError for another value.
        """
        if op_time not in _OP_TIMES:
            raise ValueError("op_time must be one of %s, got %r" % (", ".join(_OP_TIMES), op_time))
        return _pywrap.chrome_trace_from_step_stats(
            self._step_stats.SerializeToString(), bool(show_dataflow), bool(show_memory), True)
