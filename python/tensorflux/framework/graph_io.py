"""write_graph (TF's tf.io.write_graph / tf.train.write_graph): a GraphDef to a file."""

import os

from google.protobuf import text_format


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Writes the GraphDef of `graph_or_graph_def` (a tx.Graph or a GraphDef proto) to
    `logdir`/`name`: protobuf text format when `as_text`, else binary. Creates `logdir` (and its
    parents) when missing; the file is replaced through a temporary file in the same directory
    and a rename. Returns the path written. OS errors (a directory that cannot be created or
    written) propagate as OSError naming the path."""
    graph_def = graph_or_graph_def
    if hasattr(graph_or_graph_def, "as_graph_def"):
        graph_def = graph_or_graph_def.as_graph_def()
    path = os.path.join(str(logdir), name)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    data = (text_format.MessageToString(graph_def).encode("utf-8") if as_text
            else graph_def.SerializeToString())
    tmp = "%s.tmp-%d-%s" % (path, os.getpid(), os.urandom(4).hex())
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


__all__ = ["write_graph"]
