"""Variable scopes and tx.get_variable (TF 1.x tf.compat.v1.variable_scope / get_variable).

A graph keeps a store of the variables made by get_variable, keyed by full name, and a current
VariableScope (name, reuse, initializer, regularizer, dtype). get_variable(name) looks up
"<scope name>/<name>":
  - found, scope reuse False     -> ValueError "Variable x already exists, disallowed. ..."
  - found, reuse True/AUTO_REUSE -> the stored variable (ValueError if the shape or dtype given
                                    is incompatible with it)
  - missing, reuse True          -> ValueError "Variable x does not exist, or was not created
                                    with tf.get_variable(). ..."
  - missing otherwise            -> a new tx.Variable named exactly "<scope>/<name>" whose
                                    initial value comes from the initializer (the argument, else
                                    the scope's, else glorot_uniform for floating dtypes and zeros
                                    for integers, bools and strings), built under
                                    "<scope>/<name>/Initializer/". A regularizer's loss (built
                                    under "<scope>/<name>/Regularizer/") goes to
                                    GraphKeys.REGULARIZATION_LOSSES unless it returns None.

variable_scope(name_or_scope, default_name=None, values=None, initializer=None,
regularizer=None, reuse=None, dtype=None, ...) opens a scope:
  - a string nests under the current scope ("outer/inner") and opens a name scope of that name
    for ops (made unique: re-entering "inner" names ops "inner_1/...", variables still
    "inner/...");
  - a VariableScope object re-enters exactly that scope (its name, not nested) and its original
    name scope;
  - None with default_name: default_name made unique among the scopes opened so far under the
    current scope ("dense", "dense_1", ...); reuse=True is a ValueError there.
  reuse: True (reuse in this scope and every sub-scope), AUTO_REUSE (create when missing, reuse
  otherwise), None or False (inherit the enclosing scope's). initializer, regularizer, dtype: the
  defaults of get_variable inside, inherited by sub-scopes unless given.
"""

import contextlib
import enum

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework import tensor_shape
from tensorflux.ops import init_ops
from tensorflux.ops import variables

# Graph collection keys holding the per-graph store and scope state (lists of one object).
_VARSTORE_KEY = "__variable_store"
_VARSCOPESTORE_KEY = "__varscope"


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


class _VariableStore:
    """The variables made by get_variable in one graph, by full name."""

    def __init__(self):
        self._vars = {}

    def has(self, name):
        return name in self._vars

    def get_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     validate_shape=True, caching_device=None, constraint=None):
        initializing_from_value = initializer is not None and not callable(initializer)
        if shape is not None and initializing_from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype = dtypes.as_dtype(dtype).base_dtype
        shape = tensor_shape.as_shape(shape)
        if name in self._vars:
            if reuse is False or reuse is None:
                raise ValueError("Variable %s already exists, disallowed. Did you mean to set "
                                 "reuse=True or reuse=tf.AUTO_REUSE in VarScope?" % name)
            found = self._vars[name]
            if not shape.is_compatible_with(found.get_shape()):
                raise ValueError("Trying to share variable %s, but specified shape %s and found "
                                 "shape %s." % (name, shape, found.get_shape()))
            if dtype != found.dtype.base_dtype:
                raise ValueError("Trying to share variable %s, but specified dtype %s and found "
                                 "dtype %s." % (name, dtype.name, found.dtype.base_dtype.name))
            return found
        if reuse is True:
            raise ValueError("Variable %s does not exist, or was not created with "
                             "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                             "VarScope?" % name)

        if initializer is None:
            initializer = _default_initializer(name, dtype)
        if initializing_from_value:
            init_val = initializer
            variable_dtype = None
        else:
            if isinstance(initializer, type):
                initializer = initializer()
            if not shape.is_fully_defined():
                raise ValueError("Shape of a new variable (%s) must be fully defined, but "
                                 "instead was %s." % (name, shape))
            shape_list = shape.as_list()

            def init_val():
                return initializer(shape_list, dtype=dtype)
            variable_dtype = dtype
        if trainable is None:
            trainable = True
        graph = ops.get_default_graph()
        # Variables and their initializers sit outside any control-dependency block and name
        # scope (as TF's init_scope): the name is exactly `name`.
        with graph.control_dependencies(None), graph.name_scope(None):
            v = variables.Variable(initial_value=init_val, name=name, trainable=trainable,
                                   collections=collections, dtype=variable_dtype,
                                   validate_shape=validate_shape,
                                   caching_device=caching_device, constraint=constraint)
        self._vars[name] = v
        if regularizer is not None:
            with graph.name_scope(None), graph.name_scope(name + "/Regularizer/"):
                loss = regularizer(v)
            if loss is not None:
                ops.add_to_collection(ops.GraphKeys.REGULARIZATION_LOSSES, loss)
        return v


def _default_initializer(name, dtype):
    if dtype.is_floating:
        return init_ops.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_unsigned or dtype.is_bool or dtype == dtypes.string:
        return init_ops.zeros_initializer()
    raise ValueError("An initializer for variable %s of %s is required" % (name, dtype.name))


class VariableScope:
    """A scope's name and the defaults get_variable uses inside it (see the module docstring).
    Obtain the current one with tx.get_variable_scope(); pass one to variable_scope to
    re-enter it."""

    def __init__(self, reuse, name="", initializer=None, regularizer=None, caching_device=None,
                 partitioner=None, custom_getter=None, name_scope="", dtype=dtypes.float32,
                 use_resource=None, constraint=None):
        _check_unsupported("VariableScope", partitioner=partitioner,
                           custom_getter=custom_getter, use_resource=use_resource)
        self._caching_device = caching_device
        self._constraint = constraint
        self._name = name
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._dtype = dtypes.as_dtype(dtype)
        self._name_scope = name_scope

    @property
    def name(self):
        return self._name

    @property
    def original_name_scope(self):
        """The op name scope ("a/b/") opened when this scope was first entered."""
        return self._name_scope

    @property
    def reuse(self):
        return self._reuse

    @property
    def initializer(self):
        return self._initializer

    @property
    def regularizer(self):
        return self._regularizer

    @property
    def dtype(self):
        return self._dtype

    @property
    def caching_device(self):
        return self._caching_device

    @property
    def constraint(self):
        return self._constraint

    def set_constraint(self, constraint):
        self._constraint = constraint

    def set_caching_device(self, caching_device):
        self._caching_device = caching_device

    def reuse_variables(self):
        """Turns reuse on for the rest of this scope."""
        self._reuse = True

    def set_initializer(self, initializer):
        self._initializer = initializer

    def set_regularizer(self, regularizer):
        self._regularizer = regularizer

    def set_dtype(self, dtype):
        self._dtype = dtypes.as_dtype(dtype)

    def get_variable(self, var_store, name, shape=None, dtype=None, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None,
                     synchronization=None, aggregation=None):
        """var_store.get_variable for "<this scope>/<name>" with this scope's defaults (the
        arguments as tx.get_variable's)."""
        _check_unsupported("VariableScope.get_variable", partitioner=partitioner,
                           custom_getter=custom_getter, synchronization=synchronization,
                           aggregation=aggregation, use_resource=use_resource)
        if caching_device is None:
            caching_device = self._caching_device
        if constraint is None:
            constraint = self._constraint
        if regularizer is None:
            regularizer = self._regularizer
        if reuse is None:
            reuse = self._reuse
        full_name = self._name + "/" + name if self._name else name
        if dtype is not None and initializer is not None and not callable(initializer):
            init_dtype = ops.convert_to_tensor(initializer).dtype.base_dtype
            if init_dtype != dtypes.as_dtype(dtype).base_dtype:
                raise ValueError("Initializer type '%s' and explicit dtype '%s' don't match."
                                 % (init_dtype.name, dtypes.as_dtype(dtype).name))
        if initializer is None:
            initializer = self._initializer
        if dtype is None:
            dtype = self._dtype
        return var_store.get_variable(full_name, shape=shape, dtype=dtype,
                                      initializer=initializer, regularizer=regularizer,
                                      reuse=reuse, trainable=trainable, collections=collections,
                                      validate_shape=validate_shape,
                                      caching_device=caching_device, constraint=constraint)


class _ScopeState:
    """Per graph: the current VariableScope and how often each scope name was opened (for
    default_name uniqueness)."""

    def __init__(self):
        self.current = VariableScope(False)
        self.counts = {}

    def open(self, scope_name):
        self.counts[scope_name] = self.counts.get(scope_name, 0) + 1

    def close_subscopes(self, scope_name):
        """On leaving a scope opened by name, its sub-scopes' counts restart (as TF), so
        re-entering it makes the same default names again."""
        prefix = scope_name + "/"
        for k in self.counts:
            if k.startswith(prefix):
                self.counts[k] = 0


def _singleton(key, factory):
    ref = ops.get_collection_ref(key)
    if not ref:
        ref.append(factory())
    return ref[0]


def _var_store():
    return _singleton(_VARSTORE_KEY, _VariableStore)


def _scope_state():
    return _singleton(_VARSCOPESTORE_KEY, _ScopeState)


def get_variable_scope():
    """The current VariableScope of the default graph."""
    return _scope_state().current


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                 synchronization=None, aggregation=None):
    """Gets or creates the variable "<current scope>/<name>" (module docstring for the rules).

    shape: the variable's shape (fully defined for a new variable); None when `initializer` is a
    value (a Tensor, number, list or array), which then gives shape and dtype. dtype: default the
    scope's (float32). initializer: a callable (shape, dtype=...) -> Tensor such as
    tx.initializers.*, an initializer class, or a value. regularizer: callable variable ->
    scalar loss Tensor or None. trainable: default True (adds TRAINABLE_VARIABLES). collections:
    the graph collections to add the variable to (default [GLOBAL_VARIABLES]). Returns a
    tx.Variable (a resource variable). caching_device and constraint (default: the scope's):
    as tx.Variable's. partitioner, custom_getter, synchronization, aggregation (other than None)
    and use_resource=False raise NotImplementedError naming the argument.
    """
    return get_variable_scope().get_variable(
        _var_store(), name, shape=shape, dtype=dtype, initializer=initializer,
        regularizer=regularizer, trainable=trainable, collections=collections,
        caching_device=caching_device, partitioner=partitioner, validate_shape=validate_shape,
        use_resource=use_resource, custom_getter=custom_getter, constraint=constraint,
        synchronization=synchronization, aggregation=aggregation)


def _check_unsupported(where, use_resource=None, **others):
    for what in sorted(others):
        if others[what] is not None:
            raise NotImplementedError("%s: %s is not supported" % (where, what))
    if use_resource is not None and not use_resource:
        raise NotImplementedError("%s: use_resource=False is not supported (every variable "
                                  "here is a resource variable)" % where)


def no_regularizer(_):
    """A regularizer that adds nothing (to turn off a scope's regularizer for one variable)."""
    return None


def _unique_default_name(prefix):
    state = _scope_state()
    current = state.current.name
    name = current + "/" + prefix if current else prefix
    if state.counts.get(name, 0) == 0:
        return prefix
    idx = 1
    while state.counts.get("%s_%d" % (name, idx), 0) > 0:
        idx += 1
    return "%s_%d" % (prefix, idx)


@contextlib.contextmanager
def variable_scope(name_or_scope, default_name=None, values=None, initializer=None,
                   regularizer=None, caching_device=None, partitioner=None, custom_getter=None,
                   reuse=None, dtype=None, use_resource=None, constraint=None,
                   auxiliary_name_scope=True):
    """Opens a variable scope (module docstring); yields its VariableScope. caching_device,
    constraint: the defaults of get_variable's inside (inherited by sub-scopes). partitioner,
    custom_getter (other than None) and use_resource=False raise NotImplementedError naming the
    argument."""
    _check_unsupported("variable_scope", partitioner=partitioner, custom_getter=custom_getter,
                       use_resource=use_resource)
    if default_name is None and name_or_scope is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if reuse is False:  # no scope can turn reuse off: False means inherit, as TF
        reuse = None
    if not (reuse is None or reuse is True or reuse is AUTO_REUSE):
        raise ValueError("reuse must be True, False, None or tx.AUTO_REUSE, got %r" % (reuse,))
    if values is not None:
        graph = ops._graph_from_values([v for v in values
                                        if isinstance(v, (ops.Tensor, ops.Operation))])
    else:
        graph = ops.get_default_graph()
    with graph.as_default():
        state = _scope_state()
        old = state.current
        if isinstance(name_or_scope, VariableScope):
            scope_name = name_or_scope.name
            name_scope = name_or_scope.original_name_scope
            base = name_or_scope
            new_reuse = reuse if reuse is not None else name_or_scope.reuse
        else:
            if name_or_scope is not None:
                if not isinstance(name_or_scope, str):
                    raise TypeError("VariableScope: name_or_scope must be a string or "
                                    "VariableScope.")
                short = name_or_scope
            else:
                if reuse is True:
                    raise ValueError("reuse=True cannot be used without a name_or_scope")
                short = _unique_default_name(default_name)
            scope_name = old.name + "/" + short if old.name else short
            base = old
            new_reuse = reuse or old.reuse
            name_scope = None
        if auxiliary_name_scope:
            if name_scope is not None:
                ns_cm = graph.name_scope(name_scope or None)
            else:
                ns_cm = graph.name_scope(name_or_scope if name_or_scope is not None
                                         else default_name)
        else:
            ns_cm = contextlib.nullcontext(graph.get_name_scope() + "/"
                                           if graph.get_name_scope() else "")
        with ns_cm as opened_name_scope:
            scope = VariableScope(
                new_reuse, name=scope_name,
                initializer=initializer if initializer is not None else base.initializer,
                regularizer=regularizer if regularizer is not None else base.regularizer,
                caching_device=(caching_device if caching_device is not None
                                else base.caching_device),
                constraint=constraint if constraint is not None else base.constraint,
                dtype=dtype if dtype is not None else base.dtype,
                name_scope=opened_name_scope if name_scope is None else name_scope)
            state.open(scope_name)
            saved_counts = dict(state.counts)
            state.current = scope
            try:
                yield scope
            finally:
                state.current = old
                if isinstance(name_or_scope, VariableScope):
                    state.counts = saved_counts
                else:
                    state.close_subscopes(scope_name)
