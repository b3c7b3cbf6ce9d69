"""apply_op: builds a node of any registered op from keyword inputs and attrs, the way TF's
op_def_library does: inputs by arg name (converted to tensors), type attrs inferred from the
input dtypes, N / list(type) attrs from list inputs, the other attrs by name."""

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework import op_def_registry


def _attr_def(op_def, name):
    for a in op_def.attr:
        if a.name == name:
            return a
    return None


def _allowed_types(attr_def):
    if attr_def is None or not attr_def.HasField("allowed_values"):
        return None
    return [dtypes.as_dtype(t) for t in attr_def.allowed_values.list.type] or None


def _dtype_of_value(v):
    """The dtype a value brings by itself (Tensors and numpy values), else None."""
    if isinstance(v, ops.Tensor):
        return v.dtype.base_dtype
    if isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind not in "OSU":
        try:
            return dtypes.as_dtype(v.dtype)
        except TypeError:
            return None
    return None


def _infer_type_attrs(op_def, keywords, attrs):
    """Fills type attrs that some input fixes by itself (a Tensor or numpy value), so Python
    values given for other inputs of the same type are converted to that type."""
    for arg in op_def.input_arg:
        if not arg.type_attr or arg.type_attr in attrs or arg.name not in keywords:
            continue
        values = keywords[arg.name]
        values = values if arg.number_attr and isinstance(values, (list, tuple)) else [values]
        for v in values:
            dt = _dtype_of_value(v)
            if dt is not None:
                attrs[arg.type_attr] = dt
                break


def _first_arg_of(op_def, arg):
    return next(a.name for a in op_def.input_arg if a.type_attr == arg.type_attr)


def _check_allowed(op_def, attr_name, dtype, arg_name):
    allowed = _allowed_types(_attr_def(op_def, attr_name))
    if allowed is not None and dtype not in allowed:
        raise TypeError("Value passed to parameter '%s' has DataType %s not in list of allowed "
                        "values: %s" % (arg_name, dtype.name, ", ".join(a.name for a in allowed)))


def _convert(value, dtype, arg_name, op_type, preferred=None):
    try:
        return ops.convert_to_tensor(value, dtype=dtype, name=arg_name, preferred_dtype=preferred)
    except ValueError as e:
        if isinstance(value, ops.Tensor):
            raise TypeError("Input '%s' of '%s' Op has type %s that does not match expected type "
                            "of %s." % (arg_name, op_type, value.dtype.name, dtype.name)) from e
        raise


def apply_op(op_type_name, name=None, **keywords):
    """Adds a `op_type_name` node to the graph of its inputs (or the default graph) and returns
    its output: a Tensor for one output, a list for a list output or several outputs, the
    Operation when the op has no outputs."""
    op_def = op_def_registry.get(op_type_name)
    if op_def is None:
        raise ValueError("Op type not registered '%s'" % op_type_name)
    values_for_graph = [v for v in keywords.values()
                        if isinstance(v, (ops.Tensor, ops.Operation))]
    for v in keywords.values():
        if isinstance(v, (list, tuple)):
            values_for_graph.extend(x for x in v if isinstance(x, ops.Tensor))
    g = ops._graph_from_values(values_for_graph)
    attrs = {}  # python values
    for a in op_def.attr:
        if a.name in keywords and a.type == "type":
            attrs[a.name] = dtypes.as_dtype(keywords[a.name]).base_dtype
        elif a.name in keywords and a.type == "list(type)":
            attrs[a.name] = [dtypes.as_dtype(t) for t in keywords[a.name]]
    with g.as_default(), g.name_scope(name or op_type_name) as scope:
        inputs = []
        _infer_type_attrs(op_def, keywords, attrs)
        for arg in op_def.input_arg:
            if arg.name not in keywords:
                raise TypeError("%s missing required argument '%s'" % (op_type_name, arg.name))
            value = keywords.pop(arg.name)
            if arg.number_attr or arg.type_list_attr:
                if not isinstance(value, (list, tuple)):
                    raise TypeError("Expected list for '%s' argument to '%s' Op, not %r."
                                    % (arg.name, op_type_name, value))
                if arg.number_attr:
                    attrs[arg.number_attr] = len(value)
                    dt = dtypes.as_dtype(arg.type) if arg.type else attrs.get(arg.type_attr)
                    ts = [_convert(v, dt, arg.name, op_type_name) for v in value]
                    if ts and arg.type_attr and arg.type_attr not in attrs:
                        attrs[arg.type_attr] = ts[0].dtype.base_dtype
                    for t in ts:
                        want = dt or attrs.get(arg.type_attr)
                        if want is not None and t.dtype.base_dtype != want:
                            raise TypeError("All tensors passed to '%s' of '%s' Op must have the "
                                            "same type." % (arg.name, op_type_name))
                else:
                    given = attrs.get(arg.type_list_attr)
                    ts = [_convert(v, given[i] if given and i < len(given) else None, arg.name,
                                   op_type_name) for i, v in enumerate(value)]
                    attrs[arg.type_list_attr] = [t.dtype.base_dtype for t in ts]
                inputs.extend(ts)
                continue
            if arg.type:
                t = _convert(value, dtypes.as_dtype(arg.type), arg.name, op_type_name)
            else:
                want = attrs.get(arg.type_attr)
                default = _attr_def(op_def, arg.type_attr)
                preferred = None
                if want is None and default is not None and default.HasField("default_value"):
                    preferred = dtypes.as_dtype(default.default_value.type)
                t = _convert(value, want, arg.name, op_type_name, preferred)
                if want is None:
                    attrs[arg.type_attr] = t.dtype.base_dtype
                elif t.dtype.base_dtype != want:
                    raise TypeError("Input '%s' of '%s' Op has type %s that does not match type "
                                    "%s of argument '%s'." % (arg.name, op_type_name,
                                                              t.dtype.name, want.name,
                                                              _first_arg_of(op_def, arg)))
                _check_allowed(op_def, arg.type_attr, t.dtype.base_dtype, arg.name)
            inputs.append(t)

        attr_protos = {}
        for a in op_def.attr:
            if a.name in keywords:
                value = keywords.pop(a.name)
                if a.name in attrs and a.type in ("type", "list(type)"):
                    value = attrs[a.name]  # validated form
            elif a.name in attrs:
                value = attrs[a.name]
            else:
                continue
            attr_protos[a.name] = ops._attr_from_python(value, a.type)
        if keywords:
            raise TypeError("%s got an unexpected keyword argument '%s'"
                            % (op_type_name, sorted(keywords)[0]))
        op = g._create_op_internal(op_type_name, inputs, attr_protos, name=scope)
    return _outputs(op, op_def)


def _outputs(op, op_def):
    if not op_def.output_arg:
        return op
    groups = []
    k = 0
    for arg in op_def.output_arg:
        if arg.number_attr:
            n = op._node_def.attr[arg.number_attr].i
            groups.append(op.outputs[k:k + n])
        elif arg.type_list_attr:
            n = len(op._node_def.attr[arg.type_list_attr].list.type)
            groups.append(op.outputs[k:k + n])
        else:
            n = 1
            groups.append(op.outputs[k])
        k += n
    return groups[0] if len(groups) == 1 else groups
