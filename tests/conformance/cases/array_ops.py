"""Array ops (ops/array_ops.cc): Const, Placeholder, PlaceholderWithDefault, Identity,
IdentityN, NoOp, Reshape, Shape, Size, Rank, Fill, ZerosLike, OnesLike.

The helpers here (ALL_DTYPES, vals, i32, i64) are shared by the other array families
(array_index_ops, array_layout_ops, random_ops)."""

import numpy as np

from conformance.table import REAL_DTYPES, Case, Rand, Special

# Every dtype TF and TensorFlux both run these dtype-generic kernels with on CPU (bfloat16 and
# the complex types have no numpy/TensorFlux counterpart in the table).
ALL_DTYPES = REAL_DTYPES + ("bool", "string")
NUM_DTYPES = REAL_DTYPES
# For kernels that only move whole elements without a per-type path worth a case each (and to
# keep the reference data small): every element size, bool and string.
FEW_DTYPES = ("float16", "float32", "float64", "int8", "uint16", "uint32", "int64", "bool",
              "string")


def strings(shape):
    """Distinct short byte strings (and one empty one) of `shape`."""
    n = int(np.prod(shape)) if len(shape) else 1
    flat = [b"s%d" % i if i % 5 else b"" if i == 5 else b"str%d" % i for i in range(n)]
    return np.array(flat, dtype=object).astype(bytes).reshape(shape)


def vals(shape, dtype, low=-5, high=5):
    """Seeded values of `dtype` (a Rand spec), or byte strings for 'string'."""
    if dtype == "string":
        return strings(shape)
    return Rand(tuple(shape), low=low, high=high)


def i32(*v):
    return np.array(v if v else [], np.int32)


def i64(*v):
    return np.array(v if v else [], np.int64)


def grads_for(dtype, *names):
    """`names` for float32 (dtype sweeps check one gradient; float64 variants with finite
    differences and float16 variants where the gradient computes cover the others), else ()."""
    return names if dtype == "float32" else ()


CASES = []

# ---------------------------------------------------------------- Const, Placeholder


def _const_program(m):
    fetches = [
        m.constant(np.array([[1.5, -2.0, 0.0]], np.float32)),
        m.constant(np.array([np.nan, np.inf, -np.inf, -0.0, 1e-40], np.float32)),
        m.constant(np.array([1.0, 2.5e-8, -3.0], np.float64)),
        m.constant(np.array([0.5, -65504.0, 6e-8], np.float16)),
        m.constant(np.array([-128, 0, 127], np.int8)),
        m.constant(np.array([-32768, 7, 32767], np.int16)),
        m.constant(np.array([[-2147483648, 1], [2, 2147483647]], np.int32)),
        m.constant(np.array([-(2 ** 63), 2 ** 63 - 1], np.int64)),
        m.constant(np.array([0, 255], np.uint8)),
        m.constant(np.array([0, 65535], np.uint16)),
        m.constant(np.array([0, 2 ** 32 - 1], np.uint32)),
        m.constant(np.array([0, 2 ** 64 - 1], np.uint64)),
        m.constant(np.array([True, False, True])),
        m.constant(np.array([b"a", b"", b"xyz"])),
        m.constant(b"scalar"),
        m.constant(3.25),
        m.constant(7),
        m.constant(np.zeros((0, 3), np.float32)),
        m.constant(2.0, shape=[2, 3]),
        m.constant([1, 2], shape=[2, 2], dtype=m.int64),
        m.constant(np.arange(24, dtype=np.int32).reshape(2, 3, 4)),
    ]
    return fetches, {}, []


def _placeholder_program(m):
    p = m.placeholder(m.float32, shape=[2, 3])
    q = m.placeholder(m.int64, shape=None)
    s = m.placeholder(m.string, shape=[2])
    e = m.placeholder(m.float64, shape=[0, 2])
    feeds = {p: np.arange(6, dtype=np.float32).reshape(2, 3), q: np.array(5, np.int64),
             s: np.array([b"x", b"yz"]), e: np.zeros((0, 2))}
    return [p, q, s, e], feeds, []


def _placeholder_unfed(m):
    p = m.placeholder(m.float32, shape=[2])
    return [m.identity(p)], {}, []


def _placeholder_bad_feed_shape(m):
    p = m.placeholder(m.float32, shape=[2, 3])
    return [m.identity(p)], {p: np.zeros((3, 2), np.float32)}, []


def _placeholder_with_default_fed(m):
    d = m.constant(np.array([[1.0, 2.0, 3.0]], np.float32))
    p = m.placeholder_with_default(d, shape=[None, 3])
    return [p * 2.0], {p: np.full((2, 3), 4.0, np.float32)}, []


CASES += [
    Case("Const", variant="program", program=_const_program, covers=("Const",)),
    Case("Placeholder", variant="program", program=_placeholder_program,
         covers=("Placeholder",)),
    Case("Placeholder", variant="program_unfed", program=_placeholder_unfed,
         covers=("Placeholder",)),
    Case("Placeholder", variant="program_bad_feed_shape", program=_placeholder_bad_feed_shape,
         covers=("Placeholder",)),
    Case("PlaceholderWithDefault", variant="program_fed", program=_placeholder_with_default_fed,
         covers=("PlaceholderWithDefault",)),
]
for dt in FEW_DTYPES:
    CASES.append(Case("PlaceholderWithDefault", {"input": vals((2, 3), dt)}, {"shape": [2, 3]},
                      dtype=dt, grad=grads_for(dt, "input")))
CASES += [
    Case("PlaceholderWithDefault", {"input": Rand((2, 3))}, {"shape": [None, 3]},
         variant="partial", dtype="float64", grad=("input",)),
    Case("PlaceholderWithDefault", {"input": Rand((2, 3))}, {"shape": None},
         variant="unknown_rank"),
    Case("PlaceholderWithDefault", {"input": Rand(())}, {"shape": []}, variant="scalar"),
    Case("PlaceholderWithDefault", {"input": Rand((0, 2))}, {"shape": [0, 2]}, variant="empty"),
    Case("PlaceholderWithDefault", {"input": Rand((2, 3))}, {"shape": [3, 2]},
         variant="incompatible"),
    Case("PlaceholderWithDefault", {"input": Rand((2, 3))}, {"shape": [2, 3, 1]},
         variant="rank_mismatch"),
]

# ---------------------------------------------------------------- Identity, IdentityN, NoOp

for dt in FEW_DTYPES:
    CASES.append(Case("Identity", {"input": vals((2, 3), dt)}, dtype=dt,
                      grad=grads_for(dt, "input")))
CASES += [
    Case("Identity", {"input": Special()}, variant="specials"),
    Case("Identity", {"input": Special("float16")}, variant="specials", dtype="float16"),
    Case("Identity", {"input": Special("int64")}, variant="specials", dtype="int64"),
    Case("Identity", {"input": Rand(())}, variant="scalar", dtype="float64", grad=("input",)),
    Case("Identity", {"input": Rand((0, 4))}, variant="empty", grad=("input",)),
    Case("Identity", {"input": Rand((2, 1, 1, 1, 1, 1, 1, 2))}, variant="rank8"),
    Case("IdentityN", {"input": [Rand((2, 3)), Rand((4,), "int32"), strings((2,)),
                                 Rand((), "float64"), Rand((0, 2), "bool")]},
         variant="mixed", grad=("input",)),
    Case("IdentityN", {"input": [Rand((3,))]}, variant="one", dtype="float64",
         grad=("input",)),
    Case("NoOp"),
]

# ---------------------------------------------------------------- Reshape

for dt in ALL_DTYPES:
    CASES.append(Case("Reshape", {"tensor": vals((2, 6), dt), "shape": i32(3, -1)}, dtype=dt,
                      variant="infer", const=("shape",), grad=grads_for(dt, "tensor")))
CASES += [
    Case("Reshape", {"tensor": Rand((2, 6)), "shape": i64(4, 3)}, variant="int64_shape",
         const=("shape",), dtype="float64", grad=("tensor",)),
    Case("Reshape", {"tensor": Rand((2, 3, 2)), "shape": i32(-1)}, variant="flatten",
         const=("shape",), dtype="float64", grad=("tensor",)),
    Case("Reshape", {"tensor": Rand(()), "shape": i32(1, 1)}, variant="scalar_to_2d",
         const=("shape",), dtype="float64", grad=("tensor",)),
    Case("Reshape", {"tensor": Rand((1, 1)), "shape": i32()}, variant="to_scalar",
         const=("shape",), dtype="float64", grad=("tensor",)),
    Case("Reshape", {"tensor": Rand((0, 3)), "shape": i32(3, 0)}, variant="empty",
         const=("shape",), grad=("tensor",)),
    Case("Reshape", {"tensor": Rand((0, 3)), "shape": i32(2, -1, 0)}, variant="empty_infer",
         const=("shape",)),
    Case("Reshape", {"tensor": Rand((0, 3)), "shape": i32(-1, 3)}, variant="empty_infer_nonzero",
         const=("shape",)),
    Case("Reshape", {"tensor": Rand((2, 6)), "shape": i32(3, -1)}, variant="nonconst_shape",
         dtype="float64", grad=("tensor",)),
    Case("Reshape", {"tensor": Rand((2, 6)), "shape": i32(5, -1)}, variant="nonconst_indivisible"),
    Case("Reshape", {"tensor": Rand((2, 6)), "shape": i32(5, 2)}, variant="nonconst_mismatch"),
    Case("Reshape", {"tensor": Rand((2, 6)), "shape": i32(5, 2)}, variant="mismatch",
         const=("shape",)),
    Case("Reshape", {"tensor": Rand((2, 6)), "shape": i32(5, -1)}, variant="indivisible",
         const=("shape",)),
    Case("Reshape", {"tensor": Rand((2, 6)), "shape": i32(-1, -1)}, variant="two_unknown",
         const=("shape",)),
    Case("Reshape", {"tensor": Rand((2, 6)), "shape": i32(-2, -6)}, variant="negative",
         const=("shape",)),
    Case("Reshape", {"tensor": Rand((2, 6)), "shape": np.array([[3, 4]], np.int32)},
         variant="shape_not_vector", const=("shape",)),
]

# ---------------------------------------------------------------- Shape, Size, Rank

# The kernels read only the shape: a few dtypes suffice.
for dt in ("float32", "uint64", "bool", "string"):
    CASES.append(Case("Shape", {"input": vals((2, 3), dt)}, dtype=dt))
    CASES.append(Case("Size", {"input": vals((2, 3), dt)}, dtype=dt))
    CASES.append(Case("Rank", {"input": vals((2, 3), dt)}, dtype=dt))
for op in ("Shape", "Size"):
    CASES += [
        Case(op, {"input": Rand((4, 1, 2))}, {"out_type": "int64"}, variant="int64"),
        Case(op, {"input": Rand(())}, variant="scalar"),
        Case(op, {"input": Rand((3, 0, 2))}, variant="empty"),
    ]
CASES += [
    Case("Rank", {"input": Rand(())}, variant="scalar"),
    Case("Rank", {"input": Rand((3, 0, 2))}, variant="empty"),
]

# ---------------------------------------------------------------- Fill

for dt in ALL_DTYPES:
    CASES.append(Case("Fill", {"dims": i32(2, 3), "value": vals((), dt)}, dtype=dt,
                      const=("dims",), grad=grads_for(dt, "value")))
CASES += [
    Case("Fill", {"dims": i64(2, 1, 2), "value": Rand(())}, variant="int64_dims",
         const=("dims",), dtype="float64", grad=("value",)),
    Case("Fill", {"dims": i32(3, 2), "value": Rand(())}, variant="nonconst_dims"),
    Case("Fill", {"dims": i32(4, 5), "value": Rand(())}, variant="half_grad", const=("dims",),
         dtype="float16", grad=("value",)),
    Case("Fill", {"dims": i32(), "value": Rand(())}, variant="scalar", const=("dims",),
         dtype="float64", grad=("value",)),
    Case("Fill", {"dims": i32(0, 3), "value": Rand(())}, variant="empty", const=("dims",)),
    Case("Fill", {"dims": i32(2), "value": np.array(np.nan, np.float32)}, variant="nan",
         const=("dims",)),
    Case("Fill", {"dims": i32(2, -1), "value": Rand(())}, variant="negative_dim",
         const=("dims",)),
    Case("Fill", {"dims": i32(2, -1), "value": Rand(())}, variant="nonconst_negative_dim"),
    Case("Fill", {"dims": i32(2), "value": Rand((2,))}, variant="value_not_scalar",
         const=("dims",)),
    Case("Fill", {"dims": np.array([[2]], np.int32), "value": Rand(())},
         variant="dims_not_vector", const=("dims",)),
]

# ---------------------------------------------------------------- ZerosLike, OnesLike

for dt in ALL_DTYPES:
    CASES.append(Case("ZerosLike", {"x": vals((2, 3), dt)}, dtype=dt))
    CASES.append(Case("OnesLike", {"x": vals((2, 3), dt)}, dtype=dt))
for op in ("ZerosLike", "OnesLike"):
    CASES += [
        Case(op, {"x": Special()}, variant="specials"),
        Case(op, {"x": Rand(())}, variant="scalar", dtype="float64"),
        Case(op, {"x": Rand((0, 3))}, variant="empty"),
    ]

# ---------------------------------------------------------------- every dtype of Const / Identity
# (the GPU kernels register these dtypes too: test_gpu_kernel_coverage)


def _const_of(dt):
    def program(m):
        return [m.constant(Special(dt).make(dt, 0), dtype=m.as_dtype(dt))], {}, []
    return program


for _dt in REAL_DTYPES:
    CASES.append(Case("Const", variant="program_specials", dtype=_dt, program=_const_of(_dt),
                      covers=("Const",)))
    CASES.append(Case("Identity", {"input": Special(_dt, shape=(3, 4))}, variant="specials_2d",
                      dtype=_dt))
