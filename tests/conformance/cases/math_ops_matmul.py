"""Matrix products (ops/math_ops_matmul.cc): MatMul, BatchMatMulV2 and _FusedMatMul (MatMul +
BiasAdd + an optional activation, the remapper's fusion).

Per op: every dtype, every transpose/adjoint combination, batch broadcasting, empty dims (an
empty inner dim gives zeros), edge values (NaN and inf meeting zeros, integer wrap), errors
(ranks, inner dims, batch dims), and gradients."""

import numpy as np

from conformance.table import FLOAT_DTYPES, Case, Rand, Special

F = FLOAT_DTYPES
NUM = F + ("int32", "int64")
CASES = []


def ints(*vals, shape=None):
    return lambda dt: np.array(vals, dtype=dt).reshape(shape or (len(vals),))


# ---------------------------------------------------------------- MatMul

for dt in NUM:
    rng = {} if dt in F else dict(low=-9, high=9)
    CASES.append(Case("MatMul", {"a": Rand((3, 2), **rng), "b": Rand((2, 4), **rng)},
                      variant="base", dtype=dt, grad=("a", "b") if dt in F else ()))
for ta, tb in ((True, False), (False, True), (True, True)):
    sa = (2, 3) if ta else (3, 2)
    sb = (4, 2) if tb else (2, 4)
    name = "transpose_" + ("a" if ta else "") + ("b" if tb else "")
    CASES.append(Case("MatMul", {"a": Rand(sa), "b": Rand(sb)},
                      {"transpose_a": ta, "transpose_b": tb}, variant=name, dtype="float64",
                      grad=("a", "b")))
    CASES.append(Case("MatMul", {"a": Rand(sa, low=-9, high=9), "b": Rand(sb, low=-9, high=9)},
                      {"transpose_a": ta, "transpose_b": tb}, variant=name, dtype="int32"))
CASES += [
    # Larger than one register block, odd sizes.
    Case("MatMul", {"a": Rand((5, 7)), "b": Rand((7, 6))}, variant="odd_sizes",
         grad=("a", "b")),
    Case("MatMul", {"a": Rand((1, 1)), "b": Rand((1, 1))}, variant="one_by_one",
         dtype="float64", grad=("a", "b")),
    # An empty inner dim gives zeros; an empty outer dim an empty product.
    Case("MatMul", {"a": Rand((2, 0)), "b": Rand((0, 3))}, variant="empty_inner",
         dtype="float64", grad=("a", "b")),
    Case("MatMul", {"a": Rand((0, 3)), "b": Rand((3, 2))}, variant="empty_outer",
         grad=("a", "b")),
    Case("MatMul", {"a": Rand((2, 0)), "b": Rand((0, 3))}, variant="empty_inner",
         dtype="int64"),
    # NaN and inf against zeros and finite values; integer products wrap.
    Case("MatMul", {"a": Special(shape=(7, 2)), "b": lambda dt: np.array(
        [[0.0, 1.0, -2.0], [0.0, 0.5, 3.0]], dt)}, variant="specials"),
    Case("MatMul", {"a": Special(shape=(5, 2)), "b": ints(0, 1, 2, -1, 3, 7, shape=(2, 3))},
         variant="specials", dtype="int32"),
    Case("MatMul", {"a": Special(shape=(5, 2)), "b": ints(0, 1, 2, -1, 3, 7, shape=(2, 3))},
         variant="specials", dtype="int64"),
    # Errors.
    Case("MatMul", {"a": Rand((3, 2)), "b": Rand((3, 4))}, variant="inner_mismatch"),
    Case("MatMul", {"a": Rand((3,)), "b": Rand((3, 4))}, variant="rank1"),
    Case("MatMul", {"a": Rand((2, 3, 2)), "b": Rand((2, 4))}, variant="rank3"),
    Case("MatMul", {"a": Rand((3, 2)), "b": Rand((2, 4), dtype="float64")},
         variant="mismatched_dtypes"),
    Case("MatMul", {"a": Rand((3, 2)), "b": Rand((2, 4))}, variant="unsupported",
         dtype="int8"),
]

# ---------------------------------------------------------------- BatchMatMulV2

for dt in NUM:
    rng = {} if dt in F else dict(low=-9, high=9)
    CASES.append(Case("BatchMatMulV2", {"x": Rand((2, 2, 3), **rng), "y": Rand((2, 3, 2), **rng)},
                      variant="base", dtype=dt, grad=("x", "y") if dt in F else ()))
for adj_x, adj_y in ((True, False), (False, True), (True, True)):
    sx = (2, 3, 2) if adj_x else (2, 2, 3)
    sy = (2, 4, 3) if adj_y else (2, 3, 4)
    name = "adj_" + ("x" if adj_x else "") + ("y" if adj_y else "")
    CASES.append(Case("BatchMatMulV2", {"x": Rand(sx), "y": Rand(sy)},
                      {"adj_x": adj_x, "adj_y": adj_y}, variant=name, dtype="float64",
                      grad=("x", "y")))
CASES += [
    # Batch dims broadcast by NumPy rules; a rank-2 operand is one matrix for every batch.
    Case("BatchMatMulV2", {"x": Rand((2, 1, 2, 3)), "y": Rand((3, 3, 2))},
         variant="broadcast", dtype="float64", grad=("x", "y")),
    Case("BatchMatMulV2", {"x": Rand((3, 2)), "y": Rand((2, 1, 2, 4))},
         variant="broadcast_rank2", dtype="float64", grad=("x", "y")),
    Case("BatchMatMulV2", {"x": Rand((1, 2, 3)), "y": Rand((3, 2, 3))},
         {"adj_y": True}, variant="broadcast_adj_y", dtype="float32", grad=("x", "y")),
    Case("BatchMatMulV2", {"x": Rand((2, 3)), "y": Rand((3, 2))}, variant="rank2",
         dtype="float64", grad=("x", "y")),
    Case("BatchMatMulV2", {"x": Rand((2, 1, 2, 3), low=-9, high=9),
                           "y": Rand((3, 3, 2), low=-9, high=9)},
         variant="broadcast", dtype="int64"),
    # Empty batch, empty inner dim.
    Case("BatchMatMulV2", {"x": Rand((0, 2, 3)), "y": Rand((3, 2))}, variant="empty_batch",
         grad=("x", "y")),
    Case("BatchMatMulV2", {"x": Rand((2, 2, 0)), "y": Rand((2, 0, 3))}, variant="empty_inner",
         dtype="float64", grad=("x", "y")),
    Case("BatchMatMulV2", {"x": Special(shape=(2, 7, 1)),
                           "y": lambda dt: np.array([[[0.0, 2.0]], [[1.0, -0.5]]], dt)},
         variant="specials"),
    # Errors.
    Case("BatchMatMulV2", {"x": Rand((2, 2, 3)), "y": Rand((2, 2, 2))},
         variant="inner_mismatch"),
    Case("BatchMatMulV2", {"x": Rand((2, 2, 3)), "y": Rand((3, 3, 2))},
         variant="batch_mismatch"),
    Case("BatchMatMulV2", {"x": Rand((3,)), "y": Rand((3, 2))}, variant="rank1"),
    Case("BatchMatMulV2", {"x": Rand((2, 3)), "y": Rand((3, 2))}, variant="unsupported",
         dtype="uint8"),
]

# ---------------------------------------------------------------- _FusedMatMul

NO_TF_FUSED = ("TensorFlux's _FusedMatMul has half and double kernels; TensorFlow's CPU has "
               "float and bfloat16 only (the remapper fuses those)")


def fused(fused_ops, dt="float32", variant=None, a=(3, 2), b=(2, 4), bias=(4,), dev=None,
          **attrs):
    attrs = dict(attrs, fused_ops=list(fused_ops))
    return Case("_FusedMatMul", {"a": Rand(a), "b": Rand(b), "args": [Rand(bias)]}, attrs,
                variant=variant or "_".join(fused_ops).lower(), dtype=dt, deviation=dev)


CASES += [
    fused(["BiasAdd"]),
    fused(["BiasAdd", "Relu"]),
    fused(["BiasAdd", "Relu6"], a=(3, 2), b=(2, 4)),
    fused(["BiasAdd", "Elu"]),
    fused(["BiasAdd", "LeakyRelu"]),
    fused(["BiasAdd", "LeakyRelu"], variant="leakyrelu_alpha", leakyrelu_alpha=0.5),
    fused(["BiasAdd", "Relu"], variant="transpose_a", a=(2, 3), transpose_a=True),
    fused(["BiasAdd"], variant="transpose_b", b=(4, 2), transpose_b=True),
    fused(["BiasAdd", "Relu6"], variant="transpose_ab", a=(2, 3), b=(4, 2), transpose_a=True,
          transpose_b=True),
    # An empty inner dim: TF's kernel returns zeros without the bias; TensorFlux adds the bias,
    # as the MatMul and BiasAdd the remapper fused would.
    fused(["BiasAdd"], variant="empty_inner", a=(3, 0), b=(0, 4),
          dev="an empty inner dim gives the bias (MatMul + BiasAdd), TF's kernel zeros "
              "(docs/TF_DIFFERENCES.md, math_ops_matmul)"),
    fused(["BiasAdd", "Relu"], variant="empty_outer", a=(0, 2)),
    # float16 (TF: no CPU kernel) and float64 (TF: not in the op's type list).
    fused(["BiasAdd", "Relu"], dt="float16", dev=NO_TF_FUSED),
    fused(["BiasAdd", "Elu"], dt="float64", dev=NO_TF_FUSED),
    # Errors: the bias against the output's columns, combinations the kernel lacks.
    # (A bias of the wrong length is not here: TF's kernel does not check it and reads past
    # the bias; TensorFlux refuses it when the graph is built.)
    fused(["BiasAdd"], variant="bias_rank", bias=(1, 4)),
    fused(["Relu"], variant="no_biasadd"),
    fused(["BiasAdd", "Tanh"], variant="unsupported_activation"),
    fused(["BiasAdd"], variant="inner_mismatch", a=(3, 2), b=(3, 4)),
    Case("_FusedMatMul", {"a": Rand((3, 2)), "b": Rand((2, 4)), "args": [Rand((4,)),
                                                                        Rand((4,))]},
         {"fused_ops": ["BiasAdd"]}, variant="two_args"),
    Case("_FusedMatMul", {"a": Rand((3, 2)), "b": Rand((2, 4)), "args": []},
         {"fused_ops": []}, variant="no_fused_ops"),
]
