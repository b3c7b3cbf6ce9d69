"""Summaries (ops/summary_ops.cc): ScalarSummary, HistogramSummary, MergeSummary. Each output is
a serialized tf.Summary, compared byte for byte with TensorFlow's (so the histograms' bucket
limits, counts, min, max, sum and sum of squares agree exactly)."""

import numpy as np

from conformance.program_util import scalar_summary
from conformance.table import Case, Rand, Special

CASES = []
REAL = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
        "uint32", "uint64")


def _tags(*names):
    return np.array([n.encode() for n in names], dtype=bytes)


for _dt in REAL:
    CASES.append(Case("ScalarSummary", {"tags": _tags("a", "b/c", "d"),
                                        "values": Rand((3,), low=-100, high=100)},
                      variant="base", dtype=_dt))
CASES += [
    Case("ScalarSummary", {"tags": np.array(b"loss"), "values": np.float32(0.25)},
         variant="scalar"),
    Case("ScalarSummary", {"tags": _tags("a", "b", "c", "d").reshape(2, 2),
                           "values": Rand((2, 2))}, variant="matrix"),
    Case("ScalarSummary", {"tags": np.zeros((0,), "S1"), "values": np.zeros((0,), np.float32)},
         variant="empty"),
    Case("ScalarSummary", {"tags": np.array([b"t%d" % i for i in range(14)]),
                           "values": Special()}, variant="specials"),
    Case("ScalarSummary", {"tags": np.array([b"t%d" % i for i in range(10)]),
                           "values": Special()}, variant="limits", dtype="int64"),
    Case("ScalarSummary", {"tags": _tags("a", "b"), "values": Rand((3,))}, variant="mismatch"),
    Case("ScalarSummary", {"tags": _tags("a", "a"), "values": Rand((2,))},
         variant="duplicate_tags"),
]

for _dt in REAL:
    CASES.append(Case("HistogramSummary", {"tag": np.array(b"hist"),
                                           "values": Rand((4, 5), low=-50, high=50)},
                      variant="base", dtype=_dt))
CASES += [
    Case("HistogramSummary", {"tag": np.array(b"h"), "values": np.float32(3.5)},
         variant="scalar"),
    Case("HistogramSummary", {"tag": np.array(b"h"), "values": np.zeros((0, 3), np.float32)},
         variant="empty"),
    Case("HistogramSummary", {"tag": np.array(b"h"), "values": np.full((6,), 2.0, np.float64)},
         variant="constant", dtype="float64"),
    Case("HistogramSummary", {"tag": np.array(b"h"), "values": np.zeros((5,), np.float64)},
         variant="zeros", dtype="float64"),
    Case("HistogramSummary", {"tag": np.array(b"h"),
                              "values": np.array([1e-13, -1e-13, 1e-12, 1.1e-12, 1e19, 2e20,
                                                  -2e20, 1e300, -1e300, 0.5], np.float64)},
         variant="wide", dtype="float64"),
    Case("HistogramSummary", {"tag": np.array(b"h"), "values": Special(finite=True)},
         variant="finite_specials", dtype="float32"),
    Case("HistogramSummary", {"tag": np.array(b"h"), "values": Special()},
         variant="limits", dtype="int64"),
    Case("HistogramSummary", {"tag": np.array(b"h"),
                              "values": np.array([1.0, np.nan], np.float32)}, variant="nan"),
    Case("HistogramSummary", {"tag": np.array(b"h"),
                              "values": np.array([1.0, -np.inf], np.float32)}, variant="inf"),
    Case("HistogramSummary", {"tag": _tags("a", "b"), "values": Rand((2,))},
         variant="vector_tag"),
]

_S1 = scalar_summary([("a", 1.5), ("b", -2.0)])
_S2 = scalar_summary([("c", 3.25)])
_S3 = scalar_summary([("a", 7.5)])
CASES += [
    Case("MergeSummary", {"inputs": [np.array(_S1), np.array(_S2)]}, variant="base",
         dtype="string"),
    Case("MergeSummary", {"inputs": [np.array(_S2)]}, variant="one", dtype="string"),
    Case("MergeSummary", {"inputs": [np.array([_S1, _S2]), np.array(b"")]}, variant="vector",
         dtype="string"),
    Case("MergeSummary", {"inputs": [np.array(_S1), np.array(_S3)]}, variant="duplicate_tag",
         dtype="string"),
    Case("MergeSummary", {"inputs": [np.array(_S1), np.array(b"\x0a\x09ab")]},
         variant="corrupt", dtype="string"),
]
