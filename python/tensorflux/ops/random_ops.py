"""Random values (TF 1.x names and defaults): random_normal, truncated_normal, random_uniform,
random_shuffle, and the graph-level seed (set_random_seed / get_seed).

Every op takes TF's (seed, seed2) attrs and draws from a Philox stream keyed by them, so a graph
built with seeds gives the same values in every process; each run of a node continues its
stream. The Python `seed=` argument maps to (seed, seed2) as TF 2.x's tf.compat.v1 get_seed
does:

    graph seed  op seed   ->  (seed, seed2)
    None        None          (0, 0): nondeterministic
    None        s             (87654321, s)
    g           None          (g, k): k counts the earlier such calls in this graph (0, 1, ...)
    g           s             (g, s)

Seeds are reduced mod 2^31 - 1, and (0, 0) from explicit seeds becomes (0, 2^31 - 1) so that
only "no seed at all" is nondeterministic.
"""

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework import tensor_shape
from tensorflux.framework.op_def_library import apply_op
from tensorflux.ops import math_ops

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1


def _truncate_seed(seed):
    return int(seed) % _MAXINT32


def get_seed(op_seed):
    """The (seed, seed2) pair for an op given its `seed=` argument and the default graph's
    seed (see the module docstring). Returns (None, None) when neither is set."""
    graph = ops.get_default_graph()
    graph_seed = graph.seed
    if graph_seed is not None:
        if op_seed is None:
            # TF 2.x: a per-graph counter of the calls without an op seed (TF 1.x used the
            # graph's op count), so adding other ops does not change the seeds.
            op_seed = getattr(graph, "_seed_counter", 0)
            graph._seed_counter = op_seed + 1  # pylint: disable=protected-access
        seeds = (_truncate_seed(graph_seed), _truncate_seed(op_seed))
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, _truncate_seed(op_seed))
    else:
        return None, None
    if seeds == (0, 0):
        return 0, _MAXINT32
    return seeds


def set_random_seed(seed):
    """Sets the default graph's seed; ops created afterwards without an op seed get
    (seed, k) as their seeds, k counting such ops (see get_seed). None clears it."""
    ops.get_default_graph().seed = None if seed is None else int(seed)


def _seed_attrs(seed):
    seed1, seed2 = get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}


def _shape_tensor(shape):
    """`shape` (list, tuple, TensorShape, numpy array or 1-D int Tensor) as a 1-D int32 tensor
    (int64 when a dimension needs it)."""
    if isinstance(shape, ops.Tensor):
        return shape
    if isinstance(shape, tensor_shape.TensorShape):
        if not shape.is_fully_defined():
            raise ValueError("Cannot make a random tensor of partially known shape %s" % shape)
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)) and not any(isinstance(d, ops.Tensor) for d in shape):
        dims = [tensor_shape.dimension_value(d) for d in shape]
        if any(d is None for d in dims):
            raise ValueError("Cannot make a random tensor of partially known shape %s" % (shape,))
        big = any(abs(int(d)) > _MAXINT32 for d in dims)
        return ops.convert_to_tensor(np.array(dims, dtype=np.int64 if big else np.int32),
                                     name="shape")
    return ops.convert_to_tensor(shape, name="shape", preferred_dtype=dtypes.int32)


def _float_dtype(dtype, fn):
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype not in (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64):
        raise ValueError("%s: dtype must be half, bfloat16, float32 or float64, got %s"
                         % (fn, dtype.name))
    return dtype


def _scaled(op_type, fn, shape, mean, stddev, dtype, seed, name, default_name):
    dtype = _float_dtype(dtype, fn)
    with ops.name_scope(name, default_name, [shape, mean, stddev]) as scope:
        shape_t = _shape_tensor(shape)
        mean_t = ops.convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = ops.convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = apply_op(op_type, shape=shape_t, dtype=dtype, name=op_type, **_seed_attrs(seed))
        return math_ops.add(rnd * stddev_t, mean_t, name=scope)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal values: RandomStandardNormal * stddev + mean."""
    return _scaled("RandomStandardNormal", "random_normal", shape, mean, stddev, dtype, seed,
                   name, "random_normal")


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal values more than 2 stddev from the mean redrawn: TruncatedNormal * stddev + mean."""
    return _scaled("TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype, seed, name,
                   "truncated_normal")


def _is_python_int(v, value):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v == value


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Uniform values in [minval, maxval). Floating dtypes (maxval defaults to 1) use
    RandomUniform scaled to the range; int32/int64 (maxval required) use RandomUniformInt,
    which fails with InvalidArgumentError at run time unless minval < maxval."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype not in (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64,
                     dtypes.int32, dtypes.int64):
        raise ValueError("random_uniform: invalid dtype %s" % dtype.name)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError("Must specify maxval for integer dtype %r" % dtype)
        maxval = 1
    with ops.name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        shape_t = _shape_tensor(shape)
        lo_is_zero = _is_python_int(minval, 0)
        hi_is_one = _is_python_int(maxval, 1)
        if dtype.is_integer or not (lo_is_zero and hi_is_one):
            minval = ops.convert_to_tensor(minval, dtype=dtype, name="min")
            maxval = ops.convert_to_tensor(maxval, dtype=dtype, name="max")
        seeds = _seed_attrs(seed)
        if dtype.is_integer:
            return apply_op("RandomUniformInt", shape=shape_t, minval=minval, maxval=maxval,
                            name=scope, **seeds)
        if lo_is_zero and hi_is_one:
            return apply_op("RandomUniform", shape=shape_t, dtype=dtype, name=scope, **seeds)
        rnd = apply_op("RandomUniform", shape=shape_t, dtype=dtype, name="RandomUniform",
                       **seeds)
        if lo_is_zero:
            return math_ops.multiply(rnd, maxval, name=scope)
        return math_ops.add(rnd * (maxval - minval), minval, name=scope)


def random_shuffle(value, seed=None, name=None):
    """`value` with its slices along dimension 0 in a random order (RandomShuffle)."""
    seeds = _seed_attrs(seed)
    return apply_op("RandomShuffle", value=value, name=name or "RandomShuffle", **seeds)
