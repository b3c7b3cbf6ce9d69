"""tx.summary: TF 1.x's tf.summary (tf.compat.v1.summary) -- summary ops and FileWriter.

    loss_summary = tx.summary.scalar("loss", loss)          # a string tensor: a serialized Summary
    tx.summary.histogram("weights", w)
    merged = tx.summary.merge_all()
    writer = tx.summary.FileWriter("runs/x", graph=tx.get_default_graph())
    writer.add_summary(sess.run(merged), global_step=step)
    writer.close()

The files are TensorBoard event files (summary/events_writer.h): `tensorboard --logdir runs/x`
shows the scalars, histograms and the graph.
"""

from tensorflux.framework import ops
from tensorflux.framework.op_def_library import apply_op
from tensorflux.summary.writer import FileWriter, FileWriterCache, summary_iterator  # noqa: F401
from tensorflux.summary_pb2 import Summary, SummaryMetadata, HistogramProto  # noqa: F401
from tensorflux.event_pb2 import Event, SessionLog, TaggedRunMetadata  # noqa: F401


def _summary_scope(name, family, values):
    """(name scope, tag): the tag is the scope's full name, prefixed by `family` if given, as
    TF's summary_op_util.summary_scope."""
    if family:
        name = "%s/%s" % (family, name)
    return ops.name_scope(name, "summary", values)


def _collect(op, collections):
    for key in (collections if collections is not None else [ops.GraphKeys.SUMMARIES]):
        ops.add_to_collection(key, op)
    return op


def scalar(name, tensor, collections=None, family=None):
    """A ScalarSummary of a real-number scalar `tensor` (float32 simple_value in the Summary)
    under the tag `name` (with the enclosing name scopes). Returns a string scalar tensor; adds it
    to `collections` (default [GraphKeys.SUMMARIES])."""
    with _summary_scope(name, family, [tensor]) as scope:
        tensor = ops.convert_to_tensor(tensor)
        if tensor.shape.ndims not in (None, 0):
            raise ValueError("tx.summary.scalar(%r) needs a scalar, got shape %s"
                             % (name, tensor.shape))
        out = apply_op("ScalarSummary", tags=scope.rstrip("/"), values=tensor, name=scope)
    return _collect(out, collections)


def histogram(name, values, collections=None, family=None):
    """A HistogramSummary of all elements of `values` (any real dtype and shape) under the tag
    `name`, with TF's default buckets. A NaN or Inf makes the step fail with INVALID_ARGUMENT
    naming the tag. Returns a string scalar tensor; adds it to `collections`."""
    with _summary_scope(name, family, [values]) as scope:
        out = apply_op("HistogramSummary", tag=scope.rstrip("/"), values=values, name=scope)
    return _collect(out, collections)


def merge(inputs, collections=None, name=None):
    """MergeSummary: one serialized Summary holding the values of all `inputs` (string tensors of
    serialized Summaries). A tag present twice fails the step (INVALID_ARGUMENT)."""
    with ops.name_scope(name, "Merge", inputs) as scope:
        out = apply_op("MergeSummary", inputs=list(inputs), name=scope)
    if collections:
        _collect(out, collections)
    return out


def merge_all(key=ops.GraphKeys.SUMMARIES, scope=None, name=None):
    """merge() of every summary in collection `key` (of the default graph), or None when it is
    empty."""
    summaries = ops.get_collection(key, scope)
    if not summaries:
        return None
    return merge(summaries, name=name)
