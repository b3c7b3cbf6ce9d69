"""CheckNumerics (ops/debug_ops.cc): the input unchanged, or INVALID_ARGUMENT on NaN / Inf."""

import numpy as np

from conformance.table import FLOAT_DTYPES, Case, Rand, Special, expand

CASES = []
CASES += expand("CheckNumerics", FLOAT_DTYPES, inputs={"tensor": Rand((2, 3))},
                attrs={"message": "check"}, grad=("tensor",))
CASES += [
    Case("CheckNumerics", {"tensor": np.array(2.5, np.float64)}, {"message": "scalar"},
         variant="scalar", dtype="float64", grad=("tensor",)),
    Case("CheckNumerics", {"tensor": Rand((0, 3))}, {"message": "empty"}, variant="empty"),
    # Every finite edge value passes (the largest finite, the smallest normal, -0).
    Case("CheckNumerics", {"tensor": Special(finite=True)}, {"message": "finite"},
         variant="finite_specials"),
    Case("CheckNumerics", {"tensor": Special(finite=True, dtype="float16")},
         {"message": "finite"}, variant="finite_specials", dtype="float16"),
    # Refused at run time: NaN, Inf, -Inf, both.
    Case("CheckNumerics", {"tensor": np.array([1.0, np.nan, 2.0], np.float32)},
         {"message": "has nan"}, variant="nan"),
    Case("CheckNumerics", {"tensor": np.array([[1.0, np.inf]], np.float32)},
         {"message": "has inf"}, variant="inf"),
    Case("CheckNumerics", {"tensor": np.array([-np.inf], np.float64)},
         {"message": "has -inf"}, variant="neg_inf", dtype="float64"),
    Case("CheckNumerics", {"tensor": np.array([np.nan, np.inf, -1.0], np.float16)},
         {"message": "has both"}, variant="nan_and_inf", dtype="float16"),
]
