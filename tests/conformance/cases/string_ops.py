"""String ops (ops/string_ops.cc): StringJoin."""

import numpy as np

from conformance.cases.array_ops import strings
from conformance.table import Case


def s(*v):
    return np.array(v, dtype=bytes) if v else np.zeros((0,), "S1")


CASES = [
    Case("StringJoin", {"inputs": [strings((2, 3)), strings((2, 3))[::-1]]}, {"separator": "-"},
         dtype="string"),
    Case("StringJoin", {"inputs": [np.array(b"pre"), s(b"a", b"", b"c"), np.array(b"post")]},
         {"separator": ", "}, variant="scalar_broadcast", dtype="string"),
    Case("StringJoin", {"inputs": [np.array(b"x"), np.array(b"y"), np.array(b"")]},
         variant="scalars", dtype="string"),
    Case("StringJoin", {"inputs": [s(b"only", b"")]}, {"separator": "+"}, variant="one",
         dtype="string"),
    Case("StringJoin", {"inputs": [s(), s()]}, {"separator": "/"}, variant="empty",
         dtype="string"),
    Case("StringJoin", {"inputs": [s(), np.array(b"z")]}, variant="empty_and_scalar",
         dtype="string"),
    Case("StringJoin", {"inputs": [s("\u00e9t\u00e9".encode(), b"\xff\x00x"),
                                   s("\u4e2d".encode(), b"\x00")]},
         {"separator": "\u2013"}, variant="bytes", dtype="string"),
    Case("StringJoin", {"inputs": [s(b"a", b"b"), s(b"a", b"b", b"c")]}, variant="mismatch",
         dtype="string"),
    Case("StringJoin", {"inputs": [strings((2, 1)), strings((1, 2))]}, variant="no_broadcast",
         dtype="string"),
    Case("StringJoin", {"inputs": [s(b"a", b"b"), s(b"c", b"d")]}, {"separator": "::"},
         variant="const", dtype="string", const=("inputs",)),
]
