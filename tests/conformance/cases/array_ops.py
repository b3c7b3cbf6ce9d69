"""Array ops (ops/array_ops.cc)."""

import numpy as np

from conformance.table import Case, Rand

CASES = [
    Case("Reshape", {"tensor": Rand((2, 6)), "shape": np.array([3, -1], np.int32)},
         const=("shape",), grad=("tensor",), dtype="float64"),
    Case("Split", {"split_dim": np.array(1, np.int32), "value": Rand((2, 6))}, {"num_split": 3},
         const=("split_dim",), grad=("value",), dtype="float64"),
]
