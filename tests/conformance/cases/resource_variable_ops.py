"""Resource variables (ops/resource_variable_ops.cc): VarHandleOp, ReadVariableOp,
AssignVariableOp, AssignAddVariableOp, AssignSubVariableOp, VarIsInitializedOp,
DestroyResourceOp. Program cases built with raw_ops (and one with the Variable class): seeded
values assigned, updated and read back in one ordered run."""

import numpy as np

from conformance.program_util import ordered, values
from conformance.table import Case

CASES = []
ALL = ("VarHandleOp", "AssignVariableOp", "ReadVariableOp")
NO_HANDLE_DATA = ("TensorFlux's shape functions do not see a resource handle's declared dtype "
                  "and shape (TF's handle data): an AssignVariableOp TF refuses at graph "
                  "construction runs, creating the variable from the value")


def _const(m, arr):
    arr = np.asarray(arr)
    dt = "string" if arr.dtype.kind in "SUO" else arr.dtype.name
    return m.constant(arr, dtype=m.as_dtype(dt))


def _handle(m, dtype, shape, name="v"):
    return m.raw_ops.VarHandleOp(dtype=m.as_dtype(dtype), shape=shape, shared_name=name,
                                 container="", name=name)


def _read(m, h, dtype):
    return m.raw_ops.ReadVariableOp(resource=h, dtype=m.as_dtype(dtype))


def _case(op, variant, dtype, program, covers=ALL, **kw):
    return Case(op, variant="program" + ("_" + variant if variant else ""), dtype=dtype,
                program=program, covers=[c for c in covers if c != op], **kw)


def _assign_read(dtype, shape, value):
    def program(m):
        h = _handle(m, dtype, shape)
        outs = ordered(m, [lambda: m.raw_ops.AssignVariableOp(resource=h, value=_const(m, value)),
                           lambda: _read(m, h, dtype)])
        return outs[1:], {}, []
    return program


for _dt in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
            "uint16", "uint32", "uint64", "bool"):
    CASES.append(_case("AssignVariableOp", "", _dt, _assign_read(
        _dt, [2, 3], values("rv/assign/" + _dt, (2, 3), _dt, -100, 100))))
CASES.append(_case("AssignVariableOp", "", "string", _assign_read(
    "string", [3], np.array([b"a", b"", b"xyz"]))))
CASES.append(_case("AssignVariableOp", "scalar", "float32",
                   _assign_read("float32", [], np.float32(-1.5))))
CASES.append(_case("AssignVariableOp", "empty", "float32",
                   _assign_read("float32", [2, 0], np.zeros((2, 0), np.float32))))
CASES.append(_case("AssignVariableOp", "specials", "float64", _assign_read(
    "float64", [4], np.array([np.nan, np.inf, -np.inf, -0.0]))))
CASES.append(_case("AssignVariableOp", "int_limits", "int64", _assign_read(
    "int64", [2], np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max]))))
# TF checks the value against the handle's declared shape when the graph is built.
CASES.append(_case("AssignVariableOp", "other_shape", "float32",
                   _assign_read("float32", [2, 3], np.arange(4, dtype=np.float32)),
                   deviation=NO_HANDLE_DATA))


def _reassign(validate_shape, shape2, declared=(2,)):
    def program(m):
        h = _handle(m, "float32", m.TensorShape(declared))
        outs = ordered(m, [
            lambda: m.raw_ops.AssignVariableOp(resource=h, value=m.constant([1.0, 2.0])),
            lambda: m.raw_ops.AssignVariableOp(
                resource=h, value=m.constant(np.arange(np.prod(shape2), dtype=np.float32)
                                             .reshape(shape2)), validate_shape=validate_shape),
            lambda: _read(m, h, "float32")])
        return outs[2:], {}, []
    return program


CASES.append(_case("AssignVariableOp", "reassign_other_shape", "float32",
                   _reassign(False, (3,)), deviation=NO_HANDLE_DATA))
CASES.append(_case("AssignVariableOp", "validate_shape", "float32",
                   _reassign(True, (2,))))
CASES.append(_case("AssignVariableOp", "validate_shape_mismatch", "float32",
                   _reassign(True, (3,))))
# The same with a handle of unknown shape: the kernels decide at run time.
CASES.append(_case("AssignVariableOp", "reassign_other_shape_dynamic", "float32",
                   _reassign(False, (3,), None)))
CASES.append(_case("AssignVariableOp", "validate_shape_mismatch_dynamic", "float32",
                   _reassign(True, (3,), None)))
CASES.append(_case("AssignVariableOp", "validate_shape_rank_dynamic", "float32",
                   _reassign(True, (2, 1), None)))


def _wrong_dtype_assign(m):
    h = _handle(m, "float32", [2])
    a = m.raw_ops.AssignVariableOp(resource=h, value=m.constant([1, 2], m.int32))
    return [], {}, [a]


def _wrong_dtype_read(m):
    h = _handle(m, "float32", [2])
    outs = ordered(m, [lambda: m.raw_ops.AssignVariableOp(resource=h,
                                                          value=m.constant([1.0, 2.0])),
                       lambda: _read(m, h, "int32")])
    return outs[1:], {}, []


def _uninitialized_read(m):
    h = _handle(m, "float32", [2])
    return [_read(m, h, "float32")], {}, []


CASES.append(_case("AssignVariableOp", "wrong_dtype", "float32", _wrong_dtype_assign,
                   deviation=NO_HANDLE_DATA))
CASES.append(_case("ReadVariableOp", "wrong_dtype", "float32", _wrong_dtype_read))
CASES.append(_case("ReadVariableOp", "uninitialized", "float32", _uninitialized_read))


def _snapshot(m):
    """A read before an update keeps the old value; one after sees the new one."""
    h = _handle(m, "float32", [3])
    outs = ordered(m, [
        lambda: m.raw_ops.AssignVariableOp(resource=h, value=m.constant([1.0, 2.0, 3.0])),
        lambda: _read(m, h, "float32"),
        lambda: m.raw_ops.AssignAddVariableOp(resource=h, value=m.constant([10.0, 10.0, 10.0])),
        lambda: _read(m, h, "float32")])
    return [outs[1], outs[3]], {}, []


CASES.append(_case("ReadVariableOp", "snapshot", "float32", _snapshot,
                   ALL + ("AssignAddVariableOp",)))


def _shared(m):
    """Two handles with one shared_name name one variable."""
    h1 = _handle(m, "float32", [2], "shared")
    h2 = m.raw_ops.VarHandleOp(dtype=m.float32, shape=[2], shared_name="shared",
                               container="", name="other")
    outs = ordered(m, [lambda: m.raw_ops.AssignVariableOp(resource=h1, value=m.constant([4.0, 5.0])),
                       lambda: _read(m, h2, "float32")])
    return outs[1:], {}, []


CASES.append(_case("VarHandleOp", "shared_name", "float32", _shared))


def _update(op, dtype, shape, steps=2):
    def program(m):
        h = _handle(m, dtype, shape)
        makers = [lambda: m.raw_ops.AssignVariableOp(resource=h, value=_const(m, values(
            "rv/%s/%s/init" % (op, dtype), shape, dtype, -50, 50)))]
        for i in range(steps):
            makers.append(lambda i=i: getattr(m.raw_ops, op)(resource=h, value=_const(m, values(
                "rv/%s/%s/%d" % (op, dtype, i), shape, dtype, -20, 20))))
            makers.append(lambda: _read(m, h, dtype))
        outs = ordered(m, makers)
        return outs[2::2], {}, []
    return program


for _op in ("AssignAddVariableOp", "AssignSubVariableOp"):
    for _dt in ("float16", "float32", "float64", "int32", "int64"):
        CASES.append(_case(_op, "", _dt, _update(_op, _dt, [2, 3])))
    CASES.append(_case(_op, "scalar", "float32", _update(_op, "float32", [])))
    CASES.append(_case(_op, "empty", "float32", _update(_op, "float32", [0])))


def _update_wrap(op):
    def program(m):
        h = _handle(m, "int32", [2])
        info = np.iinfo(np.int32)
        step = [1, 1] if op == "AssignAddVariableOp" else [-1, -1]
        outs = ordered(m, [
            lambda: m.raw_ops.AssignVariableOp(resource=h, value=m.constant(
                [info.max, info.min], m.int32)),
            lambda: getattr(m.raw_ops, op)(resource=h, value=m.constant(step, m.int32)),
            lambda: _read(m, h, "int32")])
        return outs[2:], {}, []
    return program


def _update_uninitialized(op):
    def program(m):
        h = _handle(m, "float32", [2])
        outs = ordered(m, [lambda: getattr(m.raw_ops, op)(resource=h, value=m.constant([1.0, 2.0])),
                           lambda: _read(m, h, "float32")])
        return outs[1:], {}, []
    return program


def _update_bad_shape(op, declared=(2,)):
    def program(m):
        h = _handle(m, "float32", m.TensorShape(declared))
        outs = ordered(m, [
            lambda: m.raw_ops.AssignVariableOp(resource=h, value=m.constant([1.0, 2.0])),
            lambda: getattr(m.raw_ops, op)(resource=h, value=m.constant([1.0, 2.0, 3.0])),
            lambda: _read(m, h, "float32")])
        return outs[2:], {}, []
    return program


def _update_bad_dtype(op):
    def program(m):
        h = _handle(m, "float32", [2])
        outs = ordered(m, [
            lambda: m.raw_ops.AssignVariableOp(resource=h, value=m.constant([1.0, 2.0])),
            lambda: getattr(m.raw_ops, op)(resource=h, value=m.constant([1.0, 2.0], m.float64)),
            lambda: _read(m, h, "float32")])
        return outs[2:], {}, []
    return program


for _op in ("AssignAddVariableOp", "AssignSubVariableOp"):
    CASES.append(_case(_op, "wrap", "int32", _update_wrap(_op)))
    CASES.append(_case(_op, "uninitialized", "float32", _update_uninitialized(_op)))
    CASES.append(_case(_op, "bad_shape", "float32", _update_bad_shape(_op)))
    CASES.append(_case(_op, "bad_shape_dynamic", "float32", _update_bad_shape(_op, None)))
    CASES.append(_case(_op, "bad_dtype", "float32", _update_bad_dtype(_op)))


def _is_initialized(m):
    h = _handle(m, "float32", [2])
    outs = ordered(m, [
        lambda: m.raw_ops.VarIsInitializedOp(resource=h),
        lambda: m.raw_ops.AssignVariableOp(resource=h, value=m.constant([1.0, 2.0])),
        lambda: m.raw_ops.VarIsInitializedOp(resource=h),
        lambda: m.raw_ops.DestroyResourceOp(resource=h, ignore_lookup_error=False),
        lambda: m.raw_ops.VarIsInitializedOp(resource=h)])
    return [outs[0], outs[2], outs[4]], {}, []


CASES.append(_case("VarIsInitializedOp", "", "float32", _is_initialized,
                   ALL + ("DestroyResourceOp",)))


def _destroy(ignore_lookup_error, assign_first):
    def program(m):
        h = _handle(m, "float32", [2])
        makers = []
        if assign_first:
            makers.append(lambda: m.raw_ops.AssignVariableOp(resource=h,
                                                             value=m.constant([1.0, 2.0])))
        makers.append(lambda: m.raw_ops.DestroyResourceOp(
            resource=h, ignore_lookup_error=ignore_lookup_error))
        makers.append(lambda: m.raw_ops.VarIsInitializedOp(resource=h))
        outs = ordered(m, makers)
        return outs[-1:], {}, []
    return program


CASES.append(_case("DestroyResourceOp", "", "float32", _destroy(False, True),
                   ALL + ("VarIsInitializedOp",)))
CASES.append(_case("DestroyResourceOp", "missing_ignored", "float32", _destroy(True, False),
                   ALL + ("VarIsInitializedOp",)))
CASES.append(_case("DestroyResourceOp", "missing", "float32", _destroy(False, False),
                   ALL + ("VarIsInitializedOp",)))


def _destroy_then_read(m):
    h = _handle(m, "float32", [2])
    outs = ordered(m, [
        lambda: m.raw_ops.AssignVariableOp(resource=h, value=m.constant([1.0, 2.0])),
        lambda: m.raw_ops.DestroyResourceOp(resource=h, ignore_lookup_error=True),
        lambda: _read(m, h, "float32")])
    return outs[2:], {}, []


CASES.append(_case("DestroyResourceOp", "then_read", "float32", _destroy_then_read))


def _variable_class(m):
    """The Variable class with use_resource=True: assign, assign_add, read_value (a read
    under control_dependencies sees the assign ordered before it)."""
    v = m.Variable(np.array([1.0, 2.0], np.float32), use_resource=True, name="v")
    with m.control_dependencies([v.assign([3.0, 4.0])]):
        y = v.read_value()
    with m.control_dependencies([y]):
        z = v.assign_add([1.0, 1.0])
    with m.control_dependencies([z]):
        r = v.read_value()
    return [y, r], {}, [v.initializer]


CASES.append(_case("VarHandleOp", "variable_class", "float32", _variable_class,
                   ALL + ("AssignAddVariableOp",)))


def _read_gradient(m):
    """d sum(3 * read(v)^2) / d handle: ReadVariableOp's gradient passes the read's gradient to
    the handle (TF's and TensorFlux's gradients of a resource read)."""
    h = _handle(m, "float64", [2, 3])
    value = values("rv/grad", (2, 3), "float64", -3, 3)
    outs = ordered(m, [lambda: m.raw_ops.AssignVariableOp(resource=h, value=_const(m, value)),
                       lambda: _read(m, h, "float64")])
    x = outs[1]
    grad = m.gradients(m.reduce_sum(x * x * 3.0), [h])[0]
    return [m.convert_to_tensor(grad)], {}, []


CASES.append(_case("ReadVariableOp", "gradient", "float64", _read_gradient,
                   grad_covers=("ReadVariableOp",)))
