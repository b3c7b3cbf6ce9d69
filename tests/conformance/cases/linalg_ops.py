"""Qr (ops/linalg_ops.cc), full_matrices both ways.

Q and R are unique only up to the signs of R's diagonal (Q's columns). Both TF (Eigen's
HouseholderQR) and TensorFlux (its own Householder QR) reflect each column onto
-sign(x_0) * |x| e_0, so the signs agree and the factors are compared as computed. Tolerance:
Householder QR is backward stable, with errors about n * u * |A| for n <= 4 here: (1e-5, 1e-5)
for float32, (1e-12, 1e-12) for float64. TF's CPU also has half and complex Qr kernels, which
TensorFlux does not register (and has no Qr gradient yet, which TF has).
"""

import numpy as np

from conformance.table import Case, Rand

CASES = []
_TOL = {"float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12)}

for dt in ("float32", "float64"):
    for full in (False, True):
        f = "_full" if full else ""
        for variant, shape in (("tall", (4, 3)), ("wide", (2, 4)), ("square", (3, 3)),
                               ("batch", (2, 3, 2)), ("batch2", (2, 1, 2, 3)),
                               ("vector", (4, 1)), ("row", (1, 3))):
            CASES.append(Case("Qr", {"input": Rand(shape)}, {"full_matrices": full},
                              variant=variant + f, dtype=dt, tol=_TOL[dt]))
for full in (False, True):
    f = "_full" if full else ""
    CASES += [
        Case("Qr", {"input": Rand((0, 3))}, {"full_matrices": full}, variant="empty_rows" + f),
        Case("Qr", {"input": Rand((3, 0))}, {"full_matrices": full}, variant="empty_cols" + f),
        Case("Qr", {"input": Rand((0, 2, 2))}, {"full_matrices": full},
             variant="empty_batch" + f),
        # Rank deficient (a zero column, two equal columns).
        Case("Qr", {"input": np.array([[1.0, 0.0, 2.0], [2.0, 0.0, 4.0], [3.0, 0.0, 6.0]],
                                      np.float64)}, {"full_matrices": full},
             variant="rank_deficient" + f, dtype="float64", tol=_TOL["float64"]),
        Case("Qr", {"input": np.zeros((3, 2), np.float32)}, {"full_matrices": full},
             variant="zeros" + f),
        Case("Qr", {"input": np.diag([-2.0, 3.0, -1.0]).astype(np.float32)},
             {"full_matrices": full}, variant="diagonal" + f),
    ]
CASES += [
    Case("Qr", {"input": np.array([[1.0, np.nan], [2.0, 3.0]], np.float32)}, variant="nan"),
    Case("Qr", {"input": np.array([[1.0, np.inf], [2.0, 3.0]], np.float32)}, variant="inf"),
    Case("Qr", {"input": Rand((3,))}, variant="rank1"),
    Case("Qr", {"input": np.array(1.0, np.float32)}, variant="scalar"),
]
