"""Resource variables (TF 1.x's ResourceVariable, `use_resource=True`).

A ResourceVariable is a VarHandleOp (the handle, a DT_RESOURCE scalar) plus the ops that read
and update the variable it names in the session's ResourceMgr:

    v = tx.Variable([1.0, 2.0], name="v")   # VarHandleOp "v", AssignVariableOp "v/Assign",
                                             # ReadVariableOp "v/Read/ReadVariableOp"
    sess.run(v.initializer); sess.run(v.assign_add([1.0, 1.0])); sess.run(v)  # [2., 3.]

Reads are snapshots (an update after a read does not change the value read). Each use of the
variable as a tensor (an operator, convert_to_tensor, value()) adds its own ReadVariableOp under
the control dependencies in effect, as TF 1.x resource variables do; sess.run(v) and v.eval()
fetch the read made with the variable. Reading before the initializer ran raises
FailedPreconditionError naming the variable.
"""

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework import tensor_shape
from tensorflux.framework.op_def_library import apply_op

GLOBAL_VARIABLES = ops.GraphKeys.GLOBAL_VARIABLES
TRAINABLE_VARIABLES = ops.GraphKeys.TRAINABLE_VARIABLES
LOCAL_VARIABLES = ops.GraphKeys.LOCAL_VARIABLES


# ---------------------------------------------------------------- raw op wrappers

def var_handle_op(dtype, shape, container="", shared_name="", name=None):
    return apply_op("VarHandleOp", dtype=dtypes.as_dtype(dtype).base_dtype,
                    shape=tensor_shape.as_shape(shape), container=container,
                    shared_name=shared_name, name=name or "VarHandleOp")


def read_variable_op(resource, dtype, name=None):
    return apply_op("ReadVariableOp", resource=resource, dtype=dtype,
                    name=name or "ReadVariableOp")


def assign_variable_op(resource, value, validate_shape=False, name=None):
    return apply_op("AssignVariableOp", resource=resource, value=value,
                    validate_shape=validate_shape, name=name or "AssignVariableOp")


def assign_add_variable_op(resource, value, name=None):
    return apply_op("AssignAddVariableOp", resource=resource, value=value,
                    name=name or "AssignAddVariableOp")


def assign_sub_variable_op(resource, value, name=None):
    return apply_op("AssignSubVariableOp", resource=resource, value=value,
                    name=name or "AssignSubVariableOp")


def var_is_initialized_op(resource, name=None):
    return apply_op("VarIsInitializedOp", resource=resource, name=name or "VarIsInitializedOp")


def destroy_resource_op(resource, ignore_lookup_error=True, name=None):
    return apply_op("DestroyResourceOp", resource=resource,
                    ignore_lookup_error=ignore_lookup_error, name=name or "DestroyResourceOp")


# ---------------------------------------------------------------- ResourceVariable

class ResourceVariable:
    """A variable held by the session (module docstring). Created in the default graph."""

    def __init__(self, initial_value=None, trainable=None, collections=None,
                 validate_shape=True, caching_device=None, name=None, variable_def=None,
                 dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 use_resource=None, synchronization=None, aggregation=None, shape=None):
        """TF's tf.compat.v1.Variable arguments, in TF's order. trainable: None means True.
        caching_device: where value() reads: one read (an Identity of the variable's first
        read) made there at creation, returned by every value() (as TF). expected_shape: ignored,
        as TF does for resource variables. shape: the variable's static shape (default: the
        initial value's; may be less defined). constraint: a callable variable -> Tensor that
        optimizers assign to the variable after each update (as TF). variable_def,
        import_scope, synchronization, aggregation (other than None) and use_resource=False
        (every variable here is a resource variable) raise NotImplementedError naming the
        argument."""
        del expected_shape  # TF: "Deprecated. Ignored."
        if constraint is not None and not callable(constraint):
            raise ValueError("The `constraint` argument must be a callable.")
        self._constraint = constraint
        for what, value in (("variable_def", variable_def), ("import_scope", import_scope),
                            ("synchronization", synchronization),
                            ("aggregation", aggregation)):
            if value is not None:
                raise NotImplementedError("tx.Variable: %s is not supported" % what)
        if use_resource is not None and not use_resource:
            raise NotImplementedError("tx.Variable: use_resource=False is not supported (every "
                                      "tx.Variable is a resource variable)")
        if trainable is None:
            trainable = True
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if collections is None:
            collections = [GLOBAL_VARIABLES]
        if not isinstance(collections, (list, tuple, set)):
            raise ValueError("collections argument to Variable constructor must be a list, tuple, "
                             "or set. Got %s of type %s" % (collections, type(collections)))
        collections = list(collections)
        if trainable and TRAINABLE_VARIABLES not in collections:
            collections.append(TRAINABLE_VARIABLES)
        graph = ops.get_default_graph()
        # Like TF's init_scope: the variable's ops ignore enclosing control dependencies.
        with graph.control_dependencies(None), graph.name_scope(name or "Variable") as scope:
            handle_name = scope[:-1] if scope.endswith("/") else scope
            with graph.name_scope("Initializer"):
                if callable(initial_value):
                    initial_value = initial_value()
                self._initial_value = ops.convert_to_tensor(
                    initial_value, dtype=dtype, name="initial_value")
            self._dtype = self._initial_value.dtype.base_dtype
            if shape is not None:
                self._shape = tensor_shape.as_shape(shape)
                if not self._shape.is_compatible_with(self._initial_value.shape):
                    raise ValueError("The initial value's shape (%s) is not compatible with the "
                                     "explicitly supplied `shape` argument (%s)."
                                     % (self._initial_value.shape, self._shape))
            else:
                self._shape = (self._initial_value.shape if validate_shape
                               else tensor_shape.TensorShape(None))
            # The handle gets the variable's name exactly ("v", so v.name is "v:0").
            self._handle = graph._create_op_internal(
                "VarHandleOp", [],
                {"dtype": ops._attr_from_python(self._dtype, "type"),
                 "shape": ops._attr_from_python(self._shape, "shape"),
                 "shared_name": ops._attr_from_python(handle_name, "string"),
                 "container": ops._attr_from_python("", "string")},
                name=handle_name, exact_name=True).outputs[0]
            # The ops on the handle go where the handle went (TF: ops.device(handle.device)),
            # so that a device function (tx.train.replica_device_setter) that sends the
            # VarHandleOp to a ps task sends them there too.
            with graph.device(self._handle.device):
                self._is_initialized_op = var_is_initialized_op(self._handle,
                                                                name="IsInitialized")
                self._initializer_op = assign_variable_op(
                    self._handle, self._initial_value, validate_shape=validate_shape,
                    name="Assign")
                with graph.name_scope("Read"):
                    self._graph_element = self._read("ReadVariableOp")
            self._cached_value = None
            if caching_device is not None:
                # As TF: made apart from the enclosing device and colocation scopes.
                with graph.colocate_with(None, ignore_existing=True), \
                        graph.device(caching_device):
                    self._cached_value = apply_op("Identity", input=self._graph_element,
                                                  name="Identity")
        self._caching_device = caching_device
        self._trainable = trainable
        self._name = self._handle.name
        for key in collections:
            graph.add_to_collection(key, self)

    # -- properties (TF's names)
    @property
    def name(self):
        return self._name

    @property
    def op(self):
        return self._handle.op

    @property
    def handle(self):
        return self._handle

    @property
    def graph(self):
        return self._handle.graph

    @property
    def device(self):
        return self._handle.device

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def trainable(self):
        return self._trainable

    @property
    def constraint(self):
        """The callable optimizers apply after each update, or None."""
        return self._constraint

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self):
        return self._initial_value

    def is_initialized(self, name=None):
        with self.graph.device(self._handle.device):
            return var_is_initialized_op(self._handle, name=name)

    # -- reads
    def _read(self, name):
        with self.graph.device(self._handle.device):
            value = read_variable_op(self._handle, self._dtype, name=name)
        value.set_shape(self._shape)
        return value

    def value(self):
        """A new read of the variable (a ReadVariableOp in the current name scope), ordered by
        the control dependencies in effect, as TF's resource variables: every implicit use of
        the variable as a tensor (`v + 1`, `tx.matmul(x, v)`, convert_to_tensor) goes through
        here, so inside `tx.control_dependencies([v.assign(3.0)])` it sees the assignment. The
        read ignores enclosing colocation scopes and goes to the handle's device."""
        if self._cached_value is not None:  # caching_device: the one cached read (as TF)
            return self._cached_value
        with self.graph.colocate_with(None, ignore_existing=True):
            return self._read("ReadVariableOp")

    def read_value(self):
        """A new read of the variable under the name scope "Read" (ordered by the control
        dependencies in effect)."""
        with self.graph.name_scope("Read"):
            return self._read("ReadVariableOp")

    def _as_graph_element(self):
        # What sess.run(v) and v.eval() fetch: the read made with the variable, as in TF.
        return self._graph_element

    def eval(self, session=None):
        return self._graph_element.eval(session=session)

    # -- updates: each returns the new value (a read after the update) when read_value is
    # true, else the update Operation, as TF's ResourceVariable.
    def _update(self, op_fn, value, use_locking, name, read_value, **kwargs):
        del use_locking  # updates always hold the variable's lock here
        value = ops.convert_to_tensor(value, dtype=self._dtype)
        if not self._shape.is_compatible_with(value.shape) and kwargs.get("validate_shape", True):
            raise ValueError("Shapes %s and %s are incompatible" % (self._shape, value.shape))
        # With a cached value (caching_device), updates run after it, as TF's.
        deps = [self._cached_value] if self._cached_value is not None else []
        with self.graph.control_dependencies(deps), self.graph.device(self._handle.device):
            update = op_fn(self._handle, value, name=name, **kwargs)
        if not read_value:
            return update
        with self.graph.control_dependencies([update]):
            return self.read_value()

    def assign(self, value, use_locking=False, name=None, read_value=True):
        return self._update(assign_variable_op, value, use_locking, name or "AssignVariableOp",
                            read_value, validate_shape=True)

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        return self._update(assign_add_variable_op, delta, use_locking,
                            name or "AssignAddVariableOp", read_value)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        return self._update(assign_sub_variable_op, delta, use_locking,
                            name or "AssignSubVariableOp", read_value)

    def load(self, value, session=None):
        """Assigns `value` (a numpy value) in `session` (default: the default session)."""
        from tensorflux.client import session as session_lib  # pylint: disable=g-import-not-at-top
        sess = session or session_lib.get_default_session()
        if sess is None:
            raise ValueError("Either session argument should be provided or a default session "
                             "should be established")
        sess.run(self.assign(value, read_value=False))

    def __repr__(self):
        return "<tx.Variable '%s' shape=%s dtype=%s>" % (self.name, self._shape, self._dtype.name)

    __hash__ = object.__hash__

    def __bool__(self):
        raise TypeError("Using a `tx.Variable` as a Python `bool` is not allowed.")

    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")

    def __array__(self, dtype=None):
        raise NotImplementedError("Cannot convert a tx.Variable (%s) to a numpy array; run it in "
                                  "a tx.Session." % self.name)

    __array_priority__ = 100
    __array_ufunc__ = None


def _to_tensor(v, dtype=None, name=None, as_ref=False):
    del name, as_ref
    if dtype is not None and not dtype.is_compatible_with(v.dtype):
        raise ValueError("Incompatible type conversion requested to type '%s' for variable of "
                         "type '%s'" % (dtype.name, v.dtype.name))
    return v.value()


ops.register_tensor_conversion_function(ResourceVariable, _to_tensor)


def _install_operators():
    """Every operator of tx.Tensor (installed by math_ops / array_ops2) on ResourceVariable,
    applied to a new read of the variable (value())."""
    def make(name):
        method = getattr(ops.Tensor, name)

        def op(self, *args):
            return method(self.value(), *args)
        op.__name__ = name
        return op
    for name in dir(ops.Tensor):
        if (name.startswith("__") and name.endswith("__") and name not in _NOT_OPERATORS
                and callable(getattr(ops.Tensor, name))
                and getattr(ops.Tensor, name) is not getattr(object, name, None)):
            setattr(ResourceVariable, name, make(name))


_NOT_OPERATORS = frozenset([
    "__init__", "__new__", "__repr__", "__str__", "__hash__", "__bool__", "__iter__", "__len__",
    "__array__", "__getattribute__", "__setattr__", "__delattr__", "__dir__", "__class__",
    "__init_subclass__", "__subclasshook__", "__reduce__", "__reduce_ex__", "__sizeof__",
    "__format__", "__eq__", "__ne__", "__array_ufunc__", "__array_priority__", "__weakref__",
    "__dict__", "__module__", "__doc__", "__getstate__"])
