"""PyFunc (ops/script_ops.cc) through py_func: small numpy functions, their outputs' dtypes,
several outputs, fed inputs, and the errors a function can raise (their error classes)."""

import numpy as np

from conformance.program_util import values
from conformance.table import Case

CASES = []


def _case(variant, program, dtype="float32"):
    return Case("PyFunc", variant="program" + ("_" + variant if variant else ""), dtype=dtype,
                program=program)


def _binary(dtype):
    def program(m):
        x = m.constant(values("py/x/" + dtype, (2, 3), dtype, -50, 50))
        y = m.constant(values("py/y/" + dtype, (2, 3), dtype, -50, 50))
        out = m.py_func(lambda a, b: (a * 2 - b).astype(a.dtype), [x, y], m.as_dtype(dtype))
        return [out], {}, []
    return program


for _dt in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
            "uint16"):
    CASES.append(_case("", _binary(_dt), _dt))


def _multi(m):
    x = m.constant(values("py/multi", (4,)))
    outs = m.py_func(lambda a: (np.cumsum(a), (a > 0).astype(np.int32), a < 0, a.astype(np.int64)),
                     [x], [m.float32, m.int32, m.bool, m.int64])
    return outs, {}, []


def _strings(m):
    x = m.constant(np.array([b"ab", b"", b"xyz"]), dtype=m.string)
    out = m.py_func(lambda a: np.array([s[::-1] + b"!" for s in a], dtype=object), [x],
                    m.string)
    return [out], {}, []


def _no_inputs(m):
    return [m.py_func(lambda: np.array([1, 2, 3], np.int64), [], m.int64)], {}, []


def _scalar(m):
    return [m.py_func(lambda a: a * a, [m.constant(3.0)], m.float32)], {}, []


def _empty(m):
    x = m.constant(np.zeros((0, 3), np.float32))
    return [m.py_func(lambda a: a.sum(axis=0).astype(np.float32), [x], m.float32)], {}, []


def _fed(m):
    p = m.placeholder(m.float64, shape=None)
    out = m.py_func(lambda a: np.sort(a), [p], m.float64)
    return [out + 1.0], {p: np.array([3.0, -1.0, 2.5])}, []


def _stateless(m):
    x = m.constant([1.0, 2.0])
    return [m.py_func(lambda a: a[::-1].copy(), [x], m.float32, stateful=False)], {}, []


def _python_scalar_result(m):
    """A Python float result is converted to Tout (float32)."""
    return [m.py_func(lambda: 1.5, [], m.float32)], {}, []


def _chained(m):
    """The output of one py_func feeds graph ops and another py_func."""
    a = m.py_func(lambda: np.arange(4, dtype=np.float32), [], m.float32)
    b = m.py_func(lambda v: v * 10, [m.square(a)], m.float32)
    return [a, b], {}, []


def _raises(exc):
    def program(m):
        def fn(a):
            raise exc("bad input")
        return [m.py_func(fn, [m.constant(1.0)], m.float32)], {}, []
    return program


def _wrong_dtype(m):
    return [m.py_func(lambda a: a.astype(np.float64), [m.constant([1.0])], m.float32)], {}, []


def _wrong_count(m):
    return m.py_func(lambda a: (a, a), [m.constant([1.0])], [m.float32]), {}, []


def _none_result(m):
    return [m.py_func(lambda a: None, [m.constant([1.0])], m.float32)], {}, []


def _no_outputs(m):
    """Tout []: an op run for its effect; a constant fetched after it."""
    op = m.py_func(lambda a: None, [m.constant([1.0])], [])
    with m.control_dependencies([op]):
        out = m.constant(4.0) + 0.0
    return [out], {}, []


for _name, _prog in (("multi_output", _multi), ("strings", _strings),
                     ("no_inputs", _no_inputs), ("scalar", _scalar), ("empty", _empty),
                     ("fed", _fed), ("stateless", _stateless),
                     ("python_scalar", _python_scalar_result), ("chained", _chained),
                     ("value_error", _raises(ValueError)), ("type_error", _raises(TypeError)),
                     ("runtime_error", _raises(RuntimeError)),
                     ("not_implemented", _raises(NotImplementedError)),
                     ("stop_iteration", _raises(StopIteration)),
                     ("wrong_dtype", _wrong_dtype), ("wrong_count", _wrong_count),
                     ("none_result", _none_result), ("no_outputs", _no_outputs)):
    CASES.append(_case(_name, _prog))
