"""tx.gradients: symbolic derivatives added to the graph (tf.compat.v1.gradients).

The C++ gradient registry does the work (AddSymbolicGradients): the graph is handed over as a
GraphDef, the backward nodes come back as NodeDefs and are added here through the graph's normal
op-creation path, so they are validated and shape-inferred like any other op.
"""

import enum

from tensorflux.framework import ops
from tensorflux.ops.resource_variable_ops import ResourceVariable

try:
    from tensorflux._pywrap_tensorflux import add_symbolic_gradients as _add_symbolic_gradients
except ImportError as e:  # pragma: no cover - depends on the build
    raise ImportError("tensorflux: the C++ extension lacks add_symbolic_gradients (%s); rebuild "
                      "it with `make build`." % e) from e


def _as_list(x):
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _split_input(name):
    if name.startswith("^"):
        return name[1:], -1
    node, sep, index = name.rpartition(":")
    if sep and index.isdigit():
        return node, int(index)
    return name, 0


class AggregationMethod:
    """How gradients of a tensor used several times are summed (TF's constants). Every method
    gives the sum; TensorFlux always adds them with AddN."""
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


class UnconnectedGradients(enum.Enum):
    """What tx.gradients returns for an x that ys do not depend on: None, or zeros of x's shape
    and dtype."""
    NONE = "none"
    ZERO = "zero"


def _zeros_for(graph, x):
    """Zeros shaped like x, or like the variable x names when it is a resource handle."""
    from tensorflux.framework import dtypes  # pylint: disable=g-import-not-at-top
    from tensorflux.ops import array_ops  # pylint: disable=g-import-not-at-top
    from tensorflux.ops import resource_variable_ops  # pylint: disable=g-import-not-at-top
    with graph.as_default():
        if x.dtype.base_dtype == dtypes.resource:
            value = resource_variable_ops.read_variable_op(x, x.op.get_attr("dtype"))
            return array_ops.zeros_like(value)
        return array_ops.zeros_like(x)


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE):
    """Symbolic derivatives of sum(ys) with respect to each x in xs.

    ys, xs: a Tensor or a list of Tensors of one graph. An x may be a tx.Variable or its handle
    (a resource tensor): its gradient is that of the variable's value (ReadVariableOp passes
    gradients to the handle, as in TF). grad_ys: None, or one Tensor (or None,
    meaning ones) per y, of that y's shape and dtype, giving the initial gradients. name: the
    name scope of the added ops (made unique). stop_gradients: Tensors held constant (no gradient
    flows through them to their inputs).

    Returns a list with one Tensor per x: its gradient (x's shape and dtype), or None when ys do not
    depend on x. Gradients of a tensor used several times are summed (AddN); broadcasting ops
    reduce their gradients to their inputs' shapes; integer tensors carry no gradient.

    Raises LookupError when an op on the path has no gradient function, ValueError for
    mismatched grad_ys or tensors from another graph, TypeError for non-Tensors in ys or xs.

    unconnected_gradients: UnconnectedGradients.NONE (or "none") gives None for an x the ys do
    not depend on, ZERO ("zero") zeros like x. colocate_gradients_with_ops, gate_gradients and
    aggregation_method change only where and in which order TF computes the same gradients
    (placement, grouping, summation order): accepted, the gradients are the same here.
    """
    del colocate_gradients_with_ops, gate_gradients, aggregation_method  # docstring
    try:
        unconnected = UnconnectedGradients(getattr(unconnected_gradients, "value",
                                                   unconnected_gradients))
    except ValueError:
        raise ValueError("Unknown value for unconnected_gradients: %r"
                         % (unconnected_gradients,)) from None
    ys = _as_list(ys)
    # A tx.Variable stands for its handle: its gradient is that of the variable's value.
    xs = [getattr(x, "handle", x) if isinstance(x, ResourceVariable) else x
          for x in _as_list(xs)]
    grad_ys = _as_list(grad_ys)
    stops = _as_list(stop_gradients)
    for what, lst in (("ys", ys), ("xs", xs), ("stop_gradients", stops)):
        for t in lst:
            if not isinstance(t, ops.Tensor):
                raise TypeError("tx.gradients: %s must be Tensors, got %r" % (what, t))
    if grad_ys and len(grad_ys) != len(ys):
        raise ValueError("Passed %d grad_ys for %d ys" % (len(grad_ys), len(ys)))
    graph = ops._graph_from_values(ys + xs + stops)
    seeds = []
    for i, (y, g) in enumerate(zip(ys, grad_ys or [None] * len(ys))):
        if g is None:
            seeds.append(None)
            continue
        if not isinstance(g, ops.Tensor):
            g = ops.convert_to_tensor(g, dtype=y.dtype, name="grad_ys_%d" % i)
        if g.dtype.base_dtype != y.dtype.base_dtype:
            raise ValueError("grad_ys[%d] has dtype %s but ys[%d] has dtype %s"
                             % (i, g.dtype.name, i, y.dtype.name))
        seeds.append(g)
    for t in ys + xs + stops + [s for s in seeds if s is not None]:
        if t.graph is not graph:
            raise ValueError("Tensor %s is not an element of the graph of the other tensors."
                             % t.name)
    if not xs:
        return []

    from tensorflux.framework import errors  # pylint: disable=g-import-not-at-top
    try:
        new_nodes, grad_names = _add_symbolic_gradients(
            graph.as_graph_def().SerializeToString(), [y.name for y in ys],
            [x.name for x in xs], [s.name if s is not None else None for s in seeds],
            name or "gradients", [t.name for t in stops])
    except errors.NotFoundError as e:
        if "No gradient defined" in e.message:
            raise LookupError(e.message) from None
        raise

    from tensorflux import node_def_pb2  # pylint: disable=g-import-not-at-top
    with graph.as_default():
        for blob in new_nodes:
            nd = node_def_pb2.NodeDef()
            nd.ParseFromString(blob)
            data, control = [], []
            for inp in nd.input:
                node, index = _split_input(inp)
                op = graph.get_operation_by_name(node)
                if index < 0:
                    control.append(op)
                else:
                    data.append(op.outputs[index])
            attrs = {k: v for k, v in nd.attr.items()}
            graph._create_op_internal(nd.op, data, attrs, name=nd.name, exact_name=True,
                                      control_inputs=control, device=nd.device or None,
                                      apply_control_deps=False)
            # The scope counts as used (a later tx.name_scope("gradients") gets "gradients_1").
            graph._names_in_use.setdefault(nd.name.split("/")[0].lower(), 1)
    result = []
    for x, gname in zip(xs, grad_names):
        if gname is None:
            if unconnected is UnconnectedGradients.ZERO:
                result.append(_zeros_for(graph, x))
            else:
                result.append(None)
            continue
        g = graph.get_tensor_by_name(gname)
        if x.shape.is_fully_defined() or x.shape.ndims is not None:
            try:
                g.set_shape(x.shape)
            except ValueError:
                pass
        result.append(g)
    return result


# TF spells the same function both ways.
gradients_v2 = gradients
