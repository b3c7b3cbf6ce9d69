"""Tracing a Python function once into a FunctionDef of a graph's library (TF's format).

trace_function(fn, structure, types, shapes, name) calls `fn` on placeholders of the given
element structure in a fresh graph, then writes that graph as a FunctionDef: one input arg per
placeholder (arg0, arg1, ...), one output arg per returned tensor (output_0, ...), body nodes
with inputs in TF's "node:output_arg:index" form. The C++ runtime
(src/tensorflux/runtime/function_runtime.h) instantiates and runs it with no Python involved.

The function may create any ops (constants, math, random ops with the outer graph's seed) and
use tensors of the outer graph: each one it uses is captured, becoming an extra input arg fed
from the outer tensor (the `other_arguments` of MapDataset / FilterDataset), so its value is
taken when the dataset op runs (when the iterator is initialized), not per element.
"""

import re

from tensorflux import function_pb2
from tensorflux.framework import graph as graph_lib
from tensorflux.framework import ops


class _FuncGraph(graph_lib.Graph):
    """The graph a function is traced in: inputs from the outer graph (or its outer graphs)
    are replaced by placeholders recorded in `captures` (outer tensor, placeholder)."""

    def __init__(self, outer):
        super().__init__()
        self._outer_graph = outer
        self.seed = outer.seed
        self.captures = []
        self._captured_by_name = {}

    def _add_function(self, fdef):
        # Functions traced inside this one (a map inside an interleave) live in the outermost
        # graph's library, where the runtime looks them up.
        self._outer_graph._add_function(fdef)  # pylint: disable=protected-access

    def _is_function(self, name):
        return self._outer_graph._is_function(name)  # pylint: disable=protected-access

    def _capture(self, t):
        ph = self._captured_by_name.get(t.name)
        if ph is None:
            from tensorflux.ops import array_ops  # pylint: disable=g-import-not-at-top
            with self.as_default():
                ph = array_ops.placeholder(t.dtype.base_dtype, t.shape,
                                           name="captured_%d" % len(self.captures))
            self.captures.append((t, ph))
            self._captured_by_name[t.name] = ph
        return ph

    def _create_op_internal(self, op_type, inputs, attrs=None, name=None, control_inputs=(),
                            **kwargs):
        inputs = [self._capture(t) if isinstance(t, ops.Tensor) and t.graph is not self
                  and ops._captures_from(self, t.graph) else t  # pylint: disable=protected-access
                  for t in inputs]
        control_inputs = [c for c in control_inputs if c.graph is self]
        return super()._create_op_internal(op_type, inputs, attrs, name, control_inputs,
                                           **kwargs)


class TracedFunction:
    """A FunctionDef plus the structure, dtypes and static shapes of its results, and the outer
    tensors it captured (fed as its last args)."""

    def __init__(self, fdef, output_structure, output_types, output_shapes, captured_inputs):
        self.captured_inputs = captured_inputs
        self.function_def = fdef
        self.output_structure = output_structure
        self.output_types = output_types  # flat
        self.output_shapes = output_shapes  # flat

    @property
    def name(self):
        return self.function_def.signature.name


def _output_arg_names(op):
    """For each output of `op`, (output arg name, index within that arg)."""
    out = []
    nd = op.node_def
    for arg in op.op_def.output_arg:
        if arg.number_attr:
            n = nd.attr[arg.number_attr].i
        elif arg.type_list_attr:
            n = len(nd.attr[arg.type_list_attr].list.type)
        else:
            n = 1
        out.extend((arg.name, i) for i in range(n))
    return out


def _unique_function_name(graph, hint):
    base = re.sub(r"[^A-Za-z0-9_]", "_", hint) or "fn"
    name, i = base, 0
    while graph._is_function(name):  # pylint: disable=protected-access
        i += 1
        name = "%s_%d" % (base, i)
    return name


def trace_function(fn, arg_structure, arg_types, arg_shapes, name_hint, call_unpacked=True):
    """Traces fn over placeholders shaped like one element and adds the FunctionDef to the
    default graph's library. `call_unpacked`: a tuple element is passed as fn(*element)."""
    from tensorflux.data import nest  # pylint: disable=g-import-not-at-top
    from tensorflux.ops import array_ops  # pylint: disable=g-import-not-at-top
    outer = ops.get_default_graph()
    g = _FuncGraph(outer)
    with g.as_default():
        phs = [array_ops.placeholder(t, s, name="arg%d" % i)
               for i, (t, s) in enumerate(zip(arg_types, arg_shapes))]
        args = nest.pack_sequence_as(arg_structure, phs)
        if call_unpacked and isinstance(args, tuple) and not hasattr(args, "_fields"):
            result = fn(*args)
        else:
            result = fn(args)
        if result is None:
            raise ValueError("The function passed to %s returned None" % name_hint)
        flat = [ops.convert_to_tensor(r) for r in nest.flatten(result)]
        outs = [array_ops.identity(t, name="output_%d" % i) for i, t in enumerate(flat)]

    all_args = phs + [ph for _, ph in g.captures]
    arg_of = {ph.op.name: "arg%d" % i for i, ph in enumerate(all_args)}
    fdef = function_pb2.FunctionDef()
    fdef.signature.name = _unique_function_name(outer, name_hint)
    for i, ph in enumerate(all_args):
        a = fdef.signature.input_arg.add()
        a.name = "arg%d" % i
        a.type = ph.dtype.base_dtype.as_datatype_enum
    for i, t in enumerate(flat):
        a = fdef.signature.output_arg.add()
        a.name = "output_%d" % i
        a.type = t.dtype.base_dtype.as_datatype_enum
        fdef.ret["output_%d" % i] = "%s:output:0" % outs[i].op.name
    for op in g.get_operations():
        if op.name in arg_of:
            continue
        nd = fdef.node_def.add()
        nd.CopyFrom(op.node_def)
        nd.ClearField("device")
        del nd.input[:]
        for t in op.inputs:
            if t.op.name in arg_of:
                nd.input.append(arg_of[t.op.name])
            else:
                arg, idx = _output_arg_names(t.op)[t.value_index]
                nd.input.append("%s:%s:%d" % (t.op.name, arg, idx))
        for c in op.control_inputs:
            nd.input.append("^" + arg_of.get(c.name, c.name))
    outer._add_function(fdef)  # pylint: disable=protected-access
    return TracedFunction(fdef, nest.pack_sequence_as(result, flat),
                          [t.dtype.base_dtype for t in flat], [t.shape for t in flat],
                          [t for t, _ in g.captures])
