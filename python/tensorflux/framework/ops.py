"""Tensor and Operation (the nodes and edges of a tx.Graph), the default-graph stack, and
convert_to_tensor.

The Graph class itself lives in graph.py; this module re-exports it.
"""

import threading

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import tensor_shape
from tensorflux import attr_value_pb2


class Tensor:
    """One output of an Operation: a symbolic value with a dtype and a (partial) static shape.

    Named "op_name:index". Evaluate it with Session.run or tensor.eval().
    """

    # numpy defers binary operators with a Tensor to the Tensor's reflected methods.
    __array_priority__ = 100
    __array_ufunc__ = None

    def __init__(self, op, value_index, dtype, shape):
        self._op = op
        self._value_index = value_index
        self._dtype = dtypes.as_dtype(dtype)
        self._shape = tensor_shape.as_shape(shape)
        self._consumers = []
        self._name = "%s:%d" % (op.name, value_index)

    @property
    def op(self):
        return self._op

    @property
    def value_index(self):
        return self._value_index

    @property
    def dtype(self):
        return self._dtype

    @property
    def graph(self):
        return self._op.graph

    @property
    def name(self):
        return self._name

    @property
    def device(self):
        return self._op.device

    @property
    def shape(self):
        """The static shape inferred when the op was created (a tx.TensorShape)."""
        return self._shape

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        """Narrows the static shape; ValueError when `shape` is incompatible with it."""
        self._shape = self._shape.merge_with(shape)

    def consumers(self):
        """The Operations that take this tensor as a data input."""
        return list(self._consumers)

    def _as_node_def_input(self):
        if self._value_index == 0:
            return self._op.name
        return "%s:%d" % (self._op.name, self._value_index)

    def eval(self, feed_dict=None, session=None):
        """Runs the graph up to this tensor in `session` (default: the default session)."""
        from tensorflux.client import session as session_lib  # pylint: disable=g-import-not-at-top
        return session_lib._run_using_default_session(self, feed_dict, self.graph, session)

    def __repr__(self):
        return "<tx.Tensor '%s' shape=%s dtype=%s>" % (self.name, self._shape, self._dtype.name)

    def __str__(self):
        return 'Tensor("%s", shape=%s, dtype=%s)' % (self.name, self._shape, self._dtype.name)

    __hash__ = object.__hash__

    def __bool__(self):
        raise TypeError("Using a `tx.Tensor` as a Python `bool` is not allowed. Use `if t is not "
                        "None:` instead of `if t:` to test if a tensor is defined.")

    def __iter__(self):
        raise TypeError("Tensor objects are not iterable in graph mode.")

    def __len__(self):
        raise TypeError("len is not well defined for symbolic Tensors (%s). Use tx.shape or "
                        "tensor.shape instead." % self.name)

    def __array__(self, dtype=None):
        raise NotImplementedError("Cannot convert a symbolic tx.Tensor (%s) to a numpy array; "
                                  "run it in a tx.Session." % self.name)

    # Arithmetic operators (__add__, __matmul__, ...) are installed by math_ops.


class Operation:
    """A node of a tx.Graph: its NodeDef (attrs with defaults filled), inputs and outputs."""

    def __init__(self, node_def, graph, inputs, output_types, output_shapes, control_inputs):
        self._node_def = node_def
        self._graph = graph
        self._inputs = list(inputs)
        self._control_inputs = list(control_inputs)
        self._outputs = [Tensor(self, i, dt, shape)
                         for i, (dt, shape) in enumerate(zip(output_types, output_shapes))]
        self._id = None
        self._const_value = None  # decoded value of a Const, computed on demand
        for t in self._inputs:
            t._consumers.append(self)

    @property
    def name(self):
        return self._node_def.name

    @property
    def type(self):
        return self._node_def.op

    @property
    def graph(self):
        return self._graph

    @property
    def device(self):
        return self._node_def.device

    @property
    def node_def(self):
        """The NodeDef (a copy), inputs as "node", "node:i" and "^node"."""
        nd = type(self._node_def)()
        nd.CopyFrom(self._node_def)
        return nd

    @property
    def op_def(self):
        from tensorflux.framework import op_def_registry  # pylint: disable=g-import-not-at-top
        return op_def_registry.get(self.type)

    @property
    def inputs(self):
        return tuple(self._inputs)

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def control_inputs(self):
        return list(self._control_inputs)

    @property
    def traceback(self):
        return None

    def values(self):
        return tuple(self._outputs)

    def colocation_groups(self):
        """The colocation groups the Placer keeps together (TF 1.x): the op's `_class`
        "loc:@NAME" entries, or [b"loc:@<its name>"] when it has none."""
        groups = [s for s in self._node_def.attr["_class"].list.s if s.startswith(b"loc:@")] \
            if "_class" in self._node_def.attr else []
        return groups or [b"loc:@" + self.name.encode()]

    def get_attr(self, name):
        """The attr's value: bytes, int, float, bool, tx.DType, TensorShapeProto, TensorProto,
        NameAttrList, or a list of those. ValueError when the node has no such attr."""
        if name not in self._node_def.attr:
            raise ValueError("Operation %r has no attr named %r." % (self.name, name))
        return _attr_value_to_python(self._node_def.attr[name])

    def run(self, feed_dict=None, session=None):
        """Runs this op (as a target) in `session` (default: the default session)."""
        from tensorflux.client import session as session_lib  # pylint: disable=g-import-not-at-top
        session_lib._run_using_default_session(self, feed_dict, self.graph, session)

    def __repr__(self):
        return "<tx.Operation '%s' type=%s>" % (self.name, self.type)

    def __str__(self):
        return str(self._node_def)

    __hash__ = object.__hash__


def _attr_value_to_python(v):
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "list":
        lst = v.list
        if lst.s:
            return list(lst.s)
        if lst.i:
            return list(lst.i)
        if lst.f:
            return list(lst.f)
        if lst.b:
            return list(lst.b)
        if lst.type:
            return [dtypes.as_dtype(t) for t in lst.type]
        if lst.shape:
            return list(lst.shape)
        if lst.tensor:
            return list(lst.tensor)
        if lst.func:
            return list(lst.func)
        return []
    if kind == "type":
        return dtypes.as_dtype(v.type)
    return getattr(v, kind)


# ------------------------------------------------------------------ conversion to tensors

_conversion_functions = []  # (priority, base_type, fn), sorted by priority


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """Registers fn(value, dtype=None, name=None, as_ref=False) -> Tensor for values of
    `base_type` (a type or tuple of types); lower priorities are tried first."""
    _conversion_functions.append((priority, base_type, conversion_func))
    _conversion_functions.sort(key=lambda e: e[0])


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, dtype_hint=None):
    """Returns `value` as a Tensor: Tensors pass through (their dtype must match `dtype`);
    Python and numpy values become Const nodes in the default graph."""
    if preferred_dtype is None:
        preferred_dtype = dtype_hint
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and not dtype.is_compatible_with(value.dtype):
            raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype %s: %r"
                             % (dtype.name, value.dtype.name, value))
        return value
    if isinstance(value, Operation):
        raise TypeError("Cannot convert an Operation (%s) to a Tensor; use one of its outputs."
                        % value.name)
    if dtype is None and preferred_dtype is not None:
        try:
            return convert_to_tensor(value, dtype=preferred_dtype, name=name)
        except (TypeError, ValueError):
            pass
    for _, base_type, fn in _conversion_functions:
        if isinstance(value, base_type):
            result = fn(value, dtype=dtype, name=name, as_ref=False)
            if result is NotImplemented:
                continue
            return result
    raise TypeError("Cannot convert %r of type %s to a Tensor." % (value, type(value).__name__))


def convert_n_to_tensor(values, dtype=None, name=None, preferred_dtype=None):
    return [convert_to_tensor(v, dtype=dtype, preferred_dtype=preferred_dtype,
                              name=None if name is None else "%s_%d" % (name, i))
            for i, v in enumerate(values)]


def _tensor_shape_to_tensor(value, dtype=None, name=None, as_ref=False):
    if not value.is_fully_defined():
        raise ValueError("Cannot convert a partially known TensorShape %s to a Tensor." % value)
    from tensorflux.framework import constant_op  # pylint: disable=g-import-not-at-top
    return constant_op.constant(value.as_list(), dtype=dtype or dtypes.int32,
                                name=name or "Const")


register_tensor_conversion_function(tensor_shape.TensorShape, _tensor_shape_to_tensor, 50)


# ------------------------------------------------------------------ default graph stack

class _DefaultStack(threading.local):
    def __init__(self):
        super().__init__()
        self.stack = []


_default_graph_stack = _DefaultStack()
_global_default_graph = None
_global_lock = threading.Lock()


def get_default_graph():
    """The innermost graph of `with g.as_default():` in this thread, else the global graph."""
    global _global_default_graph
    if _default_graph_stack.stack:
        return _default_graph_stack.stack[-1]
    with _global_lock:
        if _global_default_graph is None:
            from tensorflux.framework.graph import Graph  # pylint: disable=g-import-not-at-top
            _global_default_graph = Graph()
        return _global_default_graph


def reset_default_graph():
    """Replaces the global default graph with a new empty one (not inside `as_default()`)."""
    global _global_default_graph
    if _default_graph_stack.stack:
        raise AssertionError("Do not use tx.reset_default_graph() to clear nested graphs. If you "
                             "need a cleared graph, exit the nesting and create a new graph.")
    with _global_lock:
        _global_default_graph = None


def _push_default_graph(g):
    _default_graph_stack.stack.append(g)


def _pop_default_graph(g):
    stack = _default_graph_stack.stack
    if not stack or stack[-1] is not g:
        raise AssertionError("Nesting violated for default graph stack.")
    stack.pop()


def name_scope(name, default_name=None, values=None):
    """`with tx.name_scope("a") as scope:` (TF 1.x signature): a name scope in the graph of
    `values` (or the default graph). `name` None uses `default_name`, made unique."""
    g = _graph_from_values(values) if values else get_default_graph()
    n = name if name is not None else default_name
    if n is None:
        raise ValueError("At least one of name (%s) and default_name (%s) must be provided."
                         % (name, default_name))
    return g.name_scope(n)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function):
    return get_default_graph().device(device_name_or_function)


def colocate_with(op, ignore_existing=False):
    return get_default_graph().colocate_with(op, ignore_existing)


class GraphKeys:
    """Standard collection names, with TF 1.x's string values (tf.compat.v1.GraphKeys)."""
    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    GLOBAL_STEP = "global_step"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    UPDATE_OPS = "update_ops"
    TRAIN_OP = "train_op"
    SAVERS = "savers"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    QUEUE_RUNNERS = "queue_runners"
    SUMMARIES = "summaries"
    SUMMARY_OP = "summary_op"
    ACTIVATIONS = "activations"
    WEIGHTS = "weights"
    BIASES = "biases"
    VARIABLES = GLOBAL_VARIABLES


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def _captures_from(graph, other):
    """True when `graph` is a function graph being traced inside `other` (directly or not): its
    ops may use `other`'s tensors, which it captures (framework/function_trace.py)."""
    outer = getattr(graph, "_outer_graph", None)
    while outer is not None:
        if outer is other:
            return True
        outer = getattr(outer, "_outer_graph", None)
    return False


def _graph_from_values(values):
    graph = None
    default = get_default_graph()
    for v in values:
        g = getattr(v, "graph", None) if isinstance(v, (Tensor, Operation)) else None
        if g is None:
            continue
        if g is not default and _captures_from(default, g):
            g = default
        if graph is None:
            graph = g
        elif g is not graph:
            raise ValueError("%r must be from the same graph as %r." % (v, values[0]))
    return graph or get_default_graph()


def _attr_from_python(value, attr_type):
    """Python value -> AttrValue for an OpDef attr type ("int", "list(type)", ...)."""
    from tensorflux.framework import tensor_util  # pylint: disable=g-import-not-at-top
    av = attr_value_pb2.AttrValue()
    if isinstance(value, attr_value_pb2.AttrValue):
        av.CopyFrom(value)
        return av
    if attr_type.startswith("list("):
        inner = attr_type[5:-1]
        if not isinstance(value, (list, tuple)):
            raise TypeError("Expected list for attr of type %s, got %r" % (attr_type, value))
        av.list.SetInParent()
        for item in value:
            one = _attr_from_python(item, inner)
            field = one.WhichOneof("value")
            getattr(av.list, field).append(getattr(one, field))
        return av
    if attr_type == "string":
        if isinstance(value, str):
            value = value.encode("utf-8")
        if not isinstance(value, bytes):
            raise TypeError("Expected string for attr, got %r" % (value,))
        av.s = value
    elif attr_type == "int":
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError("Expected int for attr, got %r of type '%s' instead."
                            % (value, type(value).__name__))
        av.i = int(value)
    elif attr_type == "float":
        if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
            raise TypeError("Expected float for attr, got %r" % (value,))
        av.f = float(value)
    elif attr_type == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError("Expected bool for attr, got %r" % (value,))
        av.b = bool(value)
    elif attr_type == "type":
        av.type = dtypes.as_dtype(value).as_datatype_enum
    elif attr_type == "shape":
        av.shape.CopyFrom(value if hasattr(value, "unknown_rank") and hasattr(value, "dim")
                          else tensor_shape.as_shape(value).as_proto())
    elif attr_type == "tensor":
        av.tensor.CopyFrom(tensor_util.make_tensor_proto(value))
    elif attr_type == "func":
        if isinstance(value, str):
            av.func.name = value
        else:
            av.func.CopyFrom(value)
    else:
        raise TypeError("Unsupported attr type %s" % attr_type)
    return av
