"""Elementwise math (ops/math_ops.cc): binary arithmetic and comparison, unary math, ternary."""

from conformance.table import FLOAT_DTYPES, INT_DTYPES, Case, Rand, Special, expand

CASES = []
CASES += expand("AddV2", FLOAT_DTYPES + INT_DTYPES, inputs={"x": Rand((2, 3)), "y": Rand((3,))},
                grad=("x", "y"), variant="broadcast")
CASES += expand("AddV2", ("float32",), inputs={"x": Special(), "y": Special()}, variant="specials")
CASES += expand("Sqrt", FLOAT_DTYPES, inputs={"x": Rand((2, 3), low=0.1, high=4)}, grad=("x",))
CASES += expand("Sqrt", ("float32",), inputs={"x": Special()}, variant="specials")
CASES += [Case("AddV2", {"x": Rand((2, 3)), "y": Rand((4,))}, variant="incompatible")]
CASES += [Case("AddN", {"inputs": [Rand((2, 2)), Rand((2, 2)), Rand((2, 2))]})]
