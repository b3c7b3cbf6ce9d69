"""Datasets and iterators (ops/dataset_ops.cc), through the tf.data v1 API both systems share:
each program builds a dataset, an iterator (one-shot or initializable) and n get_next calls
ordered by control dependencies, and fetches the n elements in one run. A variant `end` asks
for one element more than the dataset holds: OutOfRangeError."""

import numpy as np

from conformance.program_util import ordered, values
from conformance.table import Case

CASES = []
ITER = ("IteratorV2", "MakeIterator", "IteratorGetNext")


def elements(m, ds, n, initializable=False):
    """(fetches, feeds, init_ops) for the first n elements of ds, in order."""
    if initializable:
        it = m.data.make_initializable_iterator(ds)
        init = [it.initializer]
    else:
        it = m.data.make_one_shot_iterator(ds)
        init = []
    return ordered(m, [it.get_next for _ in range(n)]), {}, init


def _case(op, variant, make, n, dtype="int64", covers=(), end=True, initializable=False,
          **kw):
    """A case for the first n elements of make(m) and, with end, one for n + 1."""
    def program(m, n=n):
        return elements(m, make(m), n, initializable)

    def program_end(m):
        return elements(m, make(m), n + 1, initializable)
    covers = [c for c in tuple(covers) + ITER if c != op]
    v = "program" + ("_" + variant if variant else "")
    out = [Case(op, variant=v, dtype=dtype, program=program, covers=covers, **kw)]
    if end:
        out.append(Case(op, variant=v + "_end", dtype=dtype, program=program_end,
                        covers=covers, **kw))
    return out


def _np(arr, dtype):
    return np.asarray(arr).astype(dtype)


# ---------------------------------------------------------------- sources

for _dt in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
            "uint16", "bool"):
    CASES += _case("TensorDataset", "", lambda m, dt=_dt: m.data.Dataset.from_tensors(
        (values("ds/tensor/" + dt, (2, 3), dt, -50, 50), np.int32(7))), 1, _dt)
CASES += _case("TensorDataset", "string", lambda m: m.data.Dataset.from_tensors(
    np.array([b"ab", b"", b"c"])), 1, "string", end=False)
CASES += _case("TensorDataset", "nested", lambda m: m.data.Dataset.from_tensors(
    {"a": np.float32(1.5), "b": (np.arange(3, dtype=np.int64), np.zeros((0, 2), np.float32))}),
    1, "float32")
CASES += _case("TensorDataset", "initializable", lambda m: m.data.Dataset.from_tensors(
    np.arange(4, dtype=np.float64)), 1, "float64", initializable=True)

for _dt in ("float32", "float64", "int32", "int64", "uint8", "bool"):
    CASES += _case("TensorSliceDataset", "", lambda m, dt=_dt: m.data.Dataset.from_tensor_slices(
        (values("ds/slices/" + dt, (3, 2), dt, -50, 50), np.arange(3, dtype=np.int32))), 3, _dt)
CASES += _case("TensorSliceDataset", "string", lambda m: m.data.Dataset.from_tensor_slices(
    np.array([b"ab", b"", b"c"])), 3, "string", end=False)
CASES += _case("TensorSliceDataset", "dict", lambda m: m.data.Dataset.from_tensor_slices(
    {"x": values("ds/slices/dict", (2, 2, 2)), "y": np.array([3, 4], np.int64)}), 2,
    "float32")
CASES += _case("TensorSliceDataset", "vector", lambda m: m.data.Dataset.from_tensor_slices(
    np.array([1.5, -2.5, np.nan, np.inf], np.float32)), 4, "float32")
CASES += _case("TensorSliceDataset", "empty", lambda m: m.data.Dataset.from_tensor_slices(
    np.zeros((0, 3), np.float32)), 0, "float32", end=False)
CASES += _case("TensorSliceDataset", "empty_rows", lambda m: m.data.Dataset.from_tensor_slices(
    np.zeros((2, 0), np.float32)), 2, "float32", end=False)
CASES += _case("TensorSliceDataset", "mismatched", lambda m: m.data.Dataset.from_tensor_slices(
    (np.zeros(3, np.float32), np.zeros(2, np.float32))), 1, "float32", end=False)
CASES += _case("TensorSliceDataset", "scalar", lambda m: m.data.Dataset.from_tensor_slices(
    np.float32(1.0)), 1, "float32", end=False)

CASES += _case("RangeDataset", "", lambda m: m.data.Dataset.range(5), 5)
CASES += _case("RangeDataset", "start_stop_step", lambda m: m.data.Dataset.range(2, 10, 3), 3)
CASES += _case("RangeDataset", "negative_step", lambda m: m.data.Dataset.range(5, 0, -2), 3)
CASES += _case("RangeDataset", "empty", lambda m: m.data.Dataset.range(0), 0, end=False)
CASES += _case("RangeDataset", "backwards", lambda m: m.data.Dataset.range(5, 2), 0,
               end=False)
CASES += _case("RangeDataset", "int32", lambda m: m.data.Dataset.range(
    -2, 2, output_type=m.int32), 4, "int32")
CASES += _case("RangeDataset", "zero_step", lambda m: m.data.Dataset.range(0, 5, 0), 1,
               end=False)

# ---------------------------------------------------------------- batching

CASES += _case("BatchDatasetV2", "", lambda m: m.data.Dataset.range(7).batch(3), 3)
CASES += _case("BatchDatasetV2", "drop_remainder",
               lambda m: m.data.Dataset.range(7).batch(3, drop_remainder=True), 2)
CASES += _case("BatchDatasetV2", "tuple", lambda m: m.data.Dataset.from_tensor_slices(
    (values("ds/batch/tuple", (5, 2)), np.arange(5, dtype=np.int32))).batch(2), 3, "float32")
CASES += _case("BatchDatasetV2", "larger_than_input",
               lambda m: m.data.Dataset.range(3).batch(10), 1)
CASES += _case("BatchDatasetV2", "larger_drop",
               lambda m: m.data.Dataset.range(3).batch(10, drop_remainder=True), 0, end=False)
CASES += _case("BatchDatasetV2", "zero_size", lambda m: m.data.Dataset.range(3).batch(0), 1,
               end=False)
CASES += _case("BatchDatasetV2", "ragged", lambda m: m.data.Dataset.range(1, 4).map(
    lambda x: m.fill(m.reshape(x, [1]), x)).batch(2), 1, end=False, covers=("MapDataset",))


def _ragged(m, dtype="int64"):
    return m.data.Dataset.range(1, 6).map(
        lambda x: m.cast(m.fill(m.reshape(x, [1]), x), m.as_dtype(dtype)))


CASES += _case("PaddedBatchDatasetV2", "", lambda m: _ragged(m).padded_batch(
    2, padded_shapes=[None]), 3, covers=("MapDataset",))
CASES += _case("PaddedBatchDatasetV2", "fixed_shape", lambda m: _ragged(m).padded_batch(
    2, padded_shapes=[6]), 3, covers=("MapDataset",))
CASES += _case("PaddedBatchDatasetV2", "padding_value", lambda m: _ragged(m, "float32")
               .padded_batch(2, padded_shapes=[None],
                             padding_values=m.constant(-1.5, m.float32)), 3, "float32",
               covers=("MapDataset",))
CASES += _case("PaddedBatchDatasetV2", "drop_remainder", lambda m: _ragged(m).padded_batch(
    2, padded_shapes=[None], drop_remainder=True), 2, covers=("MapDataset",))
CASES += _case("PaddedBatchDatasetV2", "too_small", lambda m: _ragged(m).padded_batch(
    2, padded_shapes=[3]), 2, end=False, covers=("MapDataset",))
CASES += _case("PaddedBatchDatasetV2", "tuple", lambda m: m.data.Dataset.range(1, 4).map(
    lambda x: (m.fill(m.reshape(x, [1]), m.cast(x, m.float32)), x)).padded_batch(
        2, padded_shapes=([None], [])), 2, "float32", covers=("MapDataset",))

# ---------------------------------------------------------------- order and count

CASES += _case("ShuffleDataset", "", lambda m: m.data.Dataset.range(10).shuffle(
    4, seed=7), 10)
CASES += _case("ShuffleDataset", "buffer_one", lambda m: m.data.Dataset.range(5).shuffle(
    1, seed=3), 5)
CASES += _case("ShuffleDataset", "repeat", lambda m: m.data.Dataset.range(4).shuffle(
    4, seed=11, reshuffle_each_iteration=False).repeat(2), 8, covers=("RepeatDataset",))
CASES += _case("ShuffleDataset", "reshuffle", lambda m: m.data.Dataset.range(4).shuffle(
    4, seed=11, reshuffle_each_iteration=True).repeat(2), 8, covers=("RepeatDataset",))

CASES += _case("RepeatDataset", "", lambda m: m.data.Dataset.range(3).repeat(2), 6)
CASES += _case("RepeatDataset", "zero", lambda m: m.data.Dataset.range(3).repeat(0), 0,
               end=False)
CASES += _case("RepeatDataset", "forever", lambda m: m.data.Dataset.range(3).repeat().take(7),
               7, covers=("TakeDataset",))
CASES += _case("RepeatDataset", "empty_forever",
               lambda m: m.data.Dataset.range(0).repeat(), 0, end=False)

CASES += _case("TakeDataset", "", lambda m: m.data.Dataset.range(10).take(3), 3)
CASES += _case("TakeDataset", "zero", lambda m: m.data.Dataset.range(10).take(0), 0,
               end=False)
CASES += _case("TakeDataset", "all", lambda m: m.data.Dataset.range(4).take(-1), 4)
CASES += _case("TakeDataset", "more", lambda m: m.data.Dataset.range(4).take(10), 4)

CASES += _case("SkipDataset", "", lambda m: m.data.Dataset.range(6).skip(2), 4)
CASES += _case("SkipDataset", "all", lambda m: m.data.Dataset.range(6).skip(-1), 0, end=False)
CASES += _case("SkipDataset", "more", lambda m: m.data.Dataset.range(3).skip(10), 0,
               end=False)
CASES += _case("SkipDataset", "zero", lambda m: m.data.Dataset.range(3).skip(0), 3)

CASES += _case("ShardDataset", "", lambda m: m.data.Dataset.range(10).shard(3, 1), 3)
CASES += _case("ShardDataset", "last", lambda m: m.data.Dataset.range(10).shard(3, 0), 4)
CASES += _case("ShardDataset", "bad_index", lambda m: m.data.Dataset.range(10).shard(3, 3), 1,
               end=False)
CASES += _case("ShardDataset", "zero_shards", lambda m: m.data.Dataset.range(10).shard(0, 0),
               1, end=False)

CASES += _case("ZipDataset", "", lambda m: m.data.Dataset.zip(
    (m.data.Dataset.range(3), m.data.Dataset.range(10, 15))), 3)
CASES += _case("ZipDataset", "nested", lambda m: m.data.Dataset.zip(
    (m.data.Dataset.range(2), (m.data.Dataset.from_tensor_slices(np.array([1.5, 2.5], np.float32)),
                               m.data.Dataset.range(5, 8)))), 2,
    covers=("TensorSliceDataset",))
CASES += _case("ZipDataset", "dict", lambda m: m.data.Dataset.zip(
    {"a": m.data.Dataset.range(2), "b": m.data.Dataset.range(3, 6)}), 2)

CASES += _case("PrefetchDataset", "", lambda m: m.data.Dataset.range(5).prefetch(2), 5)
CASES += _case("PrefetchDataset", "autotune",
               lambda m: m.data.Dataset.range(5).prefetch(-1), 5)
CASES += _case("PrefetchDataset", "zero", lambda m: m.data.Dataset.range(3).prefetch(0), 3)


def _options(m, cap=None):
    opts = m.data.Options()
    if cap is not None:
        opts.experimental_threading.max_intra_op_parallelism = cap
    return m.data.Dataset.range(4).map(lambda x: x * 2).with_options(opts)


CASES += _case("OptimizeDatasetV2", "", lambda m: _options(m), 4, covers=("MapDataset",))
CASES += _case("MaxIntraOpParallelismDataset", "", lambda m: _options(m, 1), 4,
               covers=("MapDataset", "OptimizeDatasetV2"))

CASES += _case("CacheDataset", "", lambda m: m.data.Dataset.range(3).map(
    lambda x: x * x).cache().repeat(2), 6, covers=("MapDataset", "RepeatDataset"))

# ---------------------------------------------------------------- functions

CASES += _case("MapDataset", "", lambda m: m.data.Dataset.from_tensor_slices(
    (values("ds/map/a", (4, 2)), np.arange(4, dtype=np.int32))).map(
        lambda a, b: (m.square(a) + m.cast(b, m.float32), b * 3)), 4, "float32")
CASES += _case("MapDataset", "capture", lambda m: m.data.Dataset.range(3).map(
    lambda x: m.cast(x, m.float64) * m.constant(0.5, m.float64)), 3, "float64")
CASES += _case("MapDataset", "dict", lambda m: m.data.Dataset.range(3).map(
    lambda x: {"sq": x * x, "neg": -x}), 3)
CASES += _case("MapDataset", "string", lambda m: m.data.Dataset.from_tensor_slices(
    np.array([b"a", b"bc"])).map(lambda s: (s, m.constant(1))), 2, "string")
CASES += _case("ParallelMapDatasetV2", "", lambda m: m.data.Dataset.range(8).map(
    lambda x: x * 10 + 1, num_parallel_calls=3), 8)
CASES += _case("ParallelMapDatasetV2", "deterministic", lambda m: m.data.Dataset.range(6).map(
    lambda x: m.cast(x, m.float32) / 4.0, num_parallel_calls=2, deterministic=True), 6,
    "float32")
CASES += _case("ParallelMapDatasetV2", "autotune", lambda m: m.data.Dataset.range(5).map(
    lambda x: -x, num_parallel_calls=-1), 5)

CASES += _case("FilterDataset", "", lambda m: m.data.Dataset.range(10).filter(
    lambda x: m.equal(m.floormod(x, 3), 0)), 4)
CASES += _case("FilterDataset", "none", lambda m: m.data.Dataset.range(5).filter(
    lambda x: x > 10), 0, end=False)
CASES += _case("FilterDataset", "tuple", lambda m: m.data.Dataset.from_tensor_slices(
    (np.array([1.0, -2.0, 3.0, -4.0], np.float32), np.arange(4, dtype=np.int64))).filter(
        lambda a, b: a > 0), 2, "float32")

CASES += _case("InterleaveDataset", "", lambda m: m.data.Dataset.range(1, 4).interleave(
    lambda x: m.data.Dataset.from_tensors(x).repeat(x), cycle_length=2, block_length=1), 6,
    covers=("TensorDataset", "RepeatDataset"))
CASES += _case("InterleaveDataset", "block", lambda m: m.data.Dataset.range(1, 4).interleave(
    lambda x: m.data.Dataset.range(x * 10, x * 10 + 3), cycle_length=2, block_length=2), 9,
    covers=("RangeDataset",))
CASES += _case("InterleaveDataset", "cycle_one", lambda m: m.data.Dataset.range(3).interleave(
    lambda x: m.data.Dataset.range(x), cycle_length=1), 3, covers=("RangeDataset",))
CASES += _case("InterleaveDataset", "flat_map", lambda m: m.data.Dataset.range(3).flat_map(
    lambda x: m.data.Dataset.range(x, x + 2)), 6, covers=("RangeDataset",))
CASES += _case("ParallelInterleaveDatasetV4", "", lambda m: m.data.Dataset.range(1, 4)
               .interleave(lambda x: m.data.Dataset.from_tensors(x).repeat(x), cycle_length=2,
                           block_length=1, num_parallel_calls=2), 6,
               covers=("TensorDataset", "RepeatDataset"))
CASES += _case("ParallelInterleaveDatasetV4", "deterministic", lambda m: m.data.Dataset.range(
    1, 5).interleave(lambda x: m.data.Dataset.range(x * 10, x * 10 + x), cycle_length=3,
                     block_length=2, num_parallel_calls=3, deterministic=True), 10,
    covers=("RangeDataset",))

def _failing_map(m):
    """1/x through check_numerics: the element 0 raises InvalidArgumentError."""
    return m.data.Dataset.from_tensor_slices(np.array([1.0, 2.0, 0.0, 4.0, 0.0, 8.0], np.float32)
                                             ).map(lambda x: m.check_numerics(1.0 / x, "inf"))


CASES += _case("IgnoreErrorsDataset", "", lambda m: _failing_map(m).apply(
    m.data.experimental.ignore_errors()), 4, "float32", covers=("MapDataset",))
CASES += _case("MapDataset", "error", _failing_map, 3, "float32", end=False)
CASES += _case("IgnoreErrorsDataset", "no_errors", lambda m: m.data.Dataset.range(3).apply(
    m.data.experimental.ignore_errors()), 3)

# ---------------------------------------------------------------- iterators


def _reinitialize(m):
    """An initializable iterator restarts when its initializer runs again."""
    ds = m.data.Dataset.range(3)
    it = m.data.make_initializable_iterator(ds)
    outs = ordered(m, [it.get_next, it.get_next, lambda: it.make_initializer(ds), it.get_next])
    return [outs[0], outs[1], outs[3]], {}, [it.initializer]


def _from_structure(m):
    """Iterator.from_structure with two datasets of one structure."""
    it = m.data.Iterator.from_structure(m.int64, m.TensorShape([]))
    a = it.make_initializer(m.data.Dataset.range(3))
    ds_b = m.data.Dataset.range(100, 103)
    outs = ordered(m, [it.get_next, lambda: it.make_initializer(ds_b), it.get_next, it.get_next])
    return [outs[0], outs[2], outs[3]], {}, [a]


def _uninitialized(m):
    it = m.data.make_initializable_iterator(m.data.Dataset.range(3))
    return [it.get_next()], {}, []


def _fed(m):
    """A dataset of a fed placeholder, read through an initializable iterator."""
    p = m.placeholder(m.float32, shape=[None])
    it = m.data.make_initializable_iterator(m.data.Dataset.from_tensor_slices(p))
    outs = ordered(m, [it.get_next, it.get_next])
    return outs, {p: np.array([2.5, -1.0, 4.0], np.float32)}, [it.initializer]


for _name, _prog in (("reinitialize", _reinitialize), ("from_structure", _from_structure),
                     ("uninitialized", _uninitialized), ("fed", _fed)):
    CASES.append(Case("IteratorV2", variant="program_" + _name, dtype="int64", program=_prog,
                      covers=("MakeIterator", "IteratorGetNext", "RangeDataset",
                              "TensorSliceDataset")))
