"""no_op and group: control-dependency helpers."""

from tensorflux.framework import ops
from tensorflux.framework.op_def_library import apply_op


def no_op(name=None):
    """An op that does nothing (NoOp); useful as a target with control inputs."""
    return apply_op("NoOp", name=name or "NoOp")


def _flatten(inputs):
    for x in inputs:
        if isinstance(x, (list, tuple)):
            yield from _flatten(x)
        elif isinstance(x, dict):
            yield from _flatten(list(x.values()))
        else:
            yield x


def group(*inputs, **kwargs):
    """An op (NoOp, named "group_deps" by default) that runs after all of `inputs` (ops or
    tensors, possibly in nested lists)."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError("Unknown keyword arguments: " + ", ".join(sorted(kwargs)))
    deps = []
    for x in _flatten(inputs):
        if x is None:
            continue
        op = x.op if isinstance(x, ops.Tensor) else x
        if not isinstance(op, ops.Operation):
            raise TypeError("tx.group expects Operations or Tensors, got %r" % (x,))
        if op not in deps:
            deps.append(op)
    g = deps[0].graph if deps else ops.get_default_graph()
    with g.as_default(), ops.name_scope(name, "group_deps", deps) as scope:
        with g.control_dependencies(deps):
            return no_op(name=scope)
