"""tx.Graph: a dataflow graph under construction (TF 1.x tf.Graph).

Every op added is validated, typed and shape-inferred by the C++ op registry through the
extension (defaults filled in its NodeDef), so errors show up when the op is built.
"""

import contextlib
import re
import threading

from tensorflux import graph_pb2
from tensorflux import node_def_pb2
from tensorflux import versions_pb2
from tensorflux.framework import dtypes as dtypes_lib
from tensorflux.framework import device as pydev
from tensorflux.framework import errors
from tensorflux.framework import ops
from tensorflux.framework import tensor_shape
from tensorflux.framework import _pywrap

# The producer version written into GraphDefs built here (>= 22: `shape {}` means scalar).
GRAPH_DEF_VERSION = 27
GRAPH_DEF_VERSION_MIN_CONSUMER = 0

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\-/>]*$")
# Constant inputs up to this many elements are passed to shape functions (Reshape, Fill, ...).
_MAX_CONST_ELEMENTS_FOR_INFERENCE = 4096


class _ThreadState(threading.local):
    def __init__(self):
        super().__init__()
        self.name_stack = ""
        self.control_frames = []  # lists of Operations; None entries clear outer frames
        self.device_stack = []
        self.colocation_stack = []  # Operations (colocate_with)


class Graph:
    """A TensorFlux computation graph: Operations connected by Tensors."""

    def __init__(self):
        self._lock = threading.RLock()
        self._ops = []  # creation order
        self._nodes_by_name = {}
        self._names_in_use = {}
        self._finalized = False
        self._collections = {}
        self._functions = []  # FunctionDefs of the graph's library, in the order added
        self._function_names = set()
        self._state = _ThreadState()
        self.seed = None
        self._graph_def_versions = versions_pb2.VersionDef(
            producer=GRAPH_DEF_VERSION, min_consumer=GRAPH_DEF_VERSION_MIN_CONSUMER)

    # -------------------------------------------------------------- default graph
    @contextlib.contextmanager
    def as_default(self):
        """Makes this graph the default graph of the current thread inside the `with` block."""
        ops._push_default_graph(self)
        try:
            yield self
        finally:
            ops._pop_default_graph(self)

    # -------------------------------------------------------------- lookup
    @property
    def version(self):
        """Grows by one with every op added."""
        return len(self._ops)

    @property
    def graph_def_versions(self):
        return self._graph_def_versions

    @property
    def finalized(self):
        return self._finalized

    def finalize(self):
        """Makes the graph read-only: adding an op afterwards raises RuntimeError."""
        self._finalized = True

    def get_operations(self):
        with self._lock:
            return list(self._ops)

    def get_operation_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError("Operation names are strings (or similar), not %s."
                            % type(name).__name__)
        return self.as_graph_element(name, allow_tensor=False, allow_operation=True)

    def get_tensor_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError("Tensor names are strings (or similar), not %s." % type(name).__name__)
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        """Resolves a Tensor, Operation or name ("op" or "op:i") to an element of this graph;
        objects with an `_as_graph_element()` method (tx.Variable) resolve to its result."""
        conv = getattr(obj, "_as_graph_element", None)
        if conv is not None and callable(conv):
            obj = conv()
        if allow_tensor and isinstance(obj, ops.Tensor):
            if obj.graph is not self:
                raise ValueError("Tensor %s is not an element of this graph." % obj)
            return obj
        if allow_operation and isinstance(obj, ops.Operation):
            if obj.graph is not self:
                raise ValueError("Operation %s is not an element of this graph." % obj)
            return obj
        if isinstance(obj, bytes):
            obj = obj.decode("utf-8")
        if not isinstance(obj, str):
            types = [t for t, ok in (("Tensor", allow_tensor), ("Operation", allow_operation))
                     if ok]
            raise TypeError("Can not convert a %s into a %s." % (type(obj).__name__,
                                                                   " or ".join(types)))
        if ":" in obj and allow_tensor:
            op_name, _, index = obj.rpartition(":")
            try:
                index = int(index)
            except ValueError:
                raise ValueError("The name %r looks a like a Tensor name, but is not a valid "
                                 "one. Tensor names must be of the form "
                                 "\"<op_name>:<output_index>\"." % obj)
            op = self._nodes_by_name.get(op_name)
            if op is None:
                raise KeyError("The name %r refers to a Tensor which does not exist. The "
                               "operation, %r, does not exist in the graph." % (obj, op_name))
            if index < 0 or index >= len(op._outputs):
                raise KeyError("The name %r refers to a Tensor which does not exist. The "
                               "operation, %r, exists but only has %d outputs."
                               % (obj, op_name, len(op._outputs)))
            return op._outputs[index]
        if ":" in obj:
            raise ValueError("Name %r appears to refer to a Tensor, not an Operation." % obj)
        if not allow_operation:
            if obj in self._nodes_by_name:
                raise ValueError("The name %r refers to an Operation, not a Tensor. Tensor names "
                                 "must be of the form \"<op_name>:<output_index>\"." % obj)
            raise KeyError("The name %r refers to a Tensor which does not exist." % obj)
        op = self._nodes_by_name.get(obj)
        if op is None:
            raise KeyError("The name %r refers to an Operation not in the graph." % obj)
        return op

    # -------------------------------------------------------------- names, scopes, devices
    def unique_name(self, name, mark_as_used=True):
        """`name` under the current name scope, with "_N" appended when already used
        (compared case-insensitively, as TF does)."""
        if self._state.name_stack:
            name = self._state.name_stack + "/" + name
        key = name.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count > 0:
            base = key
            while True:
                candidate = "%s_%d" % (base, count)
                if candidate not in self._names_in_use:
                    break
                count += 1
            if mark_as_used:
                self._names_in_use[candidate] = 1
            name = "%s_%d" % (name, count)
        return name

    def get_name_scope(self):
        return self._state.name_stack

    @contextlib.contextmanager
    def name_scope(self, name):
        """Opens a name scope: "a" -> unique "a/" under the current scope; "a/" (trailing slash)
        re-enters exactly that scope; None or "" resets to the top level."""
        old = self._state.name_stack
        if not name:
            new = ""
        else:
            if isinstance(name, bytes):
                name = name.decode("utf-8")
            regex = _VALID_SCOPE_NAME if old else _VALID_OP_NAME
            if not regex.match(name):
                raise ValueError("'%s' is not a valid scope name" % name)
            if name.endswith("/"):
                new = name[:-1]
            else:
                with self._lock:
                    new = self.unique_name(name)
        self._state.name_stack = new
        try:
            yield (new + "/") if new else ""
        finally:
            self._state.name_stack = old

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created inside depend (by control edges) on `control_inputs` (ops or tensors);
        None clears the dependencies of enclosing blocks."""
        frames = self._state.control_frames
        if control_inputs is None:
            saved = list(frames)
            del frames[:]
            try:
                yield
            finally:
                frames[:] = saved
            return
        resolved = []
        for c in control_inputs:
            if isinstance(c, ops.Tensor):
                c = c.op
            c = self.as_graph_element(c, allow_tensor=False, allow_operation=True) \
                if isinstance(c, (str, ops.Operation)) else c
            if not isinstance(c, ops.Operation):
                raise TypeError("Control input must be Operation or Tensor: %r" % (c,))
            if c not in resolved:
                resolved.append(c)
        frames.append(resolved)
        try:
            yield
        finally:
            frames.pop()

    def _current_control_inputs(self):
        out = []
        for frame in self._state.control_frames:
            for op in frame:
                if op not in out:
                    out.append(op)
        return out

    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Ops created inside get this device in NodeDef.device, as in TF 1.x: a specification
        string or tx.DeviceSpec is merged with the enclosing scopes' (the inner scope's fields
        win, the others come from outside: "/job:w" around "/gpu:0" gives
        "/job:w/device:GPU:0"); a function is called with each new Operation (whose device the
        inner scopes have set) and returns its device (a string, a DeviceSpec or None); None
        clears the enclosing scopes; "" changes nothing. ValueError for a malformed spec."""
        spec = device_name_or_function
        if isinstance(spec, pydev.DeviceSpec):
            spec = spec.to_string()
        elif isinstance(spec, str):
            pydev.canonical_name(spec)  # fails early on a malformed spec
        elif spec is not None and not callable(spec):
            raise TypeError("device() takes a device string, a DeviceSpec, a function or None; "
                            "got %r" % (spec,))
        self._state.device_stack.append(spec)
        try:
            yield
        finally:
            self._state.device_stack.pop()

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        """Ops created inside are placed with `op` (an Operation, Tensor or variable), as in
        TF 1.x: they get a `_class` attr listing op's colocation groups ("loc:@op", merged with
        any enclosing colocate_with's) and op's device; the enclosing tx.device scopes do not
        apply inside. ignore_existing=True drops the enclosing colocations; op=None with it
        clears them (ValueError without it)."""
        if op is None and not ignore_existing:
            raise ValueError("Trying to reset colocation (op is None) but ignore_existing is "
                             "not True")
        if op is not None and not isinstance(op, ops.Operation):
            op = getattr(op, "op", None)
            if not isinstance(op, ops.Operation):
                raise TypeError("colocate_with takes an Operation, a Tensor or a variable")
        state = self._state
        saved = state.device_stack, state.colocation_stack
        state.device_stack = []
        base = [] if ignore_existing else state.colocation_stack
        state.colocation_stack = base + ([op] if op is not None else [])
        try:
            yield
        finally:
            state.device_stack, state.colocation_stack = saved

    def _apply_colocation(self, op):
        stack = self._state.colocation_stack
        if not stack:
            return
        groups = sorted({g for c in stack for g in c.colocation_groups()})
        device = next((c.device for c in stack if c.device), "")
        if device:
            op._node_def.device = device
        op._node_def.attr["_class"].list.s[:] = groups

    def _apply_device_stack(self, op):
        """Applies the device scopes to `op`, innermost first, starting from the device the op
        already has (an imported node's, or "")."""
        device = op._node_def.device
        for spec in reversed(self._state.device_stack):
            if spec is None:
                break
            if callable(spec):
                op._node_def.device = device
                device = pydev.canonical_name(spec(op))
            elif spec:
                device = pydev.merge_device(spec, device)
        op._node_def.device = device

    # -------------------------------------------------------------- collections
    def add_to_collection(self, name, value):
        with self._lock:
            self._collections.setdefault(name, []).append(value)

    def get_collection_ref(self, name):
        with self._lock:
            return self._collections.setdefault(name, [])

    def get_collection(self, name, scope=None):
        with self._lock:
            items = list(self._collections.get(name, []))
        if scope is None:
            return items
        pattern = re.compile(scope)
        return [i for i in items if pattern.match(getattr(i, "name", "") or "")]

    def get_all_collection_keys(self):
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name):
        self._collections.pop(name, None)

    # -------------------------------------------------------------- export
    def as_graph_def(self, from_version=None, add_shapes=False):
        """A GraphDef of the ops (in creation order) with this graph's versions."""
        gd = graph_pb2.GraphDef()
        gd.versions.CopyFrom(self._graph_def_versions)
        with self._lock:
            op_list = self._ops[from_version or 0:]
            functions = list(self._functions)
        for f in functions:
            gd.library.function.add().CopyFrom(f)
        for op in op_list:
            nd = gd.node.add()
            nd.CopyFrom(op._node_def)
            if add_shapes:
                shapes = nd.attr["_output_shapes"].list.shape
                for t in op._outputs:
                    shapes.add().CopyFrom(t.shape.as_proto())
        return gd

    # -------------------------------------------------------------- function library
    def _add_function(self, fdef):
        """Adds a FunctionDef to the graph's library (GraphDef.library); ValueError when the
        name is taken."""
        name = fdef.signature.name
        with self._lock:
            if name in self._function_names:
                raise ValueError("Function '%s' is already in the graph's library" % name)
            self._function_names.add(name)
            self._functions.append(fdef)

    def _is_function(self, name):
        return name in self._function_names

    # -------------------------------------------------------------- op creation
    def create_op(self, op_type, inputs, dtypes=None, input_types=None, name=None, attrs=None,
                  op_def=None, compute_shapes=True, compute_device=True):
        """Adds an op of `op_type` with data inputs `inputs` (Tensors) and `attrs` (name ->
        AttrValue). `dtypes`/`input_types`, when given, are checked against the inferred output
        types and the inputs' types (TypeError). compute_device=False leaves the enclosing
        device scopes and functions out (as TF). compute_shapes: ignored, as TF does (shapes
        are always inferred). op_def: not supported (NotImplementedError; the registered OpDef
        is used)."""
        del compute_shapes  # TF: deprecated, no effect
        if op_def is not None:
            raise NotImplementedError("Graph.create_op: op_def is not supported (ops use their "
                                      "registered OpDef)")
        inputs = list(inputs)
        if input_types is not None:
            got = [t.dtype.base_dtype for t in inputs]
            want = [dtypes_lib.as_dtype(d).base_dtype for d in input_types]
            if got != want:
                raise TypeError("In op '%s', input types (%s) are not compatible with expected "
                                "types (%s)" % (name or op_type, [d.name for d in got],
                                                [d.name for d in want]))
        op = self._create_op_internal(op_type, inputs, attrs, name,
                                      apply_device_stack=compute_device)
        if dtypes is not None:
            got = [t.dtype for t in op.outputs]
            want = [dtypes_lib.as_dtype(d) for d in dtypes]
            if got != want:
                raise TypeError("Op %s produces %s, not the requested %s" % (op.name, got, want))
        return op

    def _create_op_internal(self, op_type, inputs, attrs=None, name=None, control_inputs=(),
                            exact_name=False, device=None, apply_control_deps=True,
                            apply_device_stack=True):
        """The one path by which ops enter the graph. `name` ending in "/" (a scope) or with
        exact_name is used as is (ValueError if taken); otherwise it is made unique."""
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        inputs = list(inputs)
        for t in inputs:
            if not isinstance(t, ops.Tensor):
                raise TypeError("Input to op %s must be a Tensor, got %r" % (op_type, t))
            if t.graph is not self:
                raise ValueError("Tensor %s must be from the same graph as the op being created "
                                 "(%s)." % (t.name, name or op_type))
        with self._lock:
            if exact_name or (name and name.endswith("/")):
                node_name = name[:-1] if name.endswith("/") else name
                if node_name in self._nodes_by_name:
                    raise ValueError("Duplicate node name in graph: '%s'" % node_name)
                self._names_in_use.setdefault(node_name.lower(), 1)
            else:
                node_name = self.unique_name(name or op_type)
            if not _VALID_OP_NAME.match(node_name):
                raise ValueError("'%s' is not a valid node name" % node_name)

            nd = node_def_pb2.NodeDef(name=node_name, op=op_type)
            nd.input.extend(t._as_node_def_input() for t in inputs)
            input_ops = {t.op for t in inputs}
            controls = []
            for c in list(control_inputs) + (self._current_control_inputs()
                                             if apply_control_deps else []):
                if c not in controls and c not in input_ops:
                    controls.append(c)
            nd.input.extend("^" + c.name for c in controls)
            if attrs:
                for k, v in attrs.items():
                    nd.attr[k].CopyFrom(v)
            if device:
                nd.device = device

            filled, in_types, out_types, out_shapes = self._infer(nd, inputs)
            for i, (t, want) in enumerate(zip(inputs, in_types)):
                want = dtypes_lib.as_dtype(want)
                if t.dtype.base_dtype != want.base_dtype:
                    raise TypeError("Input %d of node %s was passed %s from %s incompatible with "
                                    "expected %s." % (i, node_name, t.dtype.name, t.name,
                                                      want.name))
            op = ops.Operation(filled, self, inputs, out_types,
                               [tensor_shape.TensorShape(s) for s in out_shapes], controls)
            if apply_device_stack:
                self._apply_device_stack(op)
            self._apply_colocation(op)
            op._id = len(self._ops)
            self._ops.append(op)
            self._nodes_by_name[node_name] = op
            return op

    def _infer(self, nd, inputs):
        shapes = [t.shape._as_partial() for t in inputs]
        values = [_small_constant_value(t) for t in inputs]
        try:
            filled, in_types, out_types, out_shapes = _pywrap.infer_node(
                nd.SerializeToString(), shapes, values)
        except errors.OpError as e:
            raise errors._as_value_error(e) from None
        filled_nd = node_def_pb2.NodeDef()
        filled_nd.ParseFromString(filled)
        return filled_nd, in_types, out_types, out_shapes


def _small_constant_value(t):
    n = t.shape.num_elements()
    if n is None or n > _MAX_CONST_ELEMENTS_FOR_INFERENCE:
        return None
    from tensorflux.framework import tensor_util  # pylint: disable=g-import-not-at-top
    try:
        return tensor_util.constant_value(t)
    except Exception:  # pylint: disable=broad-except
        return None
