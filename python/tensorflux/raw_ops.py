"""tx.raw_ops.OpName(**inputs_and_attrs): one function for every op in the C++ registry.

Generated at import from the registered OpDefs, so an op added in C++ appears here without
Python changes. Arguments are keyword-only: inputs by arg name, attrs by attr name (type attrs
are inferred from the input dtypes), and `name`.
"""

import sys

from tensorflux.framework import op_def_library
from tensorflux.framework import op_def_registry


def _describe(op_def):
    lines = [op_def.summary or op_def.description or "The %s op." % op_def.name, ""]
    if op_def.input_arg:
        lines.append("Inputs:")
        for a in op_def.input_arg:
            kind = a.type_attr or a.type_list_attr or ("DT enum %d" % a.type)
            if a.number_attr:
                kind = "%s * %s" % (a.number_attr, kind)
            lines.append("  %s: %s" % (a.name, kind))
    if op_def.attr:
        lines.append("Attrs:")
        for a in op_def.attr:
            default = " (has default)" if a.HasField("default_value") else ""
            lines.append("  %s: %s%s" % (a.name, a.type, default))
    if op_def.output_arg:
        lines.append("Outputs: " + ", ".join(a.name for a in op_def.output_arg))
    return "\n".join(lines)


def _make(op_def):
    op_name = op_def.name

    def raw_op(*args, name=None, **kwargs):
        if args:
            raise TypeError("tx.raw_ops.%s only takes keyword arguments." % op_name)
        return op_def_library.apply_op(op_name, name=name, **kwargs)

    raw_op.__name__ = op_name
    raw_op.__qualname__ = op_name
    raw_op.__doc__ = _describe(op_def)
    raw_op.__module__ = __name__
    return raw_op


def _generate():
    module = sys.modules[__name__]
    names = []
    for op_name, op_def in sorted(op_def_registry.get_registered_ops().items()):
        setattr(module, op_name, _make(op_def))
        names.append(op_name)
    return names


__all__ = _generate()
