"""Array layout ops (ops/array_layout_ops.cc), part 1: Transpose, InvertPermutation,
ExpandDims, Squeeze, Tile, Pad, PadV2, BroadcastTo, BroadcastGradientArgs, ShapeN, StopGradient.
Part 2, concatenation, splitting and stacking, is array_layout_ops_concat.py (one family file
would hold more reference data than the table's budget per family)."""

import numpy as np

from conformance.cases.array_ops import ALL_DTYPES, FEW_DTYPES, grads_for, i32, i64, vals
from conformance.table import Case, Rand, Special

CASES = []

# ---------------------------------------------------------------- Transpose

for dt in ALL_DTYPES:
    CASES.append(Case("Transpose", {"x": vals((2, 3, 4), dt), "perm": i32(2, 0, 1)}, dtype=dt,
                      const=("perm",), grad=grads_for(dt, "x")))
CASES += [
    Case("Transpose", {"x": Rand((2, 3)), "perm": i64(1, 0)}, variant="int64_perm",
         const=("perm",), dtype="float64", grad=("x",)),
    Case("Transpose", {"x": Rand((2, 3, 2)), "perm": i32(0, 1, 2)}, variant="identity_perm",
         const=("perm",), dtype="float64", grad=("x",)),
    Case("Transpose", {"x": Rand((2, 1, 3, 2)), "perm": i32(3, 1, 0, 2)}, variant="rank4",
         const=("perm",), dtype="float64", grad=("x",)),
    Case("Transpose", {"x": Rand((2, 3, 4)), "perm": i32(1, 2, 0)}, variant="nonconst_perm",
         grad=("x",)),
    Case("Transpose", {"x": Rand(()), "perm": i32()}, variant="scalar", const=("perm",)),
    Case("Transpose", {"x": Rand((0, 3)), "perm": i32(1, 0)}, variant="empty", const=("perm",),
         grad=("x",)),
    Case("Transpose", {"x": Special(shape=(2, 7)), "perm": i32(1, 0)}, variant="specials",
         const=("perm",)),
    Case("Transpose", {"x": Rand((2, 3, 4)), "perm": i32(0, 0, 1)}, variant="duplicate_perm",
         const=("perm",)),
    Case("Transpose", {"x": Rand((2, 3, 4)), "perm": i32(0, 1, 3)}, variant="perm_out_of_range",
         const=("perm",)),
    # No negative perm entry: TF 2.15 aborts on one (a CHECK in TensorShape, both in the shape
    # function and in the kernel), so there is no reference; TensorFlux refuses it (unit tests).
    Case("Transpose", {"x": Rand((2, 3, 4)), "perm": i32(1, 0)}, variant="perm_wrong_length",
         const=("perm",)),
    Case("Transpose", {"x": Rand((2, 3, 4)), "perm": i32(2, 2, 0)},
         variant="nonconst_duplicate_perm"),
    Case("Transpose", {"x": Rand((2, 3, 4)), "perm": i32(1, 0)},
         variant="nonconst_perm_wrong_length"),
]

# ---------------------------------------------------------------- InvertPermutation

for dt, mk in (("int32", i32), ("int64", i64)):
    CASES += [
        Case("InvertPermutation", {"x": mk(2, 0, 3, 1, 4)}, dtype=dt),
        Case("InvertPermutation", {"x": mk()}, variant="empty", dtype=dt),
        Case("InvertPermutation", {"x": mk(0, 0, 1)}, variant="duplicate", dtype=dt),
        Case("InvertPermutation", {"x": mk(0, 5, 1)}, variant="out_of_range", dtype=dt),
        Case("InvertPermutation", {"x": mk(0, -1, 1)}, variant="negative", dtype=dt),
    ]
CASES += [
    Case("InvertPermutation", {"x": np.array([[1, 0]], np.int32)}, variant="not_vector",
         dtype="int32"),
    Case("InvertPermutation", {"x": np.array([1, 0], np.float32)}, variant="float"),
]

# ---------------------------------------------------------------- ExpandDims, Squeeze

for dt in FEW_DTYPES:
    CASES.append(Case("ExpandDims", {"input": vals((2, 3), dt), "dim": np.array(1, np.int32)},
                      dtype=dt, const=("dim",), grad=grads_for(dt, "input")))
CASES += [
    Case("ExpandDims", {"input": Rand((2, 3)), "dim": np.array(-1, np.int32)},
         variant="neg_dim", const=("dim",), dtype="float64", grad=("input",)),
    Case("ExpandDims", {"input": Rand((2, 3)), "dim": np.array(-3, np.int64)},
         variant="int64_neg_first", const=("dim",)),
    Case("ExpandDims", {"input": Rand((2, 3)), "dim": np.array(2, np.int32)}, variant="last",
         const=("dim",)),
    Case("ExpandDims", {"input": Rand(()), "dim": np.array(0, np.int32)}, variant="scalar",
         const=("dim",), dtype="float64", grad=("input",)),
    Case("ExpandDims", {"input": Rand((0, 2)), "dim": np.array(0, np.int32)}, variant="empty",
         const=("dim",)),
    Case("ExpandDims", {"input": Rand((2, 3)), "dim": i32(1)}, variant="dim_vector",
         const=("dim",)),
    Case("ExpandDims", {"input": Rand((2, 3)), "dim": np.array(1, np.int32)},
         variant="nonconst_dim", grad=("input",)),
    Case("ExpandDims", {"input": Rand((2, 3)), "dim": np.array(3, np.int32)},
         variant="dim_out_of_range", const=("dim",)),
    Case("ExpandDims", {"input": Rand((2, 3)), "dim": np.array(-4, np.int32)},
         variant="neg_dim_out_of_range", const=("dim",)),
    Case("ExpandDims", {"input": Rand((2, 3)), "dim": np.array(3, np.int32)},
         variant="nonconst_dim_out_of_range"),
    Case("ExpandDims", {"input": Rand((2, 3)), "dim": i32(0, 1)}, variant="dim_two_values",
         const=("dim",)),
]
for dt in FEW_DTYPES:
    CASES.append(Case("Squeeze", {"input": vals((1, 2, 1, 3), dt)}, dtype=dt,
                      grad=grads_for(dt, "input")))
CASES += [
    Case("Squeeze", {"input": Rand((1, 2, 1, 3))}, {"squeeze_dims": [2]}, variant="dims",
         dtype="float64", grad=("input",)),
    Case("Squeeze", {"input": Rand((1, 2, 1, 3))}, {"squeeze_dims": [-4, -2]},
         variant="neg_dims", dtype="float64", grad=("input",)),
    Case("Squeeze", {"input": Rand((1, 1))}, variant="to_scalar", grad=("input",)),
    Case("Squeeze", {"input": Rand(())}, variant="scalar"),
    Case("Squeeze", {"input": Rand((0, 1, 2))}, variant="empty"),
    Case("Squeeze", {"input": Rand((2, 3))}, variant="nothing"),
    Case("Squeeze", {"input": Rand((1, 2, 1, 3))}, {"squeeze_dims": [1]}, variant="not_one"),
    Case("Squeeze", {"input": Rand((1, 2, 1, 3))}, {"squeeze_dims": [4]},
         variant="out_of_range"),
    Case("Squeeze", {"input": Rand((1, 2, 1, 3))}, {"squeeze_dims": [-5]},
         variant="neg_out_of_range"),
]

# ---------------------------------------------------------------- Tile

for dt in ALL_DTYPES:
    CASES.append(Case("Tile", {"input": vals((2, 3), dt), "multiples": i32(2, 1)}, dtype=dt,
                      const=("multiples",), grad=grads_for(dt, "input"),
                      deviation=None if dt != "uint16" else
                      "TF 2.15 has no CPU Tile kernel for uint16 (UnimplementedError); "
                      "TensorFlux's dtype-generic kernel tiles it"))
CASES += [
    Case("Tile", {"input": Rand((2, 1, 2)), "multiples": i64(1, 3, 2)}, variant="int64",
         const=("multiples",), dtype="float64", grad=("input",)),
    Case("Tile", {"input": Rand((2, 3)), "multiples": i32(2, 3)}, variant="half_grad",
         const=("multiples",), dtype="float16", grad=("input",)),
    Case("Tile", {"input": Rand((2, 3)), "multiples": i32(0, 2)}, variant="zero_multiple",
         const=("multiples",), grad=("input",)),
    Case("Tile", {"input": Rand((0, 3)), "multiples": i32(3, 2)}, variant="empty",
         const=("multiples",)),
    Case("Tile", {"input": Rand(()), "multiples": i32()}, variant="scalar",
         const=("multiples",)),
    Case("Tile", {"input": Rand((2, 3)), "multiples": i32(2, 2)}, variant="nonconst_multiples",
         dtype="float64", grad=("input",)),
    Case("Tile", {"input": Rand((2, 3)), "multiples": i32(-1, 2)}, variant="negative",
         const=("multiples",)),
    Case("Tile", {"input": Rand((2, 3)), "multiples": i32(-1, 2)}, variant="nonconst_negative"),
    Case("Tile", {"input": Rand((2, 3)), "multiples": i32(2)}, variant="wrong_length",
         const=("multiples",)),
    Case("Tile", {"input": Rand((2, 3)), "multiples": i32(2)},
         variant="nonconst_wrong_length"),
]

# ---------------------------------------------------------------- Pad, PadV2

PADS = np.array([[1, 0], [2, 1]], np.int32)
for dt in ALL_DTYPES:
    CASES.append(Case("Pad", {"input": vals((2, 3), dt), "paddings": PADS}, dtype=dt,
                      const=("paddings",), grad=grads_for(dt, "input")))
for dt in FEW_DTYPES:
    CASES.append(Case("PadV2", {"input": vals((2, 3), dt), "paddings": PADS,
                                "constant_values": vals((), dt)}, dtype=dt,
                      const=("paddings",), grad=grads_for(dt, "input")))
for op in ("Pad", "PadV2"):
    extra = {"constant_values": Rand(())} if op == "PadV2" else {}
    CASES += [
        Case(op, {"input": Rand((2, 1, 2)), "paddings": np.array([[0, 1], [1, 1], [2, 0]],
                                                                 np.int64), **extra},
             variant="int64", const=("paddings",), dtype="float64", grad=("input",)),
        Case(op, {"input": Rand((2, 3)), "paddings": PADS, **extra}, variant="nonconst_paddings",
             dtype="float64", grad=("input",)),
        Case(op, {"input": Rand(()), "paddings": np.zeros((0, 2), np.int32), **extra},
             variant="scalar", const=("paddings",)),
        Case(op, {"input": Rand((0, 2)), "paddings": PADS, **extra}, variant="empty",
             const=("paddings",)),
        Case(op, {"input": Rand((2, 3)), "paddings": np.array([[-1, 0], [0, 0]], np.int32),
                  **extra}, variant="negative", const=("paddings",)),
        Case(op, {"input": Rand((2, 3)), "paddings": np.array([[-1, 0], [0, 0]], np.int32),
                  **extra}, variant="nonconst_negative"),
        Case(op, {"input": Rand((2, 3)), "paddings": np.array([[1, 1]], np.int32), **extra},
             variant="wrong_rank", const=("paddings",)),
        Case(op, {"input": Rand((2, 3)), "paddings": np.array([1, 1, 1, 1], np.int32),
                  **extra}, variant="not_matrix", const=("paddings",)),
    ]
CASES += [
    Case("PadV2", {"input": Rand((2, 3)), "paddings": PADS, "constant_values": Rand(())},
         variant="constant_values_grad", const=("paddings",), dtype="float64",
         grad=("input", "constant_values"),
         deviation="TensorFlux differentiates constant_values (the sum of the padding's incoming "
                   "gradient); TF's PadV2 gradient returns None for it"),
    Case("PadV2", {"input": Rand((2, 3)), "paddings": PADS, "constant_values": Rand((1,))},
         variant="constant_not_scalar", const=("paddings",)),
    Case("PadV2", {"input": Rand((1, 2)), "paddings": PADS,
                   "constant_values": np.array(np.nan, np.float32)}, variant="nan_constant",
         const=("paddings",)),
]

# ---------------------------------------------------------------- BroadcastTo

for dt in FEW_DTYPES:
    CASES.append(Case("BroadcastTo", {"input": vals((3,), dt), "shape": i32(2, 3)}, dtype=dt,
                      const=("shape",), grad=grads_for(dt, "input")))
CASES += [
    Case("BroadcastTo", {"input": Rand((2, 1)), "shape": i64(3, 2, 4)}, variant="int64_rank_up",
         const=("shape",), dtype="float64", grad=("input",)),
    Case("BroadcastTo", {"input": Rand((3, 1)), "shape": i32(2, 3, 4)}, variant="half_grad",
         const=("shape",), dtype="float16", grad=("input",)),
    Case("BroadcastTo", {"input": Rand(()), "shape": i32(2, 2)}, variant="scalar",
         const=("shape",), dtype="float64", grad=("input",)),
    Case("BroadcastTo", {"input": Rand((2, 3)), "shape": i32(2, 3)}, variant="same",
         const=("shape",), grad=("input",)),
    Case("BroadcastTo", {"input": Rand((1, 3)), "shape": i32(0, 3)}, variant="to_empty",
         const=("shape",)),
    Case("BroadcastTo", {"input": Rand((2, 1)), "shape": i32(2, 3)}, variant="nonconst_shape",
         dtype="float64", grad=("input",)),
    Case("BroadcastTo", {"input": Rand((3,)), "shape": i32(2, 4)}, variant="incompatible",
         const=("shape",)),
    Case("BroadcastTo", {"input": Rand((3,)), "shape": i32(2, 4)},
         variant="nonconst_incompatible"),
    Case("BroadcastTo", {"input": Rand((2, 3)), "shape": i32(3)}, variant="rank_down",
         const=("shape",)),
    Case("BroadcastTo", {"input": Rand((2, 3)), "shape": i32(3)},
         variant="nonconst_rank_down"),
    Case("BroadcastTo", {"input": Rand((2, 1, 3)), "shape": i32(4, 2, 5, 3)},
         variant="nonconst_partial", grad=("input",)),
    Case("BroadcastTo", {"input": Rand((2, 3)), "shape": i32(-1, 3)}, variant="negative",
         const=("shape",)),
]

# ---------------------------------------------------------------- BroadcastGradientArgs, ShapeN

for dt, mk in (("int32", i32), ("int64", i64)):
    CASES += [
        Case("BroadcastGradientArgs", {"s0": mk(2, 3, 1), "s1": mk(3, 4)}, dtype=dt),
        Case("BroadcastGradientArgs", {"s0": mk(2, 3), "s1": mk(4)}, variant="incompatible",
             dtype=dt),
    ]
CASES += [
    Case("BroadcastGradientArgs", {"s0": i32(), "s1": i32(2, 3)}, variant="scalar",
         dtype="int32"),
    Case("BroadcastGradientArgs", {"s0": i32(2, 3), "s1": i32(2, 3)}, variant="same",
         dtype="int32"),
    Case("BroadcastGradientArgs", {"s0": i32(1, 1), "s1": i32(1)}, variant="ones",
         dtype="int32"),
    Case("BroadcastGradientArgs", {"s0": i64(2, 0, 1), "s1": i64(1, 5)}, variant="zero",
         dtype="int64"),
    Case("BroadcastGradientArgs", {"s0": i32(2, 3), "s1": i32(1, 3)}, variant="const",
         const=("s0", "s1"), dtype="int32"),
]
for dt in ("float32", "string"):
    CASES.append(Case("ShapeN", {"input": [vals((2, 3), dt), vals((), dt), vals((0, 4, 1), dt)]},
                      dtype=dt))
CASES += [
    Case("ShapeN", {"input": [Rand((2, 3)), Rand((5,))]}, {"out_type": "int64"},
         variant="int64"),
    Case("ShapeN", {"input": [Rand((2, 3))]}, variant="one"),
]

# ---------------------------------------------------------------- StopGradient

for dt in FEW_DTYPES:
    CASES.append(Case("StopGradient", {"input": vals((2, 3), dt)}, dtype=dt,
                      grad=grads_for(dt, "input")))
CASES += [
    Case("StopGradient", {"input": Special()}, variant="specials"),
    Case("StopGradient", {"input": Rand(())}, variant="scalar"),
    Case("StopGradient", {"input": Rand((0, 3))}, variant="empty"),
]
