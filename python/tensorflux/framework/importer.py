"""tx.import_graph_def: adds the nodes of a GraphDef to the default graph (TF 1.x semantics)."""

import collections

from tensorflux import attr_value_pb2
from tensorflux import graph_pb2
from tensorflux.framework import ops

# Before this producer version, `shape {}` on a Placeholder meant "unknown shape".
_PLACEHOLDER_SCALAR_SHAPE_PRODUCER = 22


def _tensor_key(name):
    """"x" -> "x:0"; "x:1" stays; "^x" stays."""
    if name.startswith("^") or ":" in name:
        return name
    return name + ":0"


def _split_input(name):
    if name.startswith("^"):
        return name[1:], -1
    node, sep, index = name.rpartition(":")
    if sep and index.isdigit():
        return node, int(index)
    return name, 0


def _topological_order(nodes, input_map):
    """Node indices so that every node comes after the nodes it reads (data and control);
    inputs replaced by input_map create no dependency. ValueError for unknown inputs or cycles."""
    by_name = {}
    for i, n in enumerate(nodes):
        if n.name in by_name:
            raise ValueError("Duplicate node name in graph_def: '%s'" % n.name)
        by_name[n.name] = i
    pending = [0] * len(nodes)
    users = [[] for _ in nodes]
    for i, n in enumerate(nodes):
        for inp in n.input:
            if not inp.startswith("^") and _tensor_key(inp) in input_map:
                continue
            src, _ = _split_input(inp)
            if src not in by_name:
                raise ValueError("Node '%s': Unknown input node '%s'" % (n.name, inp))
            pending[i] += 1
            users[by_name[src]].append(i)
    ready = collections.deque(i for i in range(len(nodes)) if pending[i] == 0)
    order = []
    while ready:
        i = ready.popleft()
        order.append(i)
        for u in users[i]:
            pending[u] -= 1
            if pending[u] == 0:
                ready.append(u)
    if len(order) != len(nodes):
        stuck = [nodes[i].name for i in range(len(nodes)) if pending[i] > 0]
        raise ValueError("GraphDef cannot be imported because it contains a cycle through "
                         "node '%s'" % stuck[0])
    return order


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None, op_dict=None,
                     producer_op_list=None, clear_devices=False):
    """Imports `graph_def` into the default graph under the name scope `name` (default
    "import", made unique; "" imports the names unchanged).

    Each node keeps its recorded device request, merged under the enclosing tx.device scopes
    (the node's own fields win), unless clear_devices is True: then the requests are dropped
    and only the scopes apply, as TF 1.x's import_meta_graph(clear_devices=True) does (a
    TensorFlux addition here, so a GraphDef saved with GPU requests imports device-free).

    input_map maps tensor names of graph_def ("x:0", or "x" for "x:0") to Tensors of the
    default graph that replace them. return_elements lists names in graph_def ("op" for an
    Operation, "op:i" for a Tensor) to return, in order; without it the result is None.
    """
    del op_dict, producer_op_list  # deprecated in TF too
    if isinstance(graph_def, bytes):
        parsed = graph_pb2.GraphDef()
        parsed.ParseFromString(graph_def)
        graph_def = parsed
    if not isinstance(graph_def, graph_pb2.GraphDef):
        raise TypeError("graph_def must be a GraphDef proto.")
    raw_map = dict(input_map or {})
    input_map = {}
    for k, v in raw_map.items():
        if not isinstance(k, str):
            raise TypeError("input_map must be a dictionary mapping strings to Tensor objects.")
        if not isinstance(v, ops.Tensor):
            v = ops.convert_to_tensor(v)
        input_map[_tensor_key(k)] = v
    if return_elements is not None:
        return_elements = list(return_elements)
        if not all(isinstance(x, str) for x in return_elements):
            raise TypeError("return_elements must be a list of strings.")

    g = ops._graph_from_values(list(input_map.values())) if input_map \
        else ops.get_default_graph()
    nodes = list(graph_def.node)
    producer = graph_def.versions.producer
    order = _topological_order(nodes, input_map)
    with g.as_default(), g.name_scope("import" if name is None else name) as scope:
        prefix = scope[:-1] if scope else ""
        names = {n.name for n in nodes}
        created = {}
        used_keys = set()
        for i in order:
            src = nodes[i]
            new_name = (prefix + "/" + src.name) if prefix else src.name
            data, control = [], []
            for inp in src.input:
                if inp.startswith("^"):
                    control.append(created[inp[1:]])
                    continue
                key = _tensor_key(inp)
                if key in input_map:
                    data.append(input_map[key])
                    used_keys.add(key)
                    continue
                node, index = _split_input(inp)
                producer_op = created[node]
                if index >= len(producer_op.outputs):
                    raise ValueError("Node '%s': input '%s' refers to output %d of '%s', which "
                                     "has %d outputs" % (src.name, inp, index, node,
                                                         len(producer_op.outputs)))
                data.append(producer_op.outputs[index])
            attrs = {}
            for k, v in src.attr.items():
                av = attr_value_pb2.AttrValue()
                av.CopyFrom(v)
                if k == "_class" and prefix:
                    av.list.s[:] = [
                        (b"loc:@" + (prefix + "/").encode() + s[5:])
                        if s.startswith(b"loc:@") and s[5:].decode() in names else s
                        for s in av.list.s]
                attrs[k] = av
            _fix_legacy_node_attrs(src.op, attrs, producer)
            has_inputs = bool(src.input)
            op = g._create_op_internal(src.op, data, attrs, name=new_name, exact_name=True,
                                       control_inputs=control,
                                       device=None if clear_devices else src.device or None,
                                       apply_control_deps=not has_inputs)
            created[src.name] = op
        unused = sorted(set(input_map) - used_keys)
        if unused:
            raise ValueError("Attempted to map inputs that were not found in graph_def: [%s]"
                             % ", ".join(unused))
        if return_elements is None:
            return None
        results = []
        for r in return_elements:
            if ":" in r:
                node, index = _split_input(r)
                op = created.get(node)
                if op is None or index >= len(op.outputs):
                    raise ValueError("Requested return_element %r not found in graph_def." % r)
                results.append(op.outputs[index])
            else:
                op = created.get(r)
                if op is None:
                    raise ValueError("Requested return_element %r not found in graph_def." % r)
                results.append(op)
        return results


def _fix_legacy_node_attrs(op_type, attrs, producer):
    if producer < _PLACEHOLDER_SCALAR_SHAPE_PRODUCER and op_type in (
            "Placeholder", "PlaceholderWithDefault") and "shape" in attrs:
        shape = attrs["shape"]
        if shape.HasField("shape") and not shape.shape.dim and not shape.shape.unknown_rank:
            shape.shape.unknown_rank = True
