"""Array ops that select or place elements by index (ops/array_index_ops.cc), part 1: Slice,
StridedSlice (every mask), StridedSliceGrad, OneHot, Range. Part 2, the gathers and scatters,
is array_index_ops_gather.py (one family file would hold more reference data than the table's
budget per family).

Out-of-range indices: TF's CPU kernels refuse them (InvalidArgumentError); TensorFlux must refuse
them too, never crash or read out of bounds."""

import numpy as np

from conformance.cases.array_ops import FEW_DTYPES, grads_for, i32, i64, vals
from conformance.table import Case, Rand

CASES = []


# ---------------------------------------------------------------- Slice

for dt in FEW_DTYPES:
    CASES.append(Case("Slice", {"input": vals((3, 4), dt), "begin": i32(1, 0),
                                "size": i32(2, -1)}, dtype=dt, const=("begin", "size"),
                      grad=grads_for(dt, "input")))
CASES += [
    Case("Slice", {"input": Rand((3, 4, 2)), "begin": i64(0, 1, 1), "size": i64(3, 2, 1)},
         variant="int64_index", const=("begin", "size"), dtype="float64", grad=("input",)),
    Case("Slice", {"input": Rand((3, 4)), "begin": i32(1, 1), "size": i32(2, 2)},
         variant="nonconst", dtype="float64", grad=("input",)),
    Case("Slice", {"input": Rand((3, 4)), "begin": i32(1, 1), "size": i32(2, -1)},
         variant="const_size_only", const=("size",)),
    Case("Slice", {"input": Rand((3, 4)), "begin": i32(1, 1), "size": i32(0, 2)},
         variant="empty_result", const=("begin", "size"), grad=("input",)),
    Case("Slice", {"input": Rand((0, 4)), "begin": i32(0, 1), "size": i32(-1, 2)},
         variant="empty_input", const=("begin", "size")),
    Case("Slice", {"input": Rand(()), "begin": i32(), "size": i32()}, variant="scalar",
         const=("begin", "size")),
    Case("Slice", {"input": Rand((3, 4)), "begin": i32(3, 4), "size": i32(0, 0)},
         variant="begin_at_end", const=("begin", "size")),
    Case("Slice", {"input": Rand((3, 4)), "begin": i32(2, 0), "size": i32(2, 4)},
         variant="out_of_range", const=("begin", "size")),
    Case("Slice", {"input": Rand((3, 4)), "begin": i32(2, 0), "size": i32(2, 4)},
         variant="nonconst_out_of_range"),
    Case("Slice", {"input": Rand((3, 4)), "begin": i32(-1, 0), "size": i32(1, 4)},
         variant="negative_begin", const=("begin", "size")),
    Case("Slice", {"input": Rand((3, 4)), "begin": i32(-1, 0), "size": i32(1, 4)},
         variant="nonconst_negative_begin"),
    Case("Slice", {"input": Rand((3, 4)), "begin": i32(0, 0), "size": i32(-2, 1)},
         variant="size_below_minus_one", const=("begin", "size")),
    Case("Slice", {"input": Rand((3, 4)), "begin": i32(0), "size": i32(1)},
         variant="wrong_length", const=("begin", "size")),
    Case("Slice", {"input": Rand((3, 4)), "begin": i32(0), "size": i32(1)},
         variant="nonconst_wrong_length"),
]

# ---------------------------------------------------------------- StridedSlice


def ss(x, begin, end, strides, variant, dtype="float64", const=("begin", "end", "strides"),
       grad=("input",), mk=i32, **masks):
    return Case("StridedSlice", {"input": x, "begin": mk(*begin), "end": mk(*end),
                                 "strides": mk(*strides)}, masks, variant=variant, dtype=dtype,
                const=const, grad=grad)


for dt in FEW_DTYPES:
    CASES.append(ss(vals((4, 5), dt), (1, 0), (3, 5), (1, 2), "base", dt,
                    grad=grads_for(dt, "input")))
X3 = Rand((3, 4, 5))
CASES += [
    # x[:3, 1:]
    ss(Rand((4, 5)), (2, 1), (3, 0), (1, 1), "begin_end_mask", begin_mask=1, end_mask=2),
    # x[::-1, 3:0:-2]
    ss(Rand((4, 5)), (0, 3), (0, 0), (-1, -2), "negative_stride", begin_mask=1, end_mask=1),
    # x[-3:-1, -2:]
    ss(Rand((4, 5)), (-3, -2), (-1, 0), (1, 1), "negative_indices", end_mask=2),
    # x[1:100, -100:2]: clamped
    ss(Rand((4, 5)), (1, -100), (100, 2), (1, 1), "clamp"),
    # x[3:1]: empty
    ss(Rand((4, 5)), (3,), (1,), (1,), "empty_result"),
    # x[..., 1:3]
    ss(X3, (0, 1), (0, 3), (1, 1), "ellipsis", ellipsis_mask=1),
    # x[1, ..., 2]
    ss(X3, (1, 0, 2), (2, 0, 3), (1, 1, 1), "ellipsis_shrink", ellipsis_mask=2,
       shrink_axis_mask=5),
    # x[:, newaxis, 1:3]
    ss(Rand((4, 5)), (0, 0, 1), (0, 0, 3), (1, 1, 1), "new_axis", begin_mask=1, end_mask=1,
       new_axis_mask=2),
    # x[newaxis, ..., newaxis]
    ss(Rand((2, 3)), (0, 0, 0), (0, 0, 0), (1, 1, 1), "new_axis_ellipsis", ellipsis_mask=2,
       new_axis_mask=5),
    # x[2]
    ss(Rand((4, 5)), (2,), (3,), (1,), "shrink", shrink_axis_mask=1),
    # x[-1, 1]: a scalar
    ss(Rand((4, 5)), (-1, 1), (0, 2), (1, 1), "shrink_negative", shrink_axis_mask=3),
    # x[1:, newaxis, ..., ::-2, 0] on rank 4
    ss(Rand((3, 2, 4, 2)), (1, 0, 0, 0, 0), (0, 0, 0, 0, 1), (1, 1, 1, -2, 1), "all_masks",
       begin_mask=8, end_mask=9, ellipsis_mask=4, new_axis_mask=2, shrink_axis_mask=16),
    ss(Rand((4, 5)), (1, 4), (4, 0), (2, -1), "int64_index", mk=i64),
    ss(Rand((4, 5)), (1, 0), (3, 5), (1, 2), "nonconst", const=()),
    ss(Rand((4, 5)), (1, 0), (3, 5), (1, 2), "nonconst_shrink", const=(), shrink_axis_mask=1),
    ss(Rand((4, 5)), (1, 4), (3, 0), (1, -2), "const_strides_only", const=("strides",),
       end_mask=2),
    ss(Rand((4, 5)), (0, 1, 0), (0, 3, 0), (1, 1, 1), "const_strides_new_axis",
       const=("strides",), new_axis_mask=1, shrink_axis_mask=4),
    ss(Rand((0, 3)), (0, 1), (0, 3), (1, 1), "empty_input", begin_mask=1, end_mask=1, grad=()),
    ss(Rand(()), (), (), (), "scalar_input", grad=()),
    ss(Rand((4, 5)), (0, 0), (4, 5), (1, 0), "zero_stride", dtype="float32", grad=()),
    ss(Rand((4, 5)), (0, 0), (4, 5), (1, 0), "nonconst_zero_stride", dtype="float32",
       const=(), grad=()),
    ss(Rand((4, 5)), (7,), (8,), (1,), "shrink_out_of_range", dtype="float32", grad=(),
       shrink_axis_mask=1),
    ss(Rand((4, 5)), (-5,), (-4,), (1,), "shrink_neg_out_of_range", dtype="float32", grad=(),
       shrink_axis_mask=1),
    ss(Rand((4, 5)), (7,), (8,), (1,), "nonconst_shrink_out_of_range", dtype="float32",
       const=(), grad=(), shrink_axis_mask=1),
    ss(Rand((4, 5)), (0, 0), (1,), (1, 1), "length_mismatch", dtype="float32", grad=()),
    ss(Rand((4, 5)), (0, 0), (1, 1), (1, 1), "two_ellipses", dtype="float32", grad=(),
       ellipsis_mask=3),
    ss(Rand((4, 5)), (0, 0, 0), (1, 1, 1), (1, 1, 1), "too_many_dims", dtype="float32",
       grad=()),
]

# ---------------------------------------------------------------- StridedSliceGrad


def ssg(dy, shape, begin, end, strides, variant, dtype="float64", const=None, mk=i32, **masks):
    const = ("shape", "begin", "end", "strides") if const is None else const
    return Case("StridedSliceGrad", {"shape": mk(*shape), "begin": mk(*begin), "end": mk(*end),
                                     "strides": mk(*strides), "dy": dy}, masks, variant=variant,
                dtype=dtype, const=const, grad=("dy",) if dtype.startswith("float") else ())


for dt in FEW_DTYPES:
    CASES.append(ssg(vals((2, 3), dt), (4, 5), (1, 0), (3, 5), (1, 2), "base", dt))
CASES += [
    ssg(Rand((4, 3)), (4, 5), (0, 3), (0, 0), (-1, -1), "negative_stride", begin_mask=1,
        end_mask=1),
    ssg(Rand((5,)), (4, 5), (2,), (3,), (1,), "shrink", shrink_axis_mask=1),
    ssg(Rand((4, 1, 2)), (4, 5), (0, 0, 1), (0, 0, 3), (1, 1, 1), "new_axis", begin_mask=1,
        end_mask=1, new_axis_mask=2),
    ssg(Rand((3, 4, 2)), (3, 4, 5), (0, 1), (0, 3), (1, 1), "ellipsis", ellipsis_mask=1),
    ssg(Rand((2, 3)), (4, 5), (1, 0), (3, 5), (1, 2), "int64", mk=i64),
    ssg(Rand((2, 3)), (4, 5), (1, 0), (3, 5), (1, 2), "nonconst", const=()),
    ssg(Rand((0, 5)), (4, 5), (3,), (1,), (1,), "empty"),
    ssg(Rand((3, 3)), (4, 5), (1, 0), (3, 5), (1, 2), "dy_mismatch", dtype="float32"),
    ssg(Rand((2, 3)), (4, 5), (1, 0), (3, 5), (1, 0), "zero_stride", dtype="float32"),
]

# ---------------------------------------------------------------- OneHot

ON_OFF = {"bool": (True, False), "string": (b"on", b"off")}
for dt in FEW_DTYPES:
    on, off = ON_OFF.get(dt, (5, 3))
    CASES.append(Case("OneHot", {"indices": i64(0, 2, -1, 1, 3), "depth": np.array(3, np.int32),
                                 "on_value": np.array(on, dt if dt != "string" else bytes),
                                 "off_value": np.array(off, dt if dt != "string" else bytes)},
                      dtype=dt, const=("depth",)))


def onehot(indices, depth, variant, const=("depth",), dtype="float32", **attrs):
    return Case("OneHot", {"indices": indices, "depth": np.array(depth, np.int32),
                           "on_value": np.array(1.5, dtype), "off_value": np.array(0.25, dtype)},
                attrs, variant=variant, const=const, dtype=dtype)


IDX2 = np.array([[0, 2], [1, -1]], np.int64)
CASES += [
    onehot(IDX2, 3, "axis0", axis=0),
    onehot(IDX2, 3, "axis1", axis=1),
    onehot(IDX2, 3, "axis_last", axis=-1),
    onehot(np.array([2, 0], np.int32), 3, "int32_indices"),
    onehot(np.array([2, 255], np.uint8), 3, "uint8_indices"),
    onehot(np.array([2, -128], np.int8), 3, "int8_indices"),
    onehot(np.array(1, np.int64), 4, "scalar_index"),
    onehot(i64(0, 1), 0, "depth0"),
    onehot(i64(), 3, "empty_indices"),
    onehot(i64(0, 1), 3, "nonconst_depth", const=()),
    onehot(i64(0, 1), -1, "negative_depth"),
    onehot(i64(0, 1), -1, "nonconst_negative_depth", const=()),
    onehot(i64(0, 1), 3, "axis_out_of_range", axis=2),
    onehot(i64(0, 1), 3, "axis_below_minus_one", axis=-2),
    Case("OneHot", {"indices": i64(0, 1), "depth": np.array(3, np.int32),
                    "on_value": np.array([1.0, 2.0], np.float32),
                    "off_value": np.array(0.0, np.float32)}, variant="on_not_scalar",
         const=("depth",)),
    onehot(np.array([0, 1], np.int16), 3, "int16_indices_refused"),
]

# ---------------------------------------------------------------- Range


def rng(start, limit, delta, dtype, variant="base", const=("start", "limit", "delta"),
        deviation=None):
    return Case("Range", {"start": np.array(start, dtype), "limit": np.array(limit, dtype),
                          "delta": np.array(delta, dtype)}, variant=variant, dtype=dtype,
                const=const, deviation=deviation)


for dt in ("int32", "int64", "float32", "float64"):
    CASES += [
        rng(2, 11, 3, dt),
        rng(10, 2, -3, dt, "negative_delta"),
        rng(1, 6, 2, dt, "nonconst", const=()),
    ]
for dt in ("int32", "float32"):
    CASES += [
        rng(4, 4, 1, dt, "empty"),
        rng(0, 5, 0, dt, "zero_delta"),
        rng(5, 0, 1, dt, "wrong_direction"),
        rng(0, 5, 0, dt, "nonconst_zero_delta", const=()),
        rng(5, 0, 1, dt, "nonconst_wrong_direction", const=()),
    ]
CASES += [
    rng(0.0, 1.0, 0.3, "float32", "fractional"),
    rng(-1.5, 1.0, 0.5, "float64", "fractional"),
    rng(0, 2 ** 31 - 1, 2 ** 30, "int32", "near_max"),
    Case("Range", {"start": np.array([0], np.int32), "limit": np.array(5, np.int32),
                   "delta": np.array(1, np.int32)}, variant="start_not_scalar", dtype="int32",
         const=("limit", "delta")),
]
# TF's CPU Range kernel exists only for int32, int64, float32, float64; the op allows more.
for dt in ("float16", "int8", "int16", "uint16", "uint32"):
    CASES.append(rng(1, 6, 2, dt, "other_dtype", const=(),
                     deviation="TF 2.15 registers no CPU Range kernel for %s (the op allows it); "
                               "TensorFlux's kernel computes it" % dt))
