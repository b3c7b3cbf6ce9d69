"""Function-call ops (ops/function_ops.cc): _Arg and _Retval.

Both are internal ops (TF has them too: op_def_registry.get("_Arg")): a session run rewrites
every fed tensor into an _Arg node reading the call frame and every fetched tensor into a
_Retval node writing it (TF's DirectSession "call frame" convention; TensorFlux's
runtime/subgraph.cc), so any program with feeds and fetches exercises them. These programs
feed and fetch tensors of several dtypes and shapes, fetch a fed tensor itself, fetch the same
tensor twice, and feed a tensor that is not a placeholder."""

import numpy as np

from conformance.table import Case


def _feeds_and_fetches(m):
    x = m.placeholder(m.float32, shape=[2, 3])
    n = m.placeholder(m.int64, shape=[])
    s = m.placeholder(m.string, shape=[None])
    b = m.placeholder(m.bool, shape=[2])
    e = m.placeholder(m.float64, shape=[0, 4])
    h = m.placeholder(m.float16, shape=[3])
    y = x * 2.0 + 1.0
    feeds = {x: np.arange(6, dtype=np.float32).reshape(2, 3), n: np.array(-9, np.int64),
             s: np.array([b"a", b"", b"bc"]), b: np.array([True, False]),
             e: np.zeros((0, 4)), h: np.array([0.5, -1.0, np.inf], np.float16)}
    return [y, n + 1, s, m.logical_not(b), e, h, x, y, m.constant([1, 2])], feeds, []


def _feed_intermediate(m):
    # Feeding a non-placeholder tensor replaces its producer for this run.
    x = m.constant(np.ones((2, 2), np.float32))
    y = m.identity(x) * 3.0
    z = y + 1.0
    return [z, y], {y: np.full((2, 2), 10.0, np.float32)}, []


def _bad_feed_dtype(m):
    x = m.placeholder(m.int32, shape=[2])
    return [x + 1], {x: np.array(["a", "b"])}, []


CASES = [
    Case("_Arg", variant="program_feeds_fetches", program=_feeds_and_fetches,
         covers=("_Arg", "_Retval")),
    Case("_Arg", variant="program_feed_intermediate", program=_feed_intermediate,
         covers=("_Arg", "_Retval")),
    Case("_Arg", variant="program_bad_feed_dtype", program=_bad_feed_dtype,
         covers=("_Arg",)),
]
