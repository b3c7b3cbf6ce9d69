"""Reference variables (ops/state_ops.cc): VariableV2, Variable, Assign, AssignAdd, AssignSub,
IsVariableInitialized. Ref edges cannot be fed, so every case is a program: it creates a
variable with raw_ops, assigns seeded values and fetches the variable through Identity."""

import numpy as np

from conformance.program_util import ordered, values
from conformance.table import Case

CASES = []


def _var(m, dtype, shape, op="VariableV2", name="v"):
    return getattr(m.raw_ops, op)(shape=shape, dtype=m.as_dtype(dtype), name=name)


def _const(m, arr):
    arr = np.asarray(arr)
    dt = "string" if arr.dtype.kind in "SUO" else arr.dtype.name
    return m.constant(arr, dtype=m.as_dtype(dt))


def _assign_program(dtype, shape, value, op="VariableV2", validate_shape=True,
                    use_locking=True):
    def program(m):
        v = _var(m, dtype, shape, op)
        a = m.raw_ops.Assign(ref=v, value=_const(m, value), validate_shape=validate_shape,
                             use_locking=use_locking)
        with m.control_dependencies([a]):
            after = m.identity(v)
        return [m.identity(a), after], {}, []
    return program


def _case(op, variant, dtype, program, covers, **kw):
    return Case(op, variant="program" + ("_" + variant if variant else ""), dtype=dtype,
                program=program, covers=covers, **kw)


# Assign: every dtype both systems hold, scalar, empty, specials.
for _dt in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
            "uint16", "bool"):
    _v = values("state/assign/" + _dt, (2, 3), _dt, -100, 100)
    CASES.append(_case("Assign", "", _dt, _assign_program(_dt, [2, 3], _v),
                       ("VariableV2",)))
CASES.append(_case("Assign", "", "string", _assign_program(
    "string", [3], np.array([b"a", b"", b"xyz"])), ("VariableV2",)))
CASES.append(_case("Assign", "scalar", "float32",
                   _assign_program("float32", [], np.float32(2.5)), ("VariableV2",)))
CASES.append(_case("Assign", "empty", "float32",
                   _assign_program("float32", [0, 3], np.zeros((0, 3), np.float32)),
                   ("VariableV2",)))
CASES.append(_case("Assign", "specials", "float32", _assign_program(
    "float32", [4], np.array([np.nan, np.inf, -np.inf, -0.0], np.float32)), ("VariableV2",)))
CASES.append(_case("Assign", "int_limits", "int64", _assign_program(
    "int64", [2], np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max])),
    ("VariableV2",)))
CASES.append(_case("Assign", "old_variable_op", "float32", _assign_program(
    "float32", [2], np.array([1.0, 2.0], np.float32), op="Variable"), ("Variable",)))
CASES.append(_case("Assign", "no_locking", "float32", _assign_program(
    "float32", [2], np.array([1.0, 2.0], np.float32), use_locking=False), ("VariableV2",)))
# Declared shape [2, 3], value [3]: refused by the shape function (validate_shape) ...
CASES.append(_case("Assign", "shape_mismatch", "float32", _assign_program(
    "float32", [2, 3], np.zeros(3, np.float32)), ("VariableV2",)))
# ... and allowed without validate_shape: the variable takes the value's shape.
CASES.append(_case("Assign", "no_validate_shape", "float32", _assign_program(
    "float32", [2, 3], np.arange(3, dtype=np.float32), validate_shape=False),
    ("VariableV2",)))


def _reassign(validate_shape):
    """Assign [2] then (fed, unknown static shape) [3]."""
    def program(m):
        v = _var(m, "float32", [2])
        p = m.placeholder(m.float32, shape=None)
        first = m.raw_ops.Assign(ref=v, value=m.constant([1.0, 2.0]))
        second = m.raw_ops.Assign(ref=v, value=p, validate_shape=validate_shape)
        return [m.identity(v)], {p: np.array([3.0, 4.0, 5.0], np.float32)}, [first, second]
    return program


CASES.append(_case("Assign", "reassign_other_shape", "float32", _reassign(True),
                   ("VariableV2",)))
CASES.append(_case("Assign", "reassign_no_validate", "float32", _reassign(False),
                   ("VariableV2",)))


def _uninitialized_read(m):
    v = _var(m, "float32", [2])
    return [m.identity(v)], {}, []


CASES.append(_case("VariableV2", "uninitialized_read", "float32", _uninitialized_read, ()))


def _is_initialized(op):
    def program(m):
        v = _var(m, "float32", [2], op)
        outs = ordered(m, [
            lambda: m.raw_ops.IsVariableInitialized(ref=v),
            lambda: m.raw_ops.Assign(ref=v, value=m.constant([1.0, 2.0])),
            lambda: m.raw_ops.IsVariableInitialized(ref=v)])
        return [outs[0], outs[2]], {}, []
    return program


CASES.append(_case("IsVariableInitialized", "", "float32", _is_initialized("VariableV2"),
                   ("VariableV2", "Assign")))
CASES.append(_case("IsVariableInitialized", "old_variable_op", "float32",
                   _is_initialized("Variable"), ("Variable", "Assign")))


def _update_program(op, dtype, shape, steps=2, use_locking=False):
    def program(m):
        v = _var(m, dtype, shape)
        init = m.raw_ops.Assign(ref=v, value=_const(m, values(
            "state/%s/%s/init" % (op, dtype), shape, dtype, -50, 50)))
        updates = [getattr(m.raw_ops, op)(
            ref=v, value=_const(m, values("state/%s/%s/%d" % (op, dtype, i), shape, dtype,
                                          -20, 20)),
            use_locking=use_locking) for i in range(steps)]
        with m.control_dependencies([updates[-1]]):
            after = m.identity(v)
        return [m.identity(updates[-1]), after], {}, [init] + updates[:-1]
    return program


for _op in ("AssignAdd", "AssignSub"):
    for _dt in ("float16", "float32", "float64", "int32", "int64"):
        CASES.append(_case(_op, "", _dt, _update_program(_op, _dt, [2, 3]),
                           ("VariableV2", "Assign")))
    CASES.append(_case(_op, "scalar", "float32", _update_program(_op, "float32", []),
                       ("VariableV2", "Assign")))
    CASES.append(_case(_op, "empty", "float32", _update_program(_op, "float32", [0]),
                       ("VariableV2", "Assign")))
    CASES.append(_case(_op, "use_locking", "float64",
                       _update_program(_op, "float64", [3], use_locking=True),
                       ("VariableV2", "Assign")))


def _int_wrap(op):
    """int32 max + 1 and min - 1 wrap around."""
    def program(m):
        v = _var(m, "int32", [2])
        info = np.iinfo(np.int32)
        init = m.raw_ops.Assign(ref=v, value=m.constant([info.max, info.min], m.int32))
        step = m.constant([1, 1] if op == "AssignAdd" else [-1, -1], m.int32)
        upd = getattr(m.raw_ops, op)(ref=v, value=step)
        return [m.identity(v)], {}, [init, upd]
    return program


CASES.append(_case("AssignAdd", "wrap", "int32", _int_wrap("AssignAdd"),
                   ("VariableV2", "Assign")))
CASES.append(_case("AssignSub", "wrap", "int32", _int_wrap("AssignSub"),
                   ("VariableV2", "Assign")))


def _update_uninitialized(op):
    def program(m):
        v = _var(m, "float32", [2])
        upd = getattr(m.raw_ops, op)(ref=v, value=m.constant([1.0, 2.0]))
        return [m.identity(upd)], {}, []
    return program


def _update_bad_shape(op, fed):
    def program(m):
        v = _var(m, "float32", [2])
        init = m.raw_ops.Assign(ref=v, value=m.constant([1.0, 2.0]))
        if fed:
            p = m.placeholder(m.float32, shape=None)
            upd = getattr(m.raw_ops, op)(ref=v, value=p)
            return [m.identity(upd)], {p: np.ones(3, np.float32)}, [init]
        upd = getattr(m.raw_ops, op)(ref=v, value=m.constant([1.0, 2.0, 3.0]))
        return [m.identity(upd)], {}, [init]
    return program


for _op in ("AssignAdd", "AssignSub"):
    CASES.append(_case(_op, "uninitialized", "float32", _update_uninitialized(_op),
                       ("VariableV2",)))
    CASES.append(_case(_op, "bad_shape_static", "float32", _update_bad_shape(_op, False),
                       ("VariableV2", "Assign")))
    CASES.append(_case(_op, "bad_shape_fed", "float32", _update_bad_shape(_op, True),
                       ("VariableV2", "Assign")))
