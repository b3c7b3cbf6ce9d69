"""tx.py_func (TF 1.x's tf.py_func): a plain Python function as a graph op (PyFunc).

The slow fallback for work that has no op: every call runs in this process's interpreter under
the GIL (one call at a time, whatever num_parallel_calls says, and never on another machine);
prefer ops, which tf.data map functions run in C++ with no Python in the loop. The graph holds
only a token naming the function, so a graph with a py_func cannot be exported and run in
another process.

The function receives numpy arrays (strings as object arrays of bytes) and returns a value per
Tout dtype, converted with np.asarray(value, dtype). Exceptions it raises become the op's error,
naming the node, with codes as in TF's py_func: ValueError / TypeError -> InvalidArgumentError,
StopIteration -> OutOfRangeError, MemoryError -> ResourceExhaustedError, NotImplementedError ->
UnimplementedError, a tx.errors.OpError -> its own code, anything else -> UnknownError."""

import itertools
import threading
import weakref

import numpy as np

from tensorflux.framework import _pywrap
from tensorflux.framework import dtypes
from tensorflux.framework import errors
from tensorflux.framework import ops
from tensorflux.framework.op_def_library import apply_op

_lock = threading.Lock()
_funcs = {}  # token -> (func, [Tout DTypes]), dropped when the graph that holds the op dies
_counter = itertools.count()

_EXCEPTION_CODES = (
    ((ValueError, TypeError), errors.INVALID_ARGUMENT),
    ((StopIteration,), errors.OUT_OF_RANGE),
    ((MemoryError,), errors.RESOURCE_EXHAUSTED),
    ((NotImplementedError,), errors.UNIMPLEMENTED),
)


def _numpy_dtype(dtype):
    return object if dtype == dtypes.string else dtype.as_numpy_dtype


def _dispatch(token, args):
    """Called by the PyFunc kernel with the GIL: (0, [values]) or (error code, message)."""
    with _lock:
        entry = _funcs.get(token)
    if entry is None:
        return errors.INVALID_ARGUMENT, "py_func %r is not registered in this process" % token
    func, touts = entry
    try:
        ret = func(*args)
        if ret is None and not touts:
            ret = []
        elif not isinstance(ret, (list, tuple)):
            ret = [ret]
        if len(ret) != len(touts):
            return errors.INVALID_ARGUMENT, (
                "py_func %s returned %d values, Tout has %d" % (token, len(ret), len(touts)))
        return 0, [np.asarray(v, dtype=_numpy_dtype(t)) for v, t in zip(ret, touts)]
    except errors.OpError as e:
        return e.error_code, "%s: %s" % (type(e).__name__, e.message)
    except Exception as e:  # pylint: disable=broad-except
        code = next((c for types, c in _EXCEPTION_CODES if isinstance(e, types)), errors.UNKNOWN)
        return code, "%s: %s" % (type(e).__name__, e)


_pywrap.set_py_func_dispatcher(_dispatch)


def _forget(token):
    with _lock:
        _funcs.pop(token, None)


def py_func(func, inp, Tout, stateful=True, name=None):  # pylint: disable=invalid-name
    """Wraps func(*numpy inputs) as an op (PyFunc). Tout is a dtype (one output, returned as a
    Tensor) or a list of dtypes (a list returned; [] returns the Operation). The outputs' shapes
    are unknown (set_shape them when known). stateful is accepted for TF's signature; the op is
    always stateful (never constant-folded or merged)."""
    del stateful
    single = not isinstance(Tout, (list, tuple))
    touts = [dtypes.as_dtype(t) for t in ([Tout] if single else Tout)]
    token = "pyfunc_%d" % next(_counter)
    with _lock:
        _funcs[token] = (func, touts)
    inputs = [ops.convert_to_tensor(x) for x in inp]
    owner = ops._graph_from_values(inputs)  # pylint: disable=protected-access
    while getattr(owner, "_outer_graph", None) is not None:  # a traced function's: the outermost
        owner = owner._outer_graph  # pylint: disable=protected-access
    weakref.finalize(owner, _forget, token)
    out = apply_op("PyFunc", input=inputs, token=token, Tout=touts, name=name or "PyFunc")
    if not touts:  # apply_op answers [] for an empty list output: return the Operation
        return ops._graph_from_values(inputs).get_operations()[-1]  # pylint: disable=protected-access
    out = out if isinstance(out, list) else [out]
    return out[0] if single else out
