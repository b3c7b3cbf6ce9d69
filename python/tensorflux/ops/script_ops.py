"""tx.py_func (TF 1.x's tf.py_func): a plain Python function as a graph op (PyFunc).

The slow fallback for work that has no op: every call runs in this process's interpreter under
the GIL (one call at a time, whatever num_parallel_calls says, and never on another machine);
prefer ops, which tf.data map functions run in C++ with no Python in the loop. The graph holds
only a token naming the function, so a graph with a py_func cannot be exported and run in
another process.

The function receives numpy arrays (strings as object arrays of bytes) and returns a value per
Tout dtype, converted with np.asarray(value) as TF does, without a cast: its dtype must be Tout's
(a Python float is float64, an int int64), InvalidArgumentError otherwise ("returns float64
values but expects float32"); for a string Tout, bytes or str (UTF-8 encoded). Exceptions it
raises become the op's error, naming the node, with codes as in TF's py_func: ValueError /
TypeError -> InvalidArgumentError, StopIteration -> OutOfRangeError, MemoryError ->
ResourceExhaustedError, NotImplementedError -> UnimplementedError, a tx.errors.OpError -> its own
code, anything else -> UnknownError."""

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


class _WrongResult(Exception):
    pass


def _convert(token, value, tout):
    """value as TF's FuncRegistry._convert makes it (np.asarray, no cast), checked against
    tout as TF's PyFunc kernel does."""
    if tout == dtypes.string:
        result = np.asarray(value)
        if result.dtype.kind in "SO":
            return np.asarray(value, dtype=object)
        if result.dtype.kind == "U":
            return np.asarray([s.encode("utf-8") for s in result.reshape(-1)],
                              dtype=object).reshape(result.shape)
    else:
        result = np.asarray(value)
        if result.dtype == tout.as_numpy_dtype:
            return result
    got = result.dtype.name if result.dtype.kind != "O" else "object (%s)" % (
        type(value).__name__,)
    raise _WrongResult("py_func %s returns %s values but expects %s" % (token, got, tout.name))


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
        return 0, [_convert(token, v, t) for v, t in zip(ret, touts)]
    except _WrongResult as e:
        return errors.INVALID_ARGUMENT, str(e)
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
