"""Optimizer updates (ops/training_ops.cc): Apply* (ref variables) and ResourceApply*
(resource variables) for GradientDescent, Momentum, Adam, RMSProp, CenteredRMSProp and Adagrad.

Each program creates the variable and its slots with seeded values, runs the update with one
seeded gradient, then once more with another (the second in the fetching run: the ref form's
output is fetched too) and fetches the variable and the slots."""

import numpy as np

from conformance.program_util import values
from conformance.table import Case

CASES = []

# name -> (variables, (hyper-parameter name, value) in input order with "grad" for the
# gradient, extra attrs); slots holding squares (ms, v, accum) start positive.
SPECS = {
    "GradientDescent": (("var",), (("alpha", 0.1), ("delta", None)), ()),
    "Momentum": (("var", "accum"), (("lr", 0.05), ("grad", None), ("momentum", 0.9)),
                 ("use_nesterov",)),
    "Adam": (("var", "m", "v"), (("beta1_power", 0.9 ** 3), ("beta2_power", 0.999 ** 3),
                                 ("lr", 0.01), ("beta1", 0.9), ("beta2", 0.999),
                                 ("epsilon", 1e-3), ("grad", None)), ("use_nesterov",)),
    "RMSProp": (("var", "ms", "mom"), (("lr", 0.01), ("rho", 0.9), ("momentum", 0.5),
                                       ("epsilon", 1e-3), ("grad", None)), ()),
    "CenteredRMSProp": (("var", "mg", "ms", "mom"),
                        (("lr", 0.01), ("rho", 0.9), ("momentum", 0.5), ("epsilon", 1e-3),
                         ("grad", None)), ()),
    "Adagrad": (("var", "accum"), (("lr", 0.1), ("grad", None)), ("update_slots",)),
}
POSITIVE = ("v", "ms", "accum")
GRAD_NAME = {"GradientDescent": "delta"}

UNINITIALIZED = ("an optimizer update of a resource variable that was never assigned is "
                 "FAILED_PRECONDITION 'Could not find variable var ...' (the code of a read); TF "
                 "says INTERNAL 'Invalid variable reference.'")

# Half and bfloat16 updates: TF rounds after every Eigen op, TensorFlux computes in float.
TOL = {"float16": (1e-2, 1e-2), "bfloat16": (3e-2, 3e-2)}


def _initial(name, op, slot, shape, dt):
    key = "train/%s/%s/%s" % (name, op, slot)
    if slot in POSITIVE:
        return values(key, shape, "float64", 0.1, 1.0).astype(dt)
    return values(key, shape, "float64", -1.0, 1.0).astype(dt)


def _tensor(m, arr, dtype):
    """A constant of `dtype` (bfloat16 made by casting float32)."""
    if dtype == "bfloat16":
        return m.cast(m.constant(np.asarray(arr, np.float32)), m.bfloat16)
    return m.constant(np.asarray(arr, dtype), dtype=m.as_dtype(dtype))


def _out(m, t, dtype):
    return m.cast(t, m.float32) if dtype == "bfloat16" else t


def _program(name, op, dtype, shape=(2, 3), resource=False, attrs=None, steps=2,
             grad_shape=None, hyper_shape=None, fed_grad=False, init=True, hyper=None):
    variables, inputs, _ = SPECS[op]
    gname = GRAD_NAME.get(op, "grad")
    npdt = np.float32 if dtype == "bfloat16" else dtype

    def program(m):
        dt = m.as_dtype(dtype)
        feeds, init_ops, slots, reads = {}, [], [], []
        for slot in variables:
            value = _tensor(m, _initial(name, op, slot, shape, npdt), dtype)
            if resource:
                h = m.raw_ops.VarHandleOp(dtype=dt, shape=list(shape), shared_name=slot,
                                          container="", name=slot)
                if init:
                    init_ops.append(m.raw_ops.AssignVariableOp(resource=h, value=value))
                slots.append(h)
            else:
                v = m.raw_ops.VariableV2(shape=list(shape), dtype=dt, name=slot)
                if init:
                    init_ops.append(m.raw_ops.Assign(ref=v, value=value))
                slots.append(v)
        updates = []
        for step in range(steps):
            kw = dict(zip(variables, slots))
            for arg, val in inputs:
                if arg == gname:
                    gs = tuple(grad_shape or shape)
                    g = values("train/%s/%s/grad%d" % (name, op, step), gs, "float64", -1, 1)
                    if fed_grad:
                        p = m.placeholder(dt, shape=None)
                        feeds[p] = g.astype(npdt)
                        kw[arg] = p
                    else:
                        kw[arg] = _tensor(m, g.astype(npdt), dtype)
                else:
                    val = (hyper or {}).get(arg, val)
                    if arg == "beta1_power":
                        val = 0.9 ** (step + 1)
                    elif arg == "beta2_power":
                        val = 0.999 ** (step + 1)
                    hv = np.full(hyper_shape if arg == inputs[0][0] and hyper_shape else (),
                                 val, npdt)
                    kw[arg] = _tensor(m, hv, dtype)
            kw.update(attrs or {})
            updates.append(getattr(m.raw_ops, ("ResourceApply" if resource else "Apply") + op)(
                **kw))
        fetches = []
        with m.control_dependencies([updates[-1]]):
            if not resource:
                fetches.append(_out(m, m.identity(updates[-1]), dtype))
            for slot, h in zip(variables, slots):
                if resource:
                    reads.append(_out(m, m.raw_ops.ReadVariableOp(resource=h, dtype=dt), dtype))
                else:
                    reads.append(_out(m, m.identity(h), dtype))
        return fetches + reads, feeds, init_ops + updates[:-1]
    return program


def _case(op, variant, dtype, resource=False, deviation=None, **kw):
    full = ("ResourceApply" if resource else "Apply") + op
    covers = (("VarHandleOp", "AssignVariableOp", "ReadVariableOp") if resource
              else ("VariableV2", "Assign"))
    tol = kw.pop("tol", TOL.get(dtype))
    name = "%s/%s/%s" % (full, variant, dtype)
    return Case(full, variant="program" + ("_" + variant if variant else ""), dtype=dtype,
                program=_program(name, op, dtype, resource=resource, **kw), covers=covers,
                tol=tol, deviation=deviation)


for _op, (_vars, _inputs, _attrs) in SPECS.items():
    for _res in (False, True):
        for _dt in ("float16", "bfloat16", "float32", "float64"):
            CASES.append(_case(_op, "", _dt, _res))
        CASES.append(_case(_op, "scalar", "float32", _res, shape=()))
        CASES.append(_case(_op, "empty", "float32", _res, shape=(0, 2)))
        CASES.append(_case(_op, "use_locking", "float64", _res, attrs={"use_locking": True}))
        if "use_nesterov" in _attrs:
            for _dt in ("float32", "float64"):
                CASES.append(_case(_op, "nesterov", _dt, _res, attrs={"use_nesterov": True}))
        if "update_slots" in _attrs:
            CASES.append(_case(_op, "no_update_slots", "float64", _res,
                               attrs={"update_slots": False}))
        CASES.append(_case(_op, "grad_shape", "float32", _res, grad_shape=(3, 2)))
        CASES.append(_case(_op, "grad_shape_fed", "float32", _res, grad_shape=(3,),
                           fed_grad=True))
        CASES.append(_case(_op, "hyper_not_scalar", "float32", _res, hyper_shape=(2,)))
        CASES.append(_case(_op, "uninitialized", "float32", _res, init=False, steps=1,
                           deviation=UNINITIALIZED if _res else None))
        CASES.append(_case(_op, "int32", "int32", _res, steps=1))
        CASES.append(_case(_op, "one_step", "float64", _res, steps=1))

# Hyper-parameters at their edges: a zero learning rate leaves the variable, momentum 0.
CASES.append(_case("Momentum", "zero_momentum", "float64", hyper={"momentum": 0.0}))
CASES.append(_case("GradientDescent", "zero_lr", "float32", hyper={"alpha": 0.0}))
CASES.append(_case("RMSProp", "zero_momentum", "float64", True, hyper={"momentum": 0.0}))
