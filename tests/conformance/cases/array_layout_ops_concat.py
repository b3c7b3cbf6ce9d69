"""Array layout ops (ops/array_layout_ops.cc), part 2: ConcatV2, Concat, ConcatOffset, Split,
SplitV, Pack, Unpack. Part 1 is array_layout_ops.py."""

import numpy as np

from conformance.cases.array_ops import ALL_DTYPES, FEW_DTYPES, grads_for, i32, i64, vals
from conformance.table import Case, Rand

CASES = []

# ---------------------------------------------------------------- ConcatV2, Concat, ConcatOffset

for dt in ALL_DTYPES:
    CASES.append(Case("ConcatV2", {"values": [vals((2, 3), dt), vals((2, 2), dt)],
                                   "axis": np.array(1, np.int32)}, dtype=dt, const=("axis",),
                      grad=grads_for(dt, "values")))
CASES += [
    Case("ConcatV2", {"values": [Rand((2, 3)), Rand((1, 3)), Rand((0, 3))],
                      "axis": np.array(0, np.int32)}, variant="axis0_with_empty", const=("axis",),
         dtype="float64", grad=("values",)),
    Case("ConcatV2", {"values": [Rand((2, 3)), Rand((2, 1))], "axis": np.array(-1, np.int32)},
         variant="neg_axis", const=("axis",), dtype="float64", grad=("values",)),
    Case("ConcatV2", {"values": [Rand((2, 3)), Rand((2, 1))], "axis": np.array(-1, np.int64)},
         variant="int64_axis", const=("axis",)),
    Case("ConcatV2", {"values": [Rand((2, 3)), Rand((2, 1))], "axis": np.array(1, np.int32)},
         variant="nonconst_axis", grad=("values",)),
    Case("ConcatV2", {"values": [Rand((2,)), Rand((3,)), Rand((1,)), Rand((2,))],
                      "axis": np.array(0, np.int32)}, variant="four_vectors", const=("axis",),
         grad=("values",)),
    Case("ConcatV2", {"values": [Rand((0, 2)), Rand((0, 3))], "axis": np.array(1, np.int32)},
         variant="all_empty", const=("axis",)),
    Case("ConcatV2", {"values": [Rand(()), Rand(())], "axis": np.array(0, np.int32)},
         variant="scalars", const=("axis",)),
    Case("ConcatV2", {"values": [Rand((2, 3)), Rand((3, 3))], "axis": np.array(1, np.int32)},
         variant="mismatch", const=("axis",)),
    Case("ConcatV2", {"values": [Rand((2, 3)), Rand((3,))], "axis": np.array(0, np.int32)},
         variant="rank_mismatch", const=("axis",)),
    Case("ConcatV2", {"values": [Rand((2, 3)), Rand((2, 3))], "axis": np.array(2, np.int32)},
         variant="axis_out_of_range", const=("axis",)),
    Case("ConcatV2", {"values": [Rand((2, 3)), Rand((2, 3))], "axis": np.array(-3, np.int32)},
         variant="neg_axis_out_of_range", const=("axis",)),
    Case("ConcatV2", {"values": [Rand((2, 3)), Rand((2, 3))], "axis": np.array(2, np.int32)},
         variant="nonconst_axis_out_of_range"),
    Case("ConcatV2", {"values": [Rand((2, 3)), Rand((3, 3))], "axis": np.array(1, np.int32)},
         variant="nonconst_mismatch"),
]
for dt in ("float32", "int32", "string"):
    CASES.append(Case("Concat", {"concat_dim": np.array(0, np.int32),
                                 "values": [vals((1, 2), dt), vals((2, 2), dt)]},
                      dtype=dt, const=("concat_dim",), grad=grads_for(dt, "values")))
CASES += [
    Case("Concat", {"concat_dim": np.array(-1, np.int32),
                    "values": [Rand((2, 1)), Rand((2, 3)), Rand((2, 0))]}, variant="neg_axis",
         const=("concat_dim",), dtype="float64", grad=("values",)),
    Case("Concat", {"concat_dim": np.array(1, np.int32), "values": [Rand((2, 1)), Rand((3, 3))]},
         variant="mismatch", const=("concat_dim",)),
    Case("Concat", {"concat_dim": np.array(2, np.int32), "values": [Rand((2, 1)), Rand((2, 3))]},
         variant="axis_out_of_range", const=("concat_dim",)),
]
for dt, mk in (("int32", i32), ("int64", i64)):
    CASES += [
        Case("ConcatOffset", {"concat_dim": np.array(1, np.int32),
                              "shape": [mk(2, 3, 4), mk(2, 5, 4), mk(2, 0, 4)]}, dtype=dt),
        Case("ConcatOffset", {"concat_dim": np.array(-1, np.int32),
                              "shape": [mk(2, 3), mk(2, 5)]}, variant="neg_axis", dtype=dt),
    ]
CASES += [
    Case("ConcatOffset", {"concat_dim": np.array(0, np.int32), "shape": [i32(3), i32(5)]},
         variant="vectors", dtype="int32"),
    Case("ConcatOffset", {"concat_dim": np.array(1, np.int32), "shape": [i32(2, 3), i32(3, 5)]},
         variant="mismatch", dtype="int32"),
    Case("ConcatOffset", {"concat_dim": np.array(1, np.int32), "shape": [i32(2, 3), i32(2, 3, 1)]},
         variant="rank_mismatch", dtype="int32"),
    Case("ConcatOffset", {"concat_dim": np.array(2, np.int32), "shape": [i32(2, 3), i32(2, 3)]},
         variant="axis_out_of_range", dtype="int32"),
    Case("ConcatOffset", {"concat_dim": np.array(1, np.int32),
                          "shape": [np.array([[2, 3]], np.int32), np.array([[2, 3]], np.int32)]},
         variant="not_vector", dtype="int32"),
]

# ---------------------------------------------------------------- Split, SplitV

for dt in FEW_DTYPES:
    CASES.append(Case("Split", {"split_dim": np.array(1, np.int32), "value": vals((2, 4), dt)},
                      {"num_split": 2}, dtype=dt, const=("split_dim",),
                      grad=grads_for(dt, "value")))
CASES += [
    Case("Split", {"split_dim": np.array(-2, np.int32), "value": Rand((4, 3))},
         {"num_split": 2}, variant="neg_dim", const=("split_dim",), dtype="float64",
         grad=("value",)),
    Case("Split", {"split_dim": np.array(0, np.int32), "value": Rand((3,))}, {"num_split": 1},
         variant="one", const=("split_dim",), dtype="float64", grad=("value",)),
    Case("Split", {"split_dim": np.array(0, np.int32), "value": Rand((0, 4))}, {"num_split": 2},
         variant="empty", const=("split_dim",)),
    Case("Split", {"split_dim": np.array(1, np.int32), "value": Rand((2, 6))}, {"num_split": 2},
         variant="nonconst_dim", grad=("value",)),
    Case("Split", {"split_dim": np.array(1, np.int32), "value": Rand((2, 5))}, {"num_split": 3},
         variant="uneven", const=("split_dim",)),
    Case("Split", {"split_dim": np.array(1, np.int32), "value": Rand((2, 5))}, {"num_split": 3},
         variant="nonconst_uneven"),
    Case("Split", {"split_dim": np.array(2, np.int32), "value": Rand((2, 6))}, {"num_split": 2},
         variant="dim_out_of_range", const=("split_dim",)),
    Case("Split", {"split_dim": np.array(0, np.int32), "value": Rand(())}, {"num_split": 1},
         variant="scalar", const=("split_dim",)),
    Case("Split", {"split_dim": np.array(1, np.int32), "value": Rand((2, 6))}, {"num_split": 0},
         variant="zero_splits", const=("split_dim",)),
]
for dt in FEW_DTYPES:
    CASES.append(Case("SplitV", {"value": vals((2, 3), dt), "size_splits": i64(-1, 1),
                                 "split_dim": np.array(1, np.int32)}, {"num_split": 2},
                      dtype=dt, const=("size_splits", "split_dim"),
                      grad=grads_for(dt, "value")))
CASES += [
    Case("SplitV", {"value": Rand((5, 2)), "size_splits": i32(1, 4),
                    "split_dim": np.array(0, np.int32)}, {"num_split": 2}, variant="int32_sizes",
         const=("size_splits", "split_dim"), dtype="float64", grad=("value",)),
    # int8 sizes fed: TF 2.15's shape function aborts on a constant int8 size_splits (it reads
    # it as int64: a CHECK in Tensor), so only the kernel is compared.
    Case("SplitV", {"value": Rand((5, 2)), "size_splits": np.array([3, 0, 2], np.int8),
                    "split_dim": np.array(-2, np.int32)}, {"num_split": 3},
         variant="int8_sizes_zero", const=("split_dim",), dtype="float64", grad=("value",)),
    Case("SplitV", {"value": Rand((2, 7)), "size_splits": i64(2, -1, 1),
                    "split_dim": np.array(1, np.int32)}, {"num_split": 3},
         variant="nonconst_sizes", const=("split_dim",), grad=("value",)),
    Case("SplitV", {"value": Rand((2, 7)), "size_splits": i64(2, 4, 1),
                    "split_dim": np.array(1, np.int32)}, {"num_split": 3},
         variant="nonconst_dim", const=("size_splits",),
         deviation="TF 2.15's SplitV shape function reads an unknown split_dim as -1, the last "
                   "axis (here it happens to be right); TensorFlux infers rank-only shapes"),
    Case("SplitV", {"value": Rand((3, 7)), "size_splits": i64(1, 1, 1),
                    "split_dim": np.array(0, np.int32)}, {"num_split": 3},
         variant="nonconst_dim_not_last", const=("size_splits",),
         deviation="TF 2.15 refuses this valid graph at construction: its SplitV shape function "
                   "reads the unknown split_dim as -1 and checks the last axis (7) against the "
                   "sizes [1,1,1]; TensorFlux builds and runs it"),
    Case("SplitV", {"value": Rand((2, 7)), "size_splits": i64(2, 4),
                    "split_dim": np.array(1, np.int32)}, {"num_split": 2},
         variant="bad_sum", const=("size_splits", "split_dim")),
    Case("SplitV", {"value": Rand((2, 7)), "size_splits": i64(2, 4),
                    "split_dim": np.array(1, np.int32)}, {"num_split": 2},
         variant="nonconst_bad_sum", const=("split_dim",)),
    Case("SplitV", {"value": Rand((2, 7)), "size_splits": i64(-1, -1, 1),
                    "split_dim": np.array(1, np.int32)}, {"num_split": 3},
         variant="two_unknown", const=("size_splits", "split_dim")),
    Case("SplitV", {"value": Rand((2, 7)), "size_splits": i64(9, -1),
                    "split_dim": np.array(1, np.int32)}, {"num_split": 2},
         variant="negative_inferred", const=("size_splits", "split_dim")),
    Case("SplitV", {"value": Rand((2, 7)), "size_splits": i64(8, -2, 1),
                    "split_dim": np.array(1, np.int32)}, {"num_split": 3},
         variant="negative_size", const=("size_splits", "split_dim")),
    Case("SplitV", {"value": Rand((2, 7)), "size_splits": i64(3, 4),
                    "split_dim": np.array(1, np.int32)}, {"num_split": 3},
         variant="num_split_mismatch", const=("size_splits", "split_dim")),
    Case("SplitV", {"value": Rand((2, 7)), "size_splits": i64(3, 4),
                    "split_dim": np.array(3, np.int32)}, {"num_split": 2},
         variant="dim_out_of_range", const=("size_splits", "split_dim")),
]

# ---------------------------------------------------------------- Pack, Unpack

for dt in ALL_DTYPES:
    CASES.append(Case("Pack", {"values": [vals((2, 3), dt), vals((2, 3), dt)]}, dtype=dt,
                      grad=grads_for(dt, "values")))
CASES += [
    Case("Pack", {"values": [Rand((2, 3)), Rand((2, 3)), Rand((2, 3))]}, {"axis": 1},
         variant="axis1", dtype="float64", grad=("values",)),
    Case("Pack", {"values": [Rand((2, 3)), Rand((2, 3))]}, {"axis": -1}, variant="neg_axis",
         dtype="float64", grad=("values",)),
    Case("Pack", {"values": [Rand((2,)), Rand((2,))]}, {"axis": -2}, variant="neg_axis_first"),
    Case("Pack", {"values": [Rand(()), Rand(()), Rand(())]}, variant="scalars",
         dtype="float64", grad=("values",)),
    Case("Pack", {"values": [Rand((3,))]}, variant="one", grad=("values",)),
    Case("Pack", {"values": [Rand((0, 2)), Rand((0, 2))]}, {"axis": 1}, variant="empty"),
    Case("Pack", {"values": [Rand((2, 3)), Rand((3, 2))]}, variant="mismatch"),
    Case("Pack", {"values": [Rand((2, 3)), Rand((2, 3))]}, {"axis": 3},
         variant="axis_out_of_range"),
    Case("Pack", {"values": [Rand((2, 3)), Rand((2, 3))]}, {"axis": -4},
         variant="neg_axis_out_of_range"),
]
for dt in FEW_DTYPES:
    CASES.append(Case("Unpack", {"value": vals((2, 3), dt)}, {"num": 2}, dtype=dt,
                      grad=grads_for(dt, "value")))
CASES += [
    Case("Unpack", {"value": Rand((3, 2, 2))}, {"num": 2, "axis": 1}, variant="axis1",
         dtype="float64", grad=("value",)),
    Case("Unpack", {"value": Rand((3, 2))}, {"num": 2, "axis": -1}, variant="neg_axis",
         dtype="float64", grad=("value",)),
    Case("Unpack", {"value": Rand((4,))}, {"num": 4}, variant="vector", dtype="float64",
         grad=("value",)),
    Case("Unpack", {"value": Rand((2, 0))}, {"num": 2}, variant="empty_rows"),
    Case("Unpack", {"value": Rand((0, 2))}, {"num": 0}, variant="zero"),
    Case("Unpack", {"value": Rand((3, 2))}, {"num": 2}, variant="num_mismatch"),
    Case("Unpack", {"value": Rand((3, 2))}, {"num": 3, "axis": 2}, variant="axis_out_of_range"),
    Case("Unpack", {"value": Rand(())}, {"num": 1}, variant="scalar"),
]
