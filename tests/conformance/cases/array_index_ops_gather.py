"""Array ops that select or place elements by index (ops/array_index_ops.cc), part 2: GatherV2
(axis, batch_dims), Gather, GatherNd, ScatterNd, DynamicStitch, UnsortedSegmentSum. Part 1 is
array_index_ops.py.

Out-of-range indices: TF's CPU kernels refuse them (InvalidArgumentError); TensorFlux must refuse
them too, never crash or read out of bounds."""

import numpy as np

from conformance.cases.array_ops import ALL_DTYPES, FEW_DTYPES, grads_for, i32, i64, vals
from conformance.table import REAL_DTYPES, Case, Rand, Special

CASES = []

# ---------------------------------------------------------------- GatherV2, Gather

AX0 = np.array(0, np.int32)
for dt in ALL_DTYPES:
    CASES.append(Case("GatherV2", {"params": vals((4, 3), dt), "indices": i32(2, 0, 3, 3),
                                   "axis": AX0}, dtype=dt, const=("axis",),
                      grad=grads_for(dt, "params")))
CASES += [
    Case("GatherV2", {"params": Rand((3, 4)), "indices": np.array([[3, 0], [1, 3]], np.int32),
                      "axis": np.array(1, np.int32)}, variant="axis1_2d_indices",
         const=("axis",), dtype="float64", grad=("params",)),
    Case("GatherV2", {"params": Rand((2, 3, 2)), "indices": i64(2, 2, 0),
                      "axis": np.array(-2, np.int64)}, variant="neg_axis_int64",
         const=("axis",), dtype="float64", grad=("params",)),
    Case("GatherV2", {"params": Rand((4, 3)), "indices": np.array([1, 3, 1], np.int16),
                      "axis": AX0}, variant="int16_indices", const=("axis",)),
    Case("GatherV2", {"params": Rand((4, 3)), "indices": np.array(2, np.int32), "axis": AX0},
         variant="scalar_index", const=("axis",), dtype="float64", grad=("params",)),
    Case("GatherV2", {"params": Rand((4, 3)), "indices": i32(), "axis": AX0},
         variant="empty_indices", const=("axis",), grad=("params",)),
    Case("GatherV2", {"params": Rand((0, 3)), "indices": i32(), "axis": AX0},
         variant="empty_params", const=("axis",)),
    Case("GatherV2", {"params": Rand((4, 3)), "indices": i32(1, 1, 1, 2, 1),
                      "axis": AX0}, variant="duplicates_half", const=("axis",),
         dtype="float16", grad=("params",)),
    Case("GatherV2", {"params": Rand((4, 3)), "indices": i32(2, 0), "axis": AX0},
         variant="nonconst_axis", grad=("params",)),
    Case("GatherV2", {"params": Rand((2, 3, 4)), "indices": np.array([[2, 0], [1, 1]], np.int32),
                      "axis": np.array(1, np.int32)}, {"batch_dims": 1}, variant="batch_dims",
         const=("axis",), dtype="float64", grad=("params",)),
    Case("GatherV2", {"params": Rand((2, 3, 4)), "indices": np.array([[3, 0], [1, 1]], np.int32),
                      "axis": np.array(2, np.int32)}, {"batch_dims": 1},
         variant="batch_dims_axis2", const=("axis",), dtype="float64", grad=("params",)),
    Case("GatherV2", {"params": Rand((2, 3, 4)), "indices": np.array([[2, 0], [1, 1]], np.int32),
                      "axis": np.array(1, np.int32)}, {"batch_dims": -1},
         variant="batch_dims_neg", const=("axis",), dtype="float64", grad=("params",)),
    Case("GatherV2", {"params": Rand((2, 3)), "indices": np.array([[2, 0], [1, 1]], np.int32),
                      "axis": np.array(1, np.int32)}, {"batch_dims": 2},
         variant="batch_dims_eq_indices_rank", const=("axis",)),
    Case("GatherV2", {"params": Rand((4, 3)), "indices": i32(1, 4), "axis": AX0},
         variant="index_out_of_range", const=("axis",)),
    Case("GatherV2", {"params": Rand((4, 3)), "indices": i32(1, -1), "axis": AX0},
         variant="negative_index", const=("axis",)),
    Case("GatherV2", {"params": Rand((4, 3)), "indices": i64(2 ** 40), "axis": AX0},
         variant="huge_index", const=("axis",)),
    Case("GatherV2", {"params": Rand((2, 3, 4)), "indices": np.array([[4, 0], [1, 1]], np.int32),
                      "axis": np.array(2, np.int32)}, {"batch_dims": 1},
         variant="batch_dims_out_of_range", const=("axis",)),
    Case("GatherV2", {"params": Rand((4, 3)), "indices": i32(1), "axis": np.array(2, np.int32)},
         variant="axis_out_of_range", const=("axis",)),
    Case("GatherV2", {"params": Rand((4, 3)), "indices": i32(1), "axis": np.array(2, np.int32)},
         variant="nonconst_axis_out_of_range"),
    Case("GatherV2", {"params": Rand((2, 3, 4)), "indices": np.array([[2, 0], [1, 1]], np.int32),
                      "axis": np.array(0, np.int32)}, {"batch_dims": 1},
         variant="batch_dims_gt_axis", const=("axis",)),
    Case("GatherV2", {"params": Rand((2, 3)), "indices": np.array([[0], [1], [1]], np.int32),
                      "axis": np.array(1, np.int32)}, {"batch_dims": 1},
         variant="batch_dims_mismatch", const=("axis",)),
    Case("GatherV2", {"params": Rand(()), "indices": i32(0), "axis": AX0},
         variant="scalar_params", const=("axis",)),
]
for dt in FEW_DTYPES:
    CASES.append(Case("Gather", {"params": vals((4, 2), dt),
                                 "indices": np.array([[3, 0], [0, 2]], np.int32)}, dtype=dt,
                      grad=grads_for(dt, "params")))
CASES += [
    Case("Gather", {"params": Rand((4, 2)), "indices": i64(1, 1, 3)}, variant="int64_indices",
         dtype="float64", grad=("params",)),
    Case("Gather", {"params": Rand((4, 2)), "indices": i32(1, 3)},
         {"validate_indices": False}, variant="no_validate"),
    Case("Gather", {"params": Rand((4, 2)), "indices": i32()}, variant="empty_indices"),
    Case("Gather", {"params": Rand((4, 2)), "indices": i32(0, 4)}, variant="index_out_of_range"),
    Case("Gather", {"params": Rand((4, 2)), "indices": i32(-1)}, variant="negative_index"),
]

# ---------------------------------------------------------------- GatherNd

for dt in FEW_DTYPES:
    CASES.append(Case("GatherNd", {"params": vals((3, 4), dt),
                                   "indices": np.array([[0, 1], [2, 3], [0, 1]], np.int32)},
                      dtype=dt, grad=grads_for(dt, "params")))
CASES += [
    Case("GatherNd", {"params": Rand((3, 4)), "indices": np.array([[1], [0], [1]], np.int64)},
         variant="slices_int64", dtype="float64", grad=("params",)),
    Case("GatherNd", {"params": Rand((2, 3, 2)),
                      "indices": np.array([[[1, 2]], [[0, 0]]], np.int32)}, variant="batched",
         dtype="float64", grad=("params",)),
    Case("GatherNd", {"params": Rand((3, 4)), "indices": np.array([[2, 1]], np.int16)},
         variant="int16_indices"),
    # (TF's gradient of this one fails: its ScatterNd refuses indices.shape[-1] == 0.)
    Case("GatherNd", {"params": Rand((3, 2)), "indices": np.zeros((2, 0), np.int32)},
         variant="zero_depth"),
    Case("GatherNd", {"params": Rand((3, 4)), "indices": np.zeros((0, 2), np.int32)},
         variant="empty_indices"),
    Case("GatherNd", {"params": Rand((3, 4)), "indices": np.array([[1, 1], [1, 1]], np.int32)},
         variant="duplicates_half", dtype="float16", grad=("params",)),
    Case("GatherNd", {"params": Rand((3, 4)), "indices": np.array([[3, 0]], np.int32)},
         variant="index_out_of_range"),
    Case("GatherNd", {"params": Rand((3, 4)), "indices": np.array([[0, -1]], np.int32)},
         variant="negative_index"),
    Case("GatherNd", {"params": Rand((3, 4)), "indices": np.array([[0, 0, 0]], np.int32)},
         variant="too_deep"),
    Case("GatherNd", {"params": Rand((3, 4)), "indices": np.array(0, np.int32)},
         variant="scalar_indices"),
]

# ---------------------------------------------------------------- ScatterNd

for dt in ALL_DTYPES:
    CASES.append(Case("ScatterNd", {"indices": np.array([[1], [3]], np.int32),
                                    "updates": vals((2, 3), dt), "shape": i32(5, 3)},
                      dtype=dt, const=("shape",), grad=grads_for(dt, "updates")))
CASES += [
    Case("ScatterNd", {"indices": np.array([[1], [1], [0], [1]], np.int64),
                       "updates": Rand((4, 2)), "shape": i64(3, 2)}, variant="duplicates_int64",
         const=("shape",), dtype="float64", grad=("updates",)),
    Case("ScatterNd", {"indices": np.array([[0, 1], [2, 2], [0, 1]], np.int32),
                       "updates": Rand((3,)), "shape": i32(3, 3)}, variant="elements",
         const=("shape",), dtype="float64", grad=("updates",)),
    Case("ScatterNd", {"indices": np.array([[1], [1], [0], [1]], np.int32),
                       "updates": Special("int32", shape=(4,)), "shape": i32(2)},
         variant="int_wrap", const=("shape",), dtype="int32"),
    Case("ScatterNd", {"indices": np.array([[1], [1], [0]], np.int32),
                       "updates": np.array([True, False, False]), "shape": i32(3)},
         variant="bool_duplicates", const=("shape",), dtype="bool"),
    Case("ScatterNd", {"indices": np.array([[1], [1], [0], [1]], np.int32),
                       "updates": np.array([b"a", b"b", b"c", b"d"]), "shape": i32(3)},
         variant="string_duplicates", const=("shape",), dtype="string"),
    Case("ScatterNd", {"indices": np.array([[1], [3]], np.int16), "updates": Rand((2,)),
                       "shape": np.array([4], np.int16)}, variant="int16_indices",
         const=("shape",)),
    Case("ScatterNd", {"indices": np.array([[1], [3]], np.int32), "updates": Rand((2, 3)),
                       "shape": i32(5, 3)}, variant="nonconst_shape", grad=("updates",)),
    Case("ScatterNd", {"indices": np.zeros((0, 1), np.int32), "updates": Rand((0, 3)),
                       "shape": i32(2, 3)}, variant="empty_updates", const=("shape",)),
    Case("ScatterNd", {"indices": np.array([[5]], np.int32), "updates": Rand((1, 3)),
                       "shape": i32(5, 3)}, variant="index_out_of_range", const=("shape",)),
    Case("ScatterNd", {"indices": np.array([[-1]], np.int32), "updates": Rand((1, 3)),
                       "shape": i32(5, 3)}, variant="negative_index", const=("shape",)),
    Case("ScatterNd", {"indices": np.array([[1]], np.int32), "updates": Rand((2, 3)),
                       "shape": i32(5, 3)}, variant="bad_updates_shape", const=("shape",)),
    Case("ScatterNd", {"indices": np.array([[1]], np.int32), "updates": Rand((2, 3)),
                       "shape": i32(5, 3)}, variant="nonconst_bad_updates_shape"),
    Case("ScatterNd", {"indices": np.array([[1]], np.int32), "updates": Rand((1, 3)),
                       "shape": i32(5, -3)}, variant="negative_shape", const=("shape",)),
    Case("ScatterNd", {"indices": np.array([[1, 0, 0]], np.int32), "updates": Rand((1,)),
                       "shape": i32(5, 3)}, variant="too_deep", const=("shape",)),
]

# ---------------------------------------------------------------- DynamicStitch

for dt in FEW_DTYPES:
    CASES.append(Case("DynamicStitch", {"indices": [i32(0, 2), i32(1, 3)],
                                        "data": [vals((2, 3), dt), vals((2, 3), dt)]},
                      dtype=dt, grad=grads_for(dt, "data")))
CASES += [
    Case("DynamicStitch", {"indices": [i32(0, 1), i32(1, 2)], "data": [Rand((2,)), Rand((2,))]},
         variant="overlap", dtype="float64", grad=("data",)),
    Case("DynamicStitch", {"indices": [np.array(1, np.int32), np.array([[0, 2]], np.int32)],
                           "data": [Rand((2,)), Rand((1, 2, 2))]}, variant="mixed_rank",
         dtype="float64", grad=("data",)),
    Case("DynamicStitch", {"indices": [i32(2, 0, 1)], "data": [Rand((3, 2))]}, variant="one",
         const=("indices",), grad=("data",)),
    Case("DynamicStitch", {"indices": [i32(0, 1), i32()], "data": [Rand((2, 2)), Rand((0, 2))]},
         variant="empty_part"),
    Case("DynamicStitch", {"indices": [i32(0, 3)], "data": [Rand((2, 2))]}, variant="gap",
         unspecified=(0,)),  # the rows no index names are uninitialized in TF
    Case("DynamicStitch", {"indices": [i32(0, 1), i32(2)], "data": [Rand((2, 3)), Rand((1, 2))]},
         variant="data_mismatch"),
    Case("DynamicStitch", {"indices": [i32(0, 1)], "data": [Rand((3, 2))]},
         variant="indices_data_mismatch"),
    Case("DynamicStitch", {"indices": [i32(0, -1)], "data": [Rand((2, 2))]},
         variant="negative_index"),
]

# ---------------------------------------------------------------- UnsortedSegmentSum

for dt in REAL_DTYPES:
    CASES.append(Case("UnsortedSegmentSum", {"data": vals((4, 3), dt),
                                             "segment_ids": i32(0, 2, 0, 1),
                                             "num_segments": np.array(4, np.int32)},
                      dtype=dt, const=("num_segments",), grad=grads_for(dt, "data")))
CASES += [
    Case("UnsortedSegmentSum", {"data": Rand((4, 2)), "segment_ids": i64(0, -1, 2, -3),
                                "num_segments": np.array(3, np.int64)},
         variant="negative_ids_int64", const=("num_segments",), dtype="float64",
         grad=("data",)),
    Case("UnsortedSegmentSum", {"data": Rand((2, 2, 3)),
                                "segment_ids": np.array([[1, 1], [0, 1]], np.int32),
                                "num_segments": np.array(2, np.int32)}, variant="2d_ids",
         const=("num_segments",), dtype="float64", grad=("data",)),
    Case("UnsortedSegmentSum", {"data": Rand((3,)), "segment_ids": np.array(1, np.int32),
                                "num_segments": np.array(2, np.int32)}, variant="scalar_ids",
         const=("num_segments",)),
    Case("UnsortedSegmentSum", {"data": Rand((3,)), "segment_ids": i32(1, 1, 1),
                                "num_segments": np.array(2, np.int32)}, variant="one_segment",
         const=("num_segments",), dtype="float16", grad=("data",)),
    Case("UnsortedSegmentSum", {"data": Rand((0, 3)), "segment_ids": i32(),
                                "num_segments": np.array(2, np.int32)}, variant="empty",
         const=("num_segments",)),
    Case("UnsortedSegmentSum", {"data": Rand((2, 3)), "segment_ids": i32(0, 1),
                                "num_segments": np.array(0, np.int32)}, variant="zero_segments_oob",
         const=("num_segments",)),
    Case("UnsortedSegmentSum", {"data": Rand((4, 3)), "segment_ids": i32(0, 2, 0, 1),
                                "num_segments": np.array(3, np.int32)}, variant="nonconst_num",
         grad=("data",)),
    Case("UnsortedSegmentSum", {"data": Special(shape=(14,)),
                                "segment_ids": i32(*([0, 1, 2, 3, 4, 5, 6] * 2)),
                                "num_segments": np.array(7, np.int32)}, variant="specials",
         const=("num_segments",)),
    Case("UnsortedSegmentSum", {"data": Special("int8", shape=(10,)),
                                "segment_ids": i32(0, 0, 1, 1, 2, 2, 0, 1, 2, 0),
                                "num_segments": np.array(3, np.int32)}, variant="int_wrap",
         const=("num_segments",), dtype="int8"),
    Case("UnsortedSegmentSum", {"data": Rand((4, 3)), "segment_ids": i32(0, 3, 0, 1),
                                "num_segments": np.array(3, np.int32)}, variant="id_out_of_range",
         const=("num_segments",)),
    Case("UnsortedSegmentSum", {"data": Rand((4, 3)), "segment_ids": i32(0, 1),
                                "num_segments": np.array(3, np.int32)}, variant="ids_mismatch",
         const=("num_segments",)),
    Case("UnsortedSegmentSum", {"data": Rand((4, 3)), "segment_ids": i32(0, 1, 0, 1),
                                "num_segments": np.array(-1, np.int32)},
         variant="negative_num", const=("num_segments",)),
    Case("UnsortedSegmentSum", {"data": Rand((4, 3)), "segment_ids": i32(0, 1, 0, 1),
                                "num_segments": np.array([3], np.int32)},
         variant="num_not_scalar", const=("num_segments",)),
]
