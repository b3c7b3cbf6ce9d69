"""Random ops (ops/random_ops.cc): RandomStandardNormal, TruncatedNormal, RandomUniform,
RandomUniformInt, RandomShuffle.

TensorFlux draws from the same Philox4x32-10 stream as TF for the same (seed, seed2) (key =
seed, counter high half = seed2, 256 counters reserved per output element per run, TF's float
conversions, Box-Muller and truncation, TF's forward Fisher-Yates for RandomShuffle), so the
values are compared bit for bit (tol (0, 0)), not statistically. Program cases check the Python
seed derivation (graph seed / op seed), a second run continuing the stream, and outputs larger
than one of TensorFlux's parallel blocks (4096 elements)."""

import numpy as np

from conformance.cases.array_ops import i32, i64, strings
from conformance.table import Case, Rand

EXACT = (0.0, 0.0)
SEEDS = {"seed": 87654321, "seed2": 12345}
CASES = []

FLOAT_OPS = ("RandomUniform", "RandomStandardNormal", "TruncatedNormal")
for op in FLOAT_OPS:
    for dt in ("float16", "float32", "float64"):
        CASES.append(Case(op, {"shape": i32(2, 5)}, {"dtype": dt, **SEEDS}, dtype=dt,
                          const=("shape",), tol=EXACT))
    CASES += [
        Case(op, {"shape": i64(3, 3)}, {"dtype": "float32", "seed": 7, "seed2": 0},
             variant="int64_shape", const=("shape",), tol=EXACT),
        Case(op, {"shape": i32(13)}, {"dtype": "float64", "seed": -3, "seed2": 2 ** 40},
             variant="negative_seed", dtype="float64", const=("shape",), tol=EXACT),
        Case(op, {"shape": i32(11)}, {"dtype": "float32", "seed": 0, "seed2": 99},
             variant="zero_seed", const=("shape",), tol=EXACT),
        Case(op, {"shape": i32(3, 2)}, {"dtype": "float32", **SEEDS}, variant="nonconst_shape",
             tol=EXACT),
        Case(op, {"shape": i32(0, 3)}, {"dtype": "float32", **SEEDS}, variant="empty",
             const=("shape",)),
        Case(op, {"shape": i32()}, {"dtype": "float32", **SEEDS}, variant="scalar",
             const=("shape",), tol=EXACT),
        Case(op, {"shape": i32(2, -1)}, {"dtype": "float32", **SEEDS}, variant="negative_dim",
             const=("shape",)),
        Case(op, {"shape": i32(2, -1)}, {"dtype": "float32", **SEEDS},
             variant="nonconst_negative_dim"),
        Case(op, {"shape": np.array([[2, 3]], np.int32)}, {"dtype": "float32", **SEEDS},
             variant="shape_not_vector", const=("shape",)),
        Case(op, {"shape": i32(2)}, {"dtype": "int32", **SEEDS}, variant="int_dtype_refused",
             const=("shape",)),
    ]


def uniform_int(lo, hi, dtype, variant, shape=(2, 5), const=("shape",), seeds=None):
    return Case("RandomUniformInt", {"shape": i32(*shape), "minval": np.array(lo, dtype),
                                     "maxval": np.array(hi, dtype)}, dict(seeds or SEEDS),
                variant=variant, dtype=dtype, const=const)


CASES += [
    uniform_int(-5, 17, "int32", "base"),
    uniform_int(-5, 17, "int64", "base"),
    uniform_int(-2 ** 31, 2 ** 31 - 1, "int32", "full_range"),
    uniform_int(-2 ** 63, 2 ** 63 - 1, "int64", "full_range"),
    uniform_int(-7, 2 ** 40, "int64", "wide", seeds={"seed": 1, "seed2": 2}),
    uniform_int(3, 4, "int32", "single_value"),
    uniform_int(5, 5, "int32", "empty_range"),
    uniform_int(6, 5, "int64", "inverted_range"),
    uniform_int(6, 5, "int32", "empty_output_inverted_range", shape=(0, 2)),
    uniform_int(0, 9, "int32", "nonconst_shape", const=()),
    Case("RandomUniformInt", {"shape": i32(2), "minval": np.array([0], np.int32),
                              "maxval": np.array(5, np.int32)}, dict(SEEDS),
         variant="minval_not_scalar", dtype="int32", const=("shape",)),
]

for dt, spec in (("int32", np.arange(10, dtype=np.int32)), ("float32", Rand((6, 2))),
                 ("string", strings((5,))), ("float64", Rand((3, 2, 2))),
                 ("bool", Rand((7,))), ("uint8", Rand((4, 1)))):
    CASES.append(Case("RandomShuffle", {"value": spec}, dict(SEEDS), dtype=dt, tol=EXACT))
CASES += [
    Case("RandomShuffle", {"value": Rand(())}, dict(SEEDS), variant="scalar"),
    Case("RandomShuffle", {"value": Rand((1, 3))}, dict(SEEDS), variant="one_row"),
    Case("RandomShuffle", {"value": Rand((0, 2))}, dict(SEEDS), variant="empty"),
    Case("RandomShuffle", {"value": Rand((5, 0))}, dict(SEEDS), variant="empty_rows"),
    Case("RandomShuffle", {"value": np.arange(37, dtype=np.int64)},
         {"seed": 3, "seed2": 2 ** 33}, variant="long", dtype="int64"),
]

# ---------------------------------------------------------------- programs


def _second_run(m):
    # Each run of a node continues its stream: the fetch is the op's second draw.
    u = m.random_uniform([5], seed=4)
    n = m.random_normal([5], seed=4, dtype=m.float64)
    t = m.truncated_normal([5], seed=4)
    i = m.random_uniform([5], minval=-3, maxval=9, dtype=m.int64, seed=4)
    s = m.random_shuffle(m.constant(np.arange(6)), seed=4)
    return [u, n, t, i, s], {}, [[u, n, t, i, s]]


def _seed_derivation(m):
    # Op seed only: (87654321, op seed); graph seed set: (graph seed, op seed), and without an
    # op seed (graph seed, a per-graph counter of such ops).
    a = m.random_uniform([3], seed=11)
    m.set_random_seed(7)
    b = m.random_uniform([3], seed=11)
    c = m.random_normal([3])
    d = m.random_uniform([3])
    e = m.random_uniform([2], minval=-1, maxval=3, dtype=m.int32)
    f = m.random_shuffle(m.constant(np.arange(8)))
    g = m.truncated_normal([3], mean=1.0, stddev=2.0, seed=0)
    return [a, b, c, d, e, f, g], {}, []


def _graph_seed_zero(m):
    # (0, 0) from explicit seeds becomes (0, 2^31 - 1): still deterministic.
    m.set_random_seed(0)
    return [m.random_uniform([4], seed=0), m.random_normal([4], seed=2 ** 31 - 1 + 5)], {}, []


def _scaled(m):
    return [m.random_uniform([2, 3], minval=-2.0, maxval=5.0, seed=3),
            m.random_uniform([4], maxval=10.0, seed=3, dtype=m.float64),
            m.random_normal([2, 3], mean=-1.0, stddev=0.5, seed=3),
            m.truncated_normal([4], stddev=3.0, seed=3, dtype=m.float16)], {}, []


def _large(m):
    # More than one of TensorFlux's parallel blocks (4096 elements): the tail and the sums.
    n = 4096 + 20
    u = m.random_uniform([n], seed=5)
    t = m.truncated_normal([n], seed=5)
    nd = m.random_normal([2, n // 2], seed=5, dtype=m.float64)
    i = m.random_uniform([n], minval=0, maxval=1000, dtype=m.int32, seed=5)
    s = m.random_shuffle(m.range(n), seed=5)
    return [u[4090:], t[4090:], nd[:, 2040:], i[4090:], s[4090:],
            m.reduce_sum(m.cast(i, m.int64)), m.reduce_sum(m.cast(s[:100], m.int64))], {}, []


CASES += [
    Case("RandomUniform", variant="program_second_run", program=_second_run, tol=EXACT,
         covers=("RandomUniform", "RandomStandardNormal", "TruncatedNormal", "RandomUniformInt",
                 "RandomShuffle")),
    Case("RandomUniform", variant="program_seed_derivation", program=_seed_derivation,
         tol=EXACT, covers=("RandomUniform", "RandomStandardNormal", "TruncatedNormal",
                            "RandomUniformInt", "RandomShuffle")),
    Case("RandomUniform", variant="program_graph_seed_zero", program=_graph_seed_zero,
         tol=EXACT, covers=("RandomUniform", "RandomStandardNormal")),
    Case("RandomUniform", variant="program_scaled", program=_scaled,
         covers=("RandomUniform", "RandomStandardNormal", "TruncatedNormal")),
    Case("RandomUniform", variant="program_large", program=_large, tol=EXACT,
         covers=("RandomUniform", "RandomStandardNormal", "TruncatedNormal", "RandomUniformInt",
                 "RandomShuffle")),
]
