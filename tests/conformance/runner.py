"""Builds and runs one conformance case in TensorFlow or TensorFlux.

Both systems are driven through a System: the module (tf.compat.v1 or tensorflux), how an op is
added by name with keyword inputs and attrs, and how errors are classified. Everything else
(placeholders, constants, gradients with grad_ys, sessions) is the same code for both.
"""

import numpy as np

from . import table


class System:
    """m: the module; apply(op, **kw) adds the op and returns the Operation."""

    def __init__(self, name, m, apply, op_def_get, op_error, session_config=None):
        self.name = name
        self.m = m
        self.apply = apply
        self.op_def_get = op_def_get
        self.op_error = op_error
        self.session_config = session_config

    def session(self, graph):
        if self.session_config is not None:
            return self.m.Session(graph=graph, config=self.session_config)
        return self.m.Session(graph=graph)


def static_shape(t):
    shape = t.shape
    dims = getattr(shape, "dims", None)
    if dims is None:
        return None
    return [d if d is None or isinstance(d, int) else getattr(d, "value", d)
            for d in shape.as_list()]


def to_numpy(value):
    """Session results as storable arrays: strings as fixed-width bytes."""
    a = np.asarray(value)
    if a.dtype == object:
        flat = [v if isinstance(v, bytes) else str(v).encode() for v in a.reshape(-1)]
        a = np.array(flat, dtype=bytes).reshape(a.shape) if flat else a.astype("S1")
    return a


def _error(phase, e, system):
    kind = type(e).__name__
    msg = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
    return {"status": "error", "phase": phase, "error": kind,
            "op_error": isinstance(e, system.op_error), "message": msg}


def _convert_attrs(system, case):
    op_def = system.op_def_get(case.op)
    kinds = {a.name: a.type for a in op_def.attr} if op_def is not None else {}
    out = {}
    for k, v in case.resolved_attrs().items():
        if kinds.get(k) == "type":
            v = system.m.as_dtype(v)
        elif kinds.get(k) == "list(type)":
            v = [system.m.as_dtype(x) for x in v]
        out[k] = v
    return out


def _input_tensor(m, arr, as_const, feeds):
    if as_const:
        return m.constant(arr, dtype=m.as_dtype(arr.dtype.name if arr.dtype.kind != "S"
                                                else "string"))
    dt = "string" if arr.dtype.kind in "SUO" else arr.dtype.name
    p = m.placeholder(m.as_dtype(dt), shape=arr.shape)
    feeds[p] = arr
    return p


def run_op_case(system, case, arrays):
    """Runs `case` with `arrays` (name -> array or list of arrays) in `system`.

    Returns (meta, values): meta is JSON-able (status, shapes, output dtypes, which inputs have
    gradients, or the error); values maps 'out/i', 'grad/name', 'w/i' to arrays."""
    m = system.m
    g = m.Graph()
    values = {}
    with g.as_default():
        feeds, kw, tensors = {}, {}, {}
        for name, val in arrays.items():
            if isinstance(val, list):
                kw[name] = tensors[name] = [_input_tensor(m, np.asarray(v), name in case.const,
                                                          feeds) for v in val]
            else:
                kw[name] = tensors[name] = _input_tensor(m, np.asarray(val), name in case.const,
                                                         feeds)
        try:
            op = system.apply(case.op, **kw, **_convert_attrs(system, case))
        except Exception as e:  # the op's shape function or attr checks refused it
            return _error("build", e, system), values
        outs = list(op.outputs)
        meta = {"status": "ok", "shapes": [static_shape(t) for t in outs],
                "out_dtypes": [t.dtype.name for t in outs]}
        try:
            with system.session(g) as sess:
                got = sess.run(outs, feeds) if outs else sess.run(op, feeds)
        except Exception as e:
            return _error("run", e, system), values
        for i, v in enumerate(got if outs else []):
            values["out/%d" % i] = to_numpy(v)
        if case.grad:
            ys, ws = [], []
            for i, t in enumerate(outs):
                if t.dtype.is_floating:
                    w = case.upstream(values["out/%d" % i].shape, values["out/%d" % i].dtype, i)
                    values["w/%d" % i] = w
                    ys.append(t)
                    ws.append(m.constant(w))
            # A list input's elements are differentiated one by one, as "name/i".
            names, xs = [], []
            for n in case.grad:
                if isinstance(tensors[n], list):
                    names += ["%s/%d" % (n, i) for i in range(len(tensors[n]))]
                    xs += tensors[n]
                else:
                    names.append(n)
                    xs.append(tensors[n])
            try:
                grads = m.gradients(ys, xs, grad_ys=ws)
            except Exception as e:
                return _error("gradient", e, system), values
            meta["grads"] = [n for n, gr in zip(names, grads) if gr is not None]
            live = [gr for gr in grads if gr is not None]
            try:
                with system.session(g) as sess:
                    gvals = sess.run(live, feeds)
            except Exception as e:
                return _error("gradient_run", e, system), values
            for n, v in zip(meta["grads"], gvals):
                values["grad/" + n] = to_numpy(v)
    return meta, values


def run_program_case(system, case):
    """Runs a program case: case.program(m) -> (fetches, feed_dict, init_ops)."""
    m = system.m
    g = m.Graph()
    values = {}
    with g.as_default():
        try:
            fetches, feeds, init_ops = case.program(m)
        except Exception as e:
            return _error("build", e, system), values
        try:
            with system.session(g) as sess:
                for init in init_ops:
                    sess.run(init, feeds)
                got = sess.run(list(fetches), feeds)
        except Exception as e:
            return _error("run", e, system), values
    for i, v in enumerate(got):
        values["out/%d" % i] = to_numpy(v)
    return {"status": "ok", "out_dtypes": [values["out/%d" % i].dtype.name
                                           for i in range(len(got))]}, values


def run_case(system, case, arrays=None):
    if case.program is not None:
        return run_program_case(system, case)
    return run_op_case(system, case, case.arrays() if arrays is None else arrays)


def flatten_inputs(arrays):
    """name -> array or list  =>  'in/name' or 'in/name/i' -> array."""
    out = {}
    for name, val in arrays.items():
        if isinstance(val, list):
            for i, v in enumerate(val):
                out["in/%s/%d" % (name, i)] = np.asarray(v)
        else:
            out["in/" + name] = np.asarray(val)
    return out


def unflatten_inputs(case, stored):
    """The inverse of flatten_inputs, for the arrays stored under the case's id."""
    out = {}
    for name, spec in case.inputs.items():
        if isinstance(spec, list):
            out[name] = [stored["in/%s/%d" % (name, i)] for i in range(len(spec))]
        else:
            out[name] = stored["in/" + name]
    return out


__all__ = ["System", "run_case", "flatten_inputs", "unflatten_inputs", "table"]
