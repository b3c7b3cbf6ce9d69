"""Reductions (ops/reduction_ops.cc): Sum, Mean, Prod, Max, Min over numbers, All, Any over
bools, ArgMax, ArgMin.

Per op: every dtype, keep_dims, negative, several, all, no and duplicate axes, a scalar axis,
int64 axes, axes only known when the graph runs (a placeholder: the static shape is then
unknown), empty inputs (the reduction's identity), edge values (NaN, inf, integer min/max:
integer sums and products wrap), errors (an axis out of range), and gradients."""

import numpy as np

from conformance.table import FLOAT_DTYPES, INT_DTYPES, Case, Rand, Special

F = FLOAT_DTYPES
I = INT_DTYPES
ALL_REAL = F + I


def ax(*a, dtype=np.int32):
    return np.array(a, dtype=dtype)


def ints(*vals):
    return lambda dt: np.array(vals, dtype=dt)


def ones(*shape):
    return lambda dt: np.ones(shape, dtype=dt)


AX = "reduction_indices"
CONST = (AX,)
CASES = []

# ---------------------------------------------------------------- Sum, Mean, Prod, Max, Min

REDUCE = ("Sum", "Mean", "Prod", "Max", "Min")
HAS_GRAD = ("Sum", "Mean", "Max", "Min")  # TensorFlux registers no gradient for Prod

for op in REDUCE:
    g = ("input",) if op in HAS_GRAD else ()
    for dt in ALL_REAL:
        if dt in F:
            CASES.append(Case(op, {"input": Rand((2, 3)), AX: ax(1)}, variant="axis1",
                              dtype=dt, const=CONST, grad=g))
        # Edge values: NaN propagates, infinities, integer sums and products wrap.
        CASES.append(Case(op, {"input": Special(shape=(2, 7) if dt in F else (2, 5)),
                               AX: ax(1)}, variant="specials", dtype=dt, const=CONST))
        # The empty reduction: Sum 0, Prod 1, Max lowest, Min highest, Mean NaN (int 0).
        CASES.append(Case(op, {"input": Rand((0, 3)), AX: ax(0)}, variant="empty", dtype=dt,
                          const=CONST))
    CASES += [
        Case(op, {"input": Rand((2, 3, 2)), AX: ax(0, 2)}, variant="axes02", dtype="float64",
             const=CONST, grad=g),
        Case(op, {"input": Rand((2, 3, 2)), AX: ax(-1)}, variant="negative_axis",
             dtype="float64", const=CONST, grad=g),
        Case(op, {"input": Rand((2, 3, 2)), AX: ax(-3, 1)}, {"keep_dims": True},
             variant="keep_dims", dtype="float64", const=CONST, grad=g),
        Case(op, {"input": Rand((2, 3)), AX: ax(0, 1)}, variant="all_axes", dtype="float64",
             const=CONST, grad=g),
        Case(op, {"input": Rand((2, 3)), AX: ax(0, 1)}, {"keep_dims": True},
             variant="all_axes_keep_dims", dtype="float32", const=CONST, grad=g),
        Case(op, {"input": Rand((2, 3)), AX: np.array(1, np.int32)}, variant="scalar_axis",
             dtype="float32", const=CONST, grad=g),
        Case(op, {"input": Rand((2, 3)), AX: np.zeros((0,), np.int32)}, variant="no_axes",
             dtype="float64", const=CONST, grad=g),
        Case(op, {"input": Rand((2, 3)), AX: np.zeros((0,), np.int32)}, {"keep_dims": True},
             variant="no_axes_keep_dims", dtype="float32", const=CONST),
        Case(op, {"input": Rand(()), AX: np.zeros((0,), np.int32)}, variant="scalar_input",
             dtype="float64", const=CONST, grad=g),
        Case(op, {"input": Rand((2, 3, 2)), AX: ax(2, 0, dtype=np.int64)},
             variant="int64_axes", dtype="float32", const=CONST, grad=g),
        # Axes fed at run time: the static shape is unknown (rank too, without keep_dims).
        Case(op, {"input": Rand((2, 3, 2)), AX: ax(1, -1)}, variant="fed_axes",
             dtype="float64", grad=g),
        Case(op, {"input": Rand((2, 3, 2)), AX: ax(1)}, {"keep_dims": True},
             variant="fed_axes_keep_dims", dtype="float32", grad=g),
        # Empty inputs: reducing the empty dim, or another one (an empty output).
        Case(op, {"input": Rand((0, 3)), AX: ax(1)}, variant="empty_other_axis",
             dtype="float32", const=CONST, grad=g),
        Case(op, {"input": Rand((3, 0)), AX: ax(1)}, {"keep_dims": True},
             variant="empty_keep_dims", dtype="float32", const=CONST, grad=g),
        # Errors: an axis out of range (known when built, or only when run), duplicate axes.
        Case(op, {"input": Rand((2, 3)), AX: ax(2)}, variant="axis_out_of_range",
             const=CONST),
        Case(op, {"input": Rand((2, 3)), AX: ax(-3)}, variant="fed_axis_out_of_range"),
        Case(op, {"input": Rand(()), AX: ax(0)}, variant="scalar_input_axis", const=CONST),
        Case(op, {"input": Rand((2, 3)), AX: ax(1, 1)}, variant="duplicate_axes", const=CONST),
        Case(op, {"input": Rand((2, 3)), AX: ax(1, -1)}, variant="fed_duplicate_axes"),
        Case(op, {"input": Rand((2, 3)), AX: ax(1, dtype=np.float32)},
             variant="float_axes", const=CONST),
        Case(op, {"input": Rand((2, 3)), AX: np.array([[1]], np.int32)},
             variant="matrix_axes", const=CONST),
        Case(op, {"input": np.array([[True, False]]), AX: ax(1)}, variant="bool",
             dtype="bool", const=CONST),
    ]

# Integer means: the sum must not wrap (256 uint8 ones average 1), division truncates.
for dt in ("uint8", "int8", "int16", "int32", "uint64"):
    CASES.append(Case("Mean", {"input": ones(256), AX: ax(0)}, variant="no_wrap", dtype=dt,
                      const=CONST))
CASES += [
    Case("Mean", {"input": ints(-3, -4, 5, 6, -7, 2), AX: ax(0)}, variant="truncates",
         dtype="int32", const=CONST),
    Case("Mean", {"input": lambda dt: np.full((2, 2), np.iinfo(dt).max, dt), AX: ax(0, 1)},
         variant="max_values", dtype="int64", const=CONST),
    Case("Mean", {"input": lambda dt: np.full((3,), np.iinfo(dt).min, dt), AX: ax(0)},
         variant="min_values", dtype="int32", const=CONST),
    Case("Sum", {"input": ones(300), AX: ax(0)}, variant="wraps", dtype="uint8", const=CONST),
    Case("Mean", {"input": lambda dt: np.full((4,), 60000, dt), AX: ax(0)},
         variant="no_wrap_values", dtype="uint16", const=CONST),
]
# Max/Min gradients at ties: TF splits the gradient evenly among the tied extremes.
for op in ("Max", "Min"):
    CASES.append(Case(op, {"input": ints(1.0, 3.0, 3.0, -1.0, -1.0, 0.5), AX: ax(0)},
                      variant="ties", dtype="float64", const=CONST, grad=("input",), fd=False))
# Sums of float16 accumulate in float32 (the result is rounded once).
CASES.append(Case("Sum", {"input": lambda dt: np.full((64,), 0.1, dt), AX: ax(0)},
                  variant="accumulate", dtype="float16", const=CONST))
CASES.append(Case("Mean", {"input": lambda dt: np.full((64,), 1000.5, dt), AX: ax(0)},
                  variant="accumulate", dtype="float16", const=CONST))

# ---------------------------------------------------------------- All, Any

for op in ("All", "Any"):
    CASES += [
        Case(op, {"input": Rand((3, 4)), AX: ax(1)}, variant="axis1", dtype="bool",
             const=CONST),
        Case(op, {"input": Rand((2, 3, 2)), AX: ax(-1, 0)}, {"keep_dims": True},
             variant="keep_dims", dtype="bool", const=CONST),
        Case(op, {"input": Special(shape=(2, 2), dtype="bool"), AX: ax(0, 1)},
             variant="all_axes", dtype="bool", const=CONST),
        Case(op, {"input": Rand((2, 3)), AX: np.zeros((0,), np.int64)}, variant="no_axes",
             dtype="bool", const=CONST),
        Case(op, {"input": Rand((0, 3)), AX: ax(0)}, variant="empty", dtype="bool",
             const=CONST),
        Case(op, {"input": Rand((2, 3)), AX: ax(1)}, variant="fed_axes", dtype="bool"),
        Case(op, {"input": Rand((2, 3)), AX: ax(-3)}, variant="axis_out_of_range",
             dtype="bool", const=CONST),
        Case(op, {"input": Rand((2, 3)), AX: ax(1)}, variant="float", dtype="float32",
             const=CONST),
    ]
# All true / all false rows.
CASES += [
    Case("All", {"input": np.array([[True, True], [True, False], [False, False]]),
                 AX: ax(1)}, variant="rows", dtype="bool", const=CONST),
    Case("Any", {"input": np.array([[True, True], [True, False], [False, False]]),
                 AX: ax(1)}, variant="rows", dtype="bool", const=CONST),
]

# ---------------------------------------------------------------- ArgMax, ArgMin

DIM = "dimension"
for op in ("ArgMax", "ArgMin"):
    for dt in ALL_REAL:
        if dt in F:
            CASES.append(Case(op, {"input": Rand((3, 4)), DIM: np.array(1, np.int32)},
                              variant="axis1", dtype=dt, const=(DIM,)))
        # Edge values along axis 0; ties go to the first index.
        CASES.append(Case(op, {"input": Special(shape=(7, 2) if dt in F else (5, 2)),
                               DIM: np.array(0, np.int32)}, variant="specials", dtype=dt,
                          const=(DIM,)))
    CASES += [
        Case(op, {"input": Rand((2, 3, 2)), DIM: np.array(-1, np.int32)},
             {"output_type": "int32"}, variant="negative_dim_int32", const=(DIM,)),
        Case(op, {"input": Rand((2, 3, 2)), DIM: np.array(1, np.int64)},
             variant="int64_dim", dtype="float64", const=(DIM,)),
        Case(op, {"input": Rand((4,)), DIM: np.array(0, np.int32)}, variant="vector",
             dtype="float32", const=(DIM,)),
        Case(op, {"input": ints(2, 5, 5, 1, 1, 2), DIM: np.array(0, np.int32)},
             variant="ties", dtype="int32", const=(DIM,)),
        Case(op, {"input": ints(1.0, np.nan, 3.0, -1.0), DIM: np.array(0, np.int32)},
             variant="nan", dtype="float32", const=(DIM,)),
        Case(op, {"input": Rand((2, 3)), DIM: np.array(1, np.int32)}, variant="fed_dim",
             dtype="float32"),
        Case(op, {"input": Rand((3, 0)), DIM: np.array(0, np.int32)},
             variant="empty_output", dtype="float32", const=(DIM,)),
        # Errors: reducing an empty dim, a dim out of range, a scalar input, a vector dim.
        Case(op, {"input": Rand((0, 3)), DIM: np.array(0, np.int32)}, variant="empty_dim",
             const=(DIM,)),
        Case(op, {"input": Rand((2, 3)), DIM: np.array(2, np.int32)},
             variant="dim_out_of_range", const=(DIM,)),
        Case(op, {"input": Rand((2, 3)), DIM: np.array(-3, np.int32)},
             variant="fed_dim_out_of_range"),
        Case(op, {"input": Rand(()), DIM: np.array(0, np.int32)}, variant="scalar_input",
             const=(DIM,)),
        Case(op, {"input": Rand((2, 3)), DIM: np.array([0, 1], np.int32)},
             variant="vector_dim", const=(DIM,)),
    ]
