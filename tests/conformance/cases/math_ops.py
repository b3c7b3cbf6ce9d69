"""Elementwise math (ops/math_ops.cc): binary arithmetic, comparison and logical ops, unary
math, Select/SelectV2, ClipByValue, AddN and Cast.

Per op: every dtype both systems register on CPU (bfloat16 aside: numpy has no such type),
broadcasting, scalars, empty tensors, the dtype's edge values (Special: NaN, inf, integer
min/max; for binary ops as a column against a row, so every value meets every value and the
case broadcasts too), the errors TensorFlow raises, and gradients (float64 cases also against
finite differences). Random-value cases are float only: for integers the edge values say more.
"""

import numpy as np

from conformance.table import (FLOAT_DTYPES, INT_DTYPES, SIGNED_INT_DTYPES, UNSIGNED_INT_DTYPES,
                               Case, Rand, Special)

F = FLOAT_DTYPES
I = INT_DTYPES
SI = SIGNED_INT_DTYPES
UI = UNSIGNED_INT_DTYPES
ALL_REAL = F + I

# Kernels TensorFlux has and TensorFlow's CPU lacks (TF: "No OpKernel was registered").
NO_TF_KERNEL = ("TensorFlux has a CPU kernel for this op and dtype, TensorFlow 2.15 has none "
                "(docs/TF_DIFFERENCES.md, math_ops)")


def col(spec):
    """`spec`'s values (a Special, or a function of the dtype) as a column (n, 1): against a
    row it makes every pair (an outer product)."""
    if hasattr(spec, "make"):
        return lambda dt: spec.make(dt, 0).reshape(-1, 1)
    return lambda dt: spec(dt).reshape(-1, 1)


def arr(*vals):
    """Explicit values in the case's dtype."""
    return lambda dt: np.array(vals, dtype=dt)


def scalar(v):
    return lambda dt: np.array(v, dtype=dt)


def reversed_specials(dt):
    return Special().make(dt, 0)[::-1].copy()


def divisors(dt):
    """Non-zero integer divisors without -1 (INT_MIN / -1 traps inside TensorFlow's kernel;
    -1 has its own case)."""
    info = np.iinfo(dt)
    v = [1, 2, 7, 3, info.max, info.max - 1]
    if np.dtype(dt).kind == "i":
        v += [-2, -7, info.min, info.min + 1]
    return np.array(v, dtype=dt)


CASES = []

# ---------------------------------------------------------------- binary arithmetic

BINARY = {
    # op: (dtypes, dtypes TF has no CPU kernel for, has gradient)
    "Add": (F + SI + ("uint8",), (), True),
    "AddV2": (ALL_REAL, (), True),
    "Sub": (ALL_REAL, (), True),
    "Mul": (ALL_REAL, (), True),
    "RealDiv": (ALL_REAL, I, True),
    "Maximum": (ALL_REAL, (), True),
    "Minimum": (ALL_REAL, (), True),
    "FloorDiv": (ALL_REAL, (), False),
    "FloorMod": (ALL_REAL, (), True),
    "Pow": (F + SI, (), True),
    "SquaredDifference": (F + ("int32", "int64"), (), True),
}
DIVIDES = ("RealDiv", "FloorDiv", "FloorMod")
FLOORDIV_FTZ = ("TensorFlux keeps subnormals; TensorFlow's CPU threads flush them to zero, so "
                "a quotient of magnitude below the smallest normal floors to -0 rather than -1 "
                "there (docs/TF_DIFFERENCES.md, math_ops)")

for op, (dtypes, no_tf, has_grad) in BINARY.items():
    g = ("x", "y") if has_grad else ()
    pos = dict(low=0.5, high=2.0) if op == "Pow" else {}
    nz = dict(nonzero=True) if op in DIVIDES else {}
    for dt in dtypes:
        dev = NO_TF_KERNEL if dt in no_tf else None
        if dt in F:
            ftz = op == "FloorDiv" and dt != "float16"
            CASES.append(Case(op, {"x": Rand((2, 3), **pos), "y": Rand((3,), **nz)},
                              variant="broadcast", dtype=dt, grad=g))
            CASES.append(Case(op, {"x": col(Special()), "y": Special()}, variant="specials",
                              dtype=dt, deviation=FLOORDIV_FTZ if ftz else None))
        elif op in DIVIDES:
            CASES.append(Case(op, {"x": col(Special()), "y": divisors}, variant="specials",
                              dtype=dt, deviation=dev))
        elif op == "Pow":
            CASES.append(Case(op, {"x": col(Special()), "y": arr(0, 1, 2, 3, 7, 31, 63)},
                              variant="specials", dtype=dt))
        else:
            CASES.append(Case(op, {"x": col(Special()), "y": Special()}, variant="specials",
                              dtype=dt, deviation=dev))
    # Shapes: scalar with tensor, both sides broadcasting, into an empty shape, incompatible.
    CASES += [
        Case(op, {"x": Rand((), **pos), "y": Rand((2, 3), **nz)}, variant="scalar",
             dtype="float64", grad=g),
        Case(op, {"x": Rand((2, 1, 3), **pos), "y": Rand((4, 1), **nz)},
             variant="broadcast_both", dtype="float64", grad=g),
        Case(op, {"x": Rand((2, 0), **pos), "y": Rand((1, 1), **nz)}, variant="empty",
             dtype="float32", grad=g),
        Case(op, {"x": Rand((2, 3), **pos), "y": Rand((4,), **nz)}, variant="incompatible"),
    ]

# Integer division by zero is an error in TensorFlow's kernels (not a crash, not a value).
for op in ("FloorDiv", "FloorMod"):
    for dt in ("int32", "uint8"):
        CASES.append(Case(op, {"x": arr(1, 2, 3), "y": arr(1, 0, 2)}, variant="div_by_zero",
                          dtype=dt))
    # -1 as the divisor (INT_MIN left out: it traps in TF's kernel, see divisors()).
    for dt in SI:
        info = np.iinfo(dt)
        CASES.append(Case(op, {"x": arr(0, 1, -1, 5, -5, 7, info.max, info.min + 1),
                               "y": arr(-1)}, variant="minus_one", dtype=dt))
# Floats: signs, zero divisors and infinities, with quotients exact in every float dtype.
for op in ("FloorDiv", "FloorMod"):
    for dt in F:
        CASES.append(Case(op, {"x": col(arr(0.0, -0.0, 1.0, -1.0, 2.5, -7.0, 12.0, np.inf,
                                            -np.inf, np.nan)),
                               "y": arr(0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 4.0, -8.0, np.inf,
                                        -np.inf, np.nan)},
                          variant="signs", dtype=dt))
# float16 quotients round to half before flooring: 2.998 / 0.9995 is 2.9995, 3 in half.
CASES.append(Case("FloorDiv", {"x": arr(2.998046875, -2.998046875, 7.0, 1.0),
                               "y": arr(0.99951171875, 0.99951171875, 2.0, 3.0)},
                  variant="quotient_rounding", dtype="float16"))
CASES += [
    # Integer powers: a negative exponent is an error; overflow wraps.
    Case("Pow", {"x": arr(2, 3), "y": arr(1, -1)}, variant="negative_exponent", dtype="int32"),
    Case("Pow", {"x": arr(2, 3, -3, 10, 0, -1), "y": arr(40, 41, 41, 30, 0, 63)},
         variant="overflow", dtype="int64"),
    # Pow's gradient where x <= 0: TF's y-gradient is 0 there (log x is undefined).
    Case("Pow", {"x": arr(-1.5, 0.0, 2.0, -2.0), "y": arr(2.0, 3.0, 0.5, 3.0)},
         variant="nonpositive_base", dtype="float32", grad=("x", "y")),
    # Add concatenates strings; AddV2 has no string kernel.
    Case("Add", {"x": np.array([[b"ab"], [b""]]), "y": np.array([b"x", b"yz", b""])},
         variant="string", dtype="string"),
    Case("AddV2", {"x": np.array([b"a"]), "y": np.array([b"b"])}, variant="string",
         dtype="string"),
    # Refused when built: a dtype outside the op's list, x and y of different dtypes.
    Case("Mul", {"x": np.array([True, False]), "y": np.array([True, True])}, variant="bool",
         dtype="bool"),
    Case("Pow", {"x": arr(1, 2), "y": arr(1, 2)}, variant="unsigned", dtype="uint8"),
    Case("Sub", {"x": Rand((2, 3)), "y": Rand((2, 3), dtype="float64")},
         variant="mismatched_dtypes", dtype="float32"),
]
# Maximum/Minimum gradient at ties: TF gives the whole gradient to x (x >= y / x <= y).
CASES += [
    Case(op, {"x": arr(1.0, 2.0, 3.0, -1.0), "y": arr(1.0, 1.0, 4.0, -1.0)}, variant="ties",
         dtype="float32", grad=("x", "y"))
    for op in ("Maximum", "Minimum")]

# ---------------------------------------------------------------- comparisons

for op in ("Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual"):
    for dt in ALL_REAL:
        CASES.append(Case(op, {"x": col(Special()), "y": Special()}, variant="specials",
                          dtype=dt))
    CASES += [
        Case(op, {"x": Rand((2, 3), low=-1, high=1), "y": Rand((3,), low=-1, high=1)},
             variant="broadcast", dtype="int32"),
        Case(op, {"x": Rand((0, 2)), "y": Rand(())}, variant="empty"),
        Case(op, {"x": Rand(()), "y": Rand(())}, variant="scalars", dtype="float64"),
        Case(op, {"x": Rand((2, 3)), "y": Rand((2,))}, variant="incompatible"),
    ]
for op in ("Equal", "NotEqual"):
    CASES += [
        Case(op, {"x": Special(shape=(2, 1)), "y": Special()}, variant="bool", dtype="bool"),
        Case(op, {"x": np.array([[b"a"], [b""]]), "y": np.array([b"a", b"c", b""])},
             variant="string", dtype="string"),
        # incompatible_shape_error=False: shapes that do not broadcast give a scalar.
        Case(op, {"x": Rand((2, 3), low=0, high=2), "y": Rand((2,), low=0, high=2)},
             {"incompatible_shape_error": False}, variant="incompatible_no_error",
             dtype="int32"),
        Case(op, {"x": Rand((2, 3), low=0, high=2), "y": Rand((3,), low=0, high=2)},
             {"incompatible_shape_error": False}, variant="broadcast_no_error", dtype="int32"),
    ]
# The ordering comparisons have no bool or string kernel (refused when built).
CASES += [Case("Less", {"x": np.array([True]), "y": np.array([False])}, variant="bool",
               dtype="bool"),
          Case("Greater", {"x": np.array([b"a"]), "y": np.array([b"b"])}, variant="string",
               dtype="string")]

# ---------------------------------------------------------------- logical

for op in ("LogicalAnd", "LogicalOr"):
    CASES += [
        Case(op, {"x": Special(shape=(2, 1)), "y": Special()}, variant="broadcast",
             dtype="bool"),
        Case(op, {"x": Rand(()), "y": Rand((0, 2))}, variant="empty", dtype="bool"),
        Case(op, {"x": Rand((2, 3)), "y": Rand((4,))}, variant="incompatible", dtype="bool"),
        Case(op, {"x": Rand((2,)), "y": Rand((2,))}, variant="float", dtype="float32"),
    ]
CASES += [
    Case("LogicalNot", {"x": Rand((2, 3))}, variant="base", dtype="bool"),
    Case("LogicalNot", {"x": Rand(())}, variant="scalar", dtype="bool"),
    Case("LogicalNot", {"x": Rand((0, 3))}, variant="empty", dtype="bool"),
    Case("LogicalNot", {"x": Rand((2,))}, variant="int", dtype="int32"),
]

# ---------------------------------------------------------------- Select, SelectV2

for dt in ALL_REAL + ("bool",):
    g = ("t", "e") if dt in F else ()
    CASES += [
        Case("Select", {"condition": Rand((2, 3), dtype="bool"), "t": Special(shape=(2, 3)),
                        "e": Rand((2, 3))}, variant="same_shape", dtype=dt, grad=g),
        Case("SelectV2", {"condition": Rand((2, 1), dtype="bool"), "t": Special(shape=(2, 3)),
                          "e": Rand((3,))}, variant="broadcast", dtype=dt, grad=g),
    ]
CASES += [
    Case("Select", {"condition": np.array([True, False, True]),
                    "t": np.array([b"a", b"bb", b""]), "e": np.array([b"x", b"y", b"z"])},
         variant="string", dtype="string"),
    Case("SelectV2", {"condition": np.array([[True], [False]]),
                      "t": np.array([b"a", b"bb", b""]), "e": np.array([b"x"])},
         variant="string", dtype="string"),
    # v1 Select: a scalar condition picks all of t or all of e; a vector picks rows.
    Case("Select", {"condition": np.array(True), "t": Rand((2, 3)), "e": Rand((2, 3))},
         variant="scalar_condition", dtype="float64", grad=("t", "e")),
    Case("Select", {"condition": np.array([True, False, True]), "t": Rand((3, 2)),
                    "e": Rand((3, 2))}, variant="vector_condition", dtype="float64",
         grad=("t", "e")),
    Case("Select", {"condition": Rand((), dtype="bool"), "t": Rand(()), "e": Rand(())},
         variant="scalars", dtype="float64", grad=("t", "e")),
    Case("Select", {"condition": Rand((0, 2), dtype="bool"), "t": Rand((0, 2)),
                    "e": Rand((0, 2))}, variant="empty", dtype="float32", grad=("t", "e")),
    Case("Select", {"condition": Rand((2, 3), dtype="bool"), "t": Rand((2, 3)),
                    "e": Rand((3,))}, variant="t_e_mismatch"),
    Case("Select", {"condition": Rand((3,), dtype="bool"), "t": Rand((2, 3)),
                    "e": Rand((2, 3))}, variant="bad_vector_condition"),
    Case("Select", {"condition": Rand((2, 1), dtype="bool"), "t": Rand((2, 3)),
                    "e": Rand((2, 3))}, variant="bad_condition_shape"),
    Case("Select", {"condition": Rand((2,)), "t": Rand((2,)), "e": Rand((2,))},
         variant="float_condition"),
    Case("SelectV2", {"condition": Rand((2, 1, 1), dtype="bool"), "t": Rand((1, 3, 1)),
                      "e": Rand((4,))}, variant="broadcast_all", dtype="float64",
         grad=("t", "e")),
    Case("SelectV2", {"condition": Rand((), dtype="bool"), "t": Rand((2, 3)), "e": Rand(())},
         variant="scalar_condition", dtype="float64", grad=("t", "e")),
    Case("SelectV2", {"condition": Rand((0, 1), dtype="bool"), "t": Rand((3,)),
                      "e": Rand((1, 3))}, variant="empty", dtype="float32", grad=("t", "e")),
    Case("SelectV2", {"condition": Rand((2, 3), dtype="bool"), "t": Rand((2, 3)),
                      "e": Rand((4,))}, variant="incompatible"),
]

# ---------------------------------------------------------------- ClipByValue

for dt in ALL_REAL:
    dev = NO_TF_KERNEL if dt in ("uint32", "uint64") else None
    lo, hi = (-0.5, 0.75) if dt in F else ((-10, 20) if dt in SI else (2, 30))
    if dt in F:
        CASES.append(Case("ClipByValue", {"t": Rand((2, 3)), "clip_value_min": scalar(lo),
                                          "clip_value_max": scalar(hi)},
                          variant="scalar_bounds", dtype=dt, grad=("t",)))
    CASES.append(Case("ClipByValue", {"t": Special(), "clip_value_min": scalar(lo),
                                      "clip_value_max": scalar(hi)},
                      variant="specials", dtype=dt, deviation=dev))
CASES += [
    Case("ClipByValue", {"t": Rand((2, 3)), "clip_value_min": Rand((2, 3), low=-1, high=0),
                         "clip_value_max": Rand((2, 3), low=0.1, high=1)},
         variant="tensor_bounds", dtype="float64",
         grad=("t", "clip_value_min", "clip_value_max")),
    Case("ClipByValue", {"t": Rand((2, 3)), "clip_value_min": scalar(-0.5),
                         "clip_value_max": Rand((2, 3), low=0.1, high=1)},
         variant="mixed_bounds", dtype="float64",
         grad=("t", "clip_value_min", "clip_value_max")),
    # min > max: max(min(t, hi), lo) = lo everywhere.
    Case("ClipByValue", {"t": Rand((2, 3)), "clip_value_min": scalar(1.0),
                         "clip_value_max": scalar(-1.0)}, variant="min_above_max"),
    Case("ClipByValue", {"t": Rand((2, 3)), "clip_value_min": scalar(np.nan),
                         "clip_value_max": scalar(1.0)}, variant="nan_min"),
    Case("ClipByValue", {"t": Rand((2, 3)), "clip_value_min": scalar(-1.0),
                         "clip_value_max": arr([1.0, np.nan, 0.5], [np.nan, 0.0, 2.0])},
         variant="nan_max"),
    Case("ClipByValue", {"t": Rand(()), "clip_value_min": scalar(-0.5),
                         "clip_value_max": scalar(0.5)}, variant="scalar", dtype="float64",
         grad=("t", "clip_value_min", "clip_value_max")),
    Case("ClipByValue", {"t": Rand((0, 3)), "clip_value_min": scalar(-0.5),
                         "clip_value_max": scalar(0.5)}, variant="empty", grad=("t",)),
    # Bounds of another shape: TF's kernel takes scalars and t's shape only.
    Case("ClipByValue", {"t": Rand((2, 3)), "clip_value_min": Rand((4,), low=-1, high=0),
                         "clip_value_max": scalar(0.5)}, variant="bad_bound_shape"),
    Case("ClipByValue", {"t": Rand((2, 3)), "clip_value_min": Rand((2, 3, 1), low=-1, high=0),
                         "clip_value_max": scalar(0.5)}, variant="bound_grows_t"),
    Case("ClipByValue", {"t": Rand((2, 3)), "clip_value_min": Rand((3,), low=-1, high=0),
                         "clip_value_max": scalar(0.5)}, variant="broadcast_bound",
         deviation="TensorFlux broadcasts a bound of a shape that broadcasts to t's; "
                   "TensorFlow's kernel refuses any shape but a scalar and t's own"),
]

# ---------------------------------------------------------------- AddN

for dt in ALL_REAL:
    CASES.append(Case("AddN", {"inputs": [Special(), reversed_specials, Special()]},
                      variant="specials", dtype=dt))
for dt in F:
    CASES.append(Case("AddN", {"inputs": [Rand((2, 3)), Rand((2, 3)), Rand((2, 3))]},
                      variant="three", dtype=dt, grad=("inputs",)))
CASES += [
    Case("AddN", {"inputs": [Rand((2, 3))]}, variant="one", dtype="float64", grad=("inputs",)),
    Case("AddN", {"inputs": [Rand(()), Rand(()), Rand(()), Rand(()), Rand(())]},
         variant="scalars", dtype="float64", grad=("inputs",)),
    Case("AddN", {"inputs": [Rand((0, 3)), Rand((0, 3))]}, variant="empty", grad=("inputs",)),
    Case("AddN", {"inputs": [Rand((2, 3)), Rand((3,))]}, variant="no_broadcast"),
    Case("AddN", {"inputs": [Rand((2, 3)), Rand((2, 3), dtype="float64")]},
         variant="mismatched_dtypes"),
]

# ---------------------------------------------------------------- unary

UNARY = {
    # op: (dtypes, dtypes TF has no CPU kernel for, value range of the base case)
    "Neg": (F + SI, (), (-2, 2)),
    "Square": (ALL_REAL, (), (-2, 2)),
    "Sqrt": (F, (), (0.1, 4)),
    "Exp": (F, (), (-3, 3)),
    "Log": (F, (), (0.1, 4)),
    "Abs": (F + SI, (), (-2, 2)),
    "Sign": (F + SI, (), (-2, 2)),
    "Reciprocal": (F + SI, SI, (0.2, 2)),
    "Rsqrt": (F, (), (0.2, 4)),
    "Log1p": (F, (), (-0.9, 3)),
    "Tanh": (F, (), (-3, 3)),
    "Sigmoid": (F, (), (-5, 5)),
    "Erf": (F, (), (-2, 2)),
    "Cos": (F, (), (-4, 4)),
    "Sin": (F, (), (-4, 4)),
}
for op, (dtypes, no_tf, (lo, hi)) in UNARY.items():
    nonzero = op in ("Abs", "Sign", "Reciprocal")  # away from the kink / the pole
    for dt in dtypes:
        dev = NO_TF_KERNEL if dt in no_tf else None
        if dt in F:
            CASES.append(Case(op, {"x": Rand((2, 3), low=lo, high=hi, nonzero=nonzero)},
                              variant="base", dtype=dt, grad=("x",)))
            CASES.append(Case(op, {"x": Special()}, variant="specials", dtype=dt))
        elif op == "Reciprocal":  # (an integer 0 is an error: TF has no integer kernel to compare)
            CASES.append(Case(op, {"x": arr(1, -1, 2, -3, 7, 100)}, variant="ints", dtype=dt,
                              deviation=dev))
        else:
            CASES.append(Case(op, {"x": Special()}, variant="specials", dtype=dt,
                              deviation=dev))
    CASES += [
        Case(op, {"x": Rand((), low=lo, high=hi, nonzero=nonzero)}, variant="scalar",
             dtype="float64", grad=("x",)),
        Case(op, {"x": Rand((0, 2), low=lo, high=hi)}, variant="empty", dtype="float32"),
    ]
CASES += [
    Case("Neg", {"x": arr(1, 2, 3)}, variant="unsigned", dtype="uint8"),
    Case("Abs", {"x": arr(1, 2, 3)}, variant="unsigned", dtype="uint32"),
    Case("Sign", {"x": np.array([True, False])}, variant="bool", dtype="bool"),
    Case("Sqrt", {"x": arr(1, 4, 9)}, variant="int", dtype="int32"),
    Case("Exp", {"x": arr(1, 2)}, variant="int", dtype="int64"),
    Case("Sigmoid", {"x": arr(1, 2)}, variant="int", dtype="int32"),
    Case("Log", {"x": arr(0.0, -0.0, -1.0, 1e-300, 1e300)}, variant="edges", dtype="float64"),
    Case("Tanh", {"x": arr(-20.0, -9.0, -1e-8, 1e-8, 9.0, 20.0)}, variant="saturation",
         dtype="float32", grad=("x",)),
    Case("Sigmoid", {"x": arr(-100.0, -20.0, -1e-8, 1e-8, 20.0, 100.0)}, variant="saturation",
         dtype="float32", grad=("x",)),
    Case("Exp", {"x": arr(-100.0, 88.0, 89.0, 709.0)}, variant="overflow", dtype="float32"),
    Case("Log1p", {"x": arr(-1.0, -0.999, 1e-10, -1e-10, 1e10)}, variant="edges",
         dtype="float64"),
    Case("Erf", {"x": arr(-6.0, -3.0, 1e-9, 3.0, 6.0)}, variant="tails", dtype="float64"),
]

# ---------------------------------------------------------------- Cast

CAST_DTYPES = ("bool",) + ALL_REAL


def in_range(dst):
    """Float values whose cast to `dst` is defined (in range, not NaN) in every float dtype."""
    if dst == "bool":
        return Special()
    if dst in F:
        return Special()
    v = [0.0, -0.0, 1.0, 0.5, 1.75, 3.0, 100.75, 126.0, 2.5e-5]
    if dst in SI:
        v += [-1.0, -0.75, -2.5, -127.5]
    return arr(*v)


# Every source dtype to every dtype, except integer to integer (wraps modulo the width): there
# each source goes to a narrower and a wider, a signed and an unsigned dtype.
INT_TARGETS = ("int8", "uint16", "int32", "uint64")
for src in CAST_DTYPES:
    for dst in CAST_DTYPES:
        if src in I and dst in I and dst not in INT_TARGETS:
            continue
        x = in_range(dst) if src in F else Special()
        CASES.append(Case("Cast", {"x": x}, {"DstT": dst}, variant="to_" + dst, dtype=src))
# Floats out of an integer dtype's range, NaN and inf: TF's kernel does what x86's conversion
# does (INT_MIN, then wrapped), TensorFlux saturates (NaN gives 0).
for src, dst in (("float16", "int32"), ("float32", "int32"), ("float32", "uint8"),
                 ("float64", "int64"), ("float64", "uint64")):
    CASES.append(Case("Cast", {"x": Special()}, {"DstT": dst}, variant="overflow_" + dst,
                      dtype=src,
                      deviation="float to integer out of range, inf or NaN: TensorFlux "
                                "saturates (NaN gives 0), TensorFlow's kernel is "
                                "undefined behaviour (x86: INT_MIN, then wrapped)"))
for src in F:
    for dst in F:
        # (Finite differences only where the output holds the input exactly.)
        CASES.append(Case("Cast", {"x": Rand((2, 3))}, {"DstT": dst}, variant="grad_to_" + dst,
                          dtype=src, grad=("x",), fd=dst == "float64"))
CASES += [
    Case("Cast", {"x": Rand((2, 3))}, {"DstT": "int32"}, variant="grad_to_int32",
         dtype="float64", grad=("x",)),
    Case("Cast", {"x": Rand((0, 3))}, {"DstT": "int64"}, variant="empty"),
    Case("Cast", {"x": Rand(())}, {"DstT": "float16"}, variant="scalar", dtype="float64"),
    # Truncate=true drops the mantissa bits a narrower float cannot hold.
    Case("Cast", {"x": arr(1.0009765625 + 2 ** -12, 1.0 + 2 ** -11 + 2 ** -13, -1.7, 65519.0,
                           3.14159, 1e-8)},
         {"DstT": "float16", "Truncate": True}, variant="truncate_to_float16"),
    Case("Cast", {"x": arr(1.0 + 2 ** -24 + 2 ** -30, -1.0 - 2 ** -23 - 2 ** -26, 3.14159)},
         {"DstT": "float32", "Truncate": True}, variant="truncate_to_float32",
         dtype="float64"),
    Case("Cast", {"x": arr(300, -1, 70000, -70000)}, {"DstT": "int16", "Truncate": True},
         variant="truncate_int", dtype="int64"),
    # Strings: to a string is the input; to or from another type UNIMPLEMENTED.
    Case("Cast", {"x": np.array([b"1"])}, {"DstT": "int32"}, variant="to_int32",
         dtype="string"),
    Case("Cast", {"x": np.array([b"1", b""])}, {"DstT": "string"}, variant="to_string",
         dtype="string"),
    Case("Cast", {"x": arr(1, 2)}, {"DstT": "string"}, variant="to_string", dtype="int32"),
]
