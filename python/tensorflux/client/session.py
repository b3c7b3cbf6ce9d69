"""tx.Session: runs a tx.Graph in the C++ engine (TF 1.x tf.Session).

The C++ session is extended with the nodes added to the graph since the last run, so ops can be
added between runs. run() releases the GIL while the step executes: several Python threads can
run steps on one session at once.
"""

import collections
import collections.abc
import re
import threading

import numpy as np

from tensorflux import config_pb2
from tensorflux import device_attributes_pb2
from tensorflux import graph_pb2
from tensorflux.framework import dtypes
from tensorflux.framework import errors
from tensorflux.framework import ops
from tensorflux.framework import _pywrap

# tensorflux.data.iterator_ops.ONE_SHOT_INITIALIZERS (not imported: data depends on client).
_ONE_SHOT_INITIALIZERS = "_tx_one_shot_iterator_initializers"
_NODE_IN_MESSAGE = re.compile(r"\{\{node ([^}]+)\}\}")


class _DefaultSessionStack(threading.local):
    def __init__(self):
        super().__init__()
        self.stack = []


_default_session_stack = _DefaultSessionStack()


def get_default_session():
    """The innermost session of `with sess.as_default():` (or `with sess:`) in this thread."""
    stack = _default_session_stack.stack
    return stack[-1] if stack else None


def _run_using_default_session(fetch, feed_dict, graph, session):
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate tensor using `eval()`: No default session is "
                             "registered. Use `with sess.as_default()` or pass an explicit "
                             "session to `eval(session=sess)`")
    if session.graph is not graph:
        raise ValueError("Cannot use the given session to evaluate tensor: the tensor's graph "
                         "is different from the session's graph.")
    return session.run(fetch, feed_dict)


# ------------------------------------------------------------------ fetch structures

def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


class _FetchMapper:
    """Flattens a nested fetch structure into graph elements and rebuilds it from values."""

    def __init__(self, graph, fetches):
        self._graph = graph
        self.elements = []  # Tensors and Operations, in leaf order
        self._structure = self._flatten(fetches)

    def _flatten(self, f):
        if f is None:
            raise TypeError("Fetch argument None has invalid type %s" % type(None))
        if (isinstance(f, (ops.Tensor, ops.Operation, str, bytes))
                or callable(getattr(f, "_as_graph_element", None))):
            self.elements.append(self._resolve(f))
            return len(self.elements) - 1
        if _is_namedtuple(f):
            return (type(f), [self._flatten(x) for x in f])
        if isinstance(f, (list, tuple)):
            return (type(f), [self._flatten(x) for x in f])
        if isinstance(f, collections.abc.Mapping):
            return (f, [(k, self._flatten(v)) for k, v in f.items()])
        raise TypeError("Fetch argument %r has invalid type %s, must be a string or Tensor. (Can "
                        "not convert a %s into a Tensor or Operation.)"
                        % (f, type(f), type(f).__name__))

    def _resolve(self, f):
        try:
            return self._graph.as_graph_element(f, allow_tensor=True, allow_operation=True)
        except KeyError as e:
            raise errors._as_value_error(errors.NotFoundError(
                None, None, "Fetch argument %r cannot be interpreted as a Tensor. (%s)"
                % (f, e.args[0] if e.args else e)))
        except ValueError as e:
            raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. (%s)"
                             % (f, e)) from None

    def build(self, values):
        return self._build(self._structure, values)

    def _build(self, s, values):
        if isinstance(s, int):
            return values[s]
        kind, items = s
        if isinstance(kind, collections.abc.Mapping):
            built = [(k, self._build(v, values)) for k, v in items]
            if isinstance(kind, collections.defaultdict):
                out = type(kind)(kind.default_factory)
                out.update(built)
                return out
            try:
                return type(kind)(built)
            except TypeError:
                return dict(built)
        built = [self._build(x, values) for x in items]
        if issubclass(kind, tuple) and hasattr(kind, "_fields"):
            # A namedtuple may name the type of its fetched value (SparseTensor ->
            # SparseTensorValue).
            return getattr(kind, "_fetched_type", kind)(*built)
        return kind(built)


# ------------------------------------------------------------------ feeds

# Numeric dtypes whose feeds pass through when already an ndarray of exactly that dtype (not
# string, whose arrays take several numpy dtypes, nor bfloat16, fed as float32).
_NUMERIC_NUMPY = {
    dt: np.dtype(dt.as_numpy_dtype)
    for dt in (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16,
               dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.uint32,
               dtypes.uint64, dtypes.bool)
}


def _feed_value(tensor, value):
    """`value` as a numpy array of `tensor`'s dtype, refusing lossy kind changes (float to int,
    string to number) with an InvalidArgumentError (also a TypeError) naming the tensor."""
    dt = tensor.dtype.base_dtype
    target = _NUMERIC_NUMPY.get(dt)
    if target is not None and type(value) is np.ndarray and value.dtype == target:
        return value, dt.as_datatype_enum  # the common case: nothing to check or convert
    if isinstance(value, (ops.Tensor, ops.Operation)):
        raise TypeError("The value of a feed cannot be a tx.Tensor object. Acceptable feed values "
                        "include Python scalars, strings, lists, numpy ndarrays.")

    def bad(arr_dtype):
        return errors._as_type_error(errors.InvalidArgumentError(
            None, tensor.op, "Cannot feed a value of dtype %s to tensor '%s' of dtype %s"
            % (arr_dtype, tensor.name, dt.name)))

    try:
        # A string feed that is not an array already becomes an object array, as TF's feeds do:
        # numpy's fixed-width bytes ('S') drop trailing NUL bytes, which a serialized proto may
        # end with.
        if dt == dtypes.string and not isinstance(value, np.ndarray):
            arr = np.asarray(value, dtype=object)
        else:
            arr = np.asarray(value)
    except ValueError as e:
        raise errors._as_type_error(errors.InvalidArgumentError(
            None, tensor.op, "Cannot convert the value fed to '%s' to an array: %s"
            % (tensor.name, e)))
    if dt == dtypes.string:
        if arr.size and arr.dtype.kind not in "OSU":
            raise bad(arr.dtype)
        return arr, dt.as_datatype_enum
    if arr.dtype.kind in "OSU":
        raise bad(arr.dtype)
    if dt == dtypes.bfloat16:
        if arr.dtype.kind not in "biuf":
            raise bad(arr.dtype)
        return arr.astype(np.float32), dt.as_datatype_enum
    target = np.dtype(dt.as_numpy_dtype)
    if arr.dtype != target:
        if not np.can_cast(arr.dtype, target, casting="same_kind"):
            raise bad(arr.dtype)
        if arr.dtype.kind in "iu" and target.kind in "iu" and arr.size:
            info = np.iinfo(target)
            if int(arr.min()) < info.min or int(arr.max()) > info.max:
                raise errors._as_type_error(errors.InvalidArgumentError(
                    None, tensor.op, "Value fed to '%s' is out of range for %s"
                    % (tensor.name, dt.name)))
        arr = arr.astype(target)
    return arr, dt.as_datatype_enum


_MAX_CACHED_PLANS = 256  # Session.run's cache of resolved fetches and feeds, cleared when full


class _RunPlan:
    """A run's fetches and feed keys resolved once: the fetch structure (mapper), the names of
    the distinct fetched tensors, the target operations, each fetch leaf's index into the fetched
    values (None for an operation), and the fed tensors with their names."""

    def __init__(self, session, fetches, feed_keys):
        self.mapper = _FetchMapper(session.graph, fetches)
        self.fetch_names, self.targets, self.slots = [], [], []
        index_of = {}
        for e in self.mapper.elements:
            if isinstance(e, ops.Operation):
                if e.name not in self.targets:
                    self.targets.append(e.name)
                self.slots.append(None)
            else:
                if e.name not in index_of:
                    index_of[e.name] = len(self.fetch_names)
                    self.fetch_names.append(e.name)
                self.slots.append(index_of[e.name])
        self.feeds = [(t, t.name) for t in map(session._feed_tensor, feed_keys)]


_DeviceAttributes = collections.namedtuple(
    "_DeviceAttributes", ["name", "device_type", "memory_limit_bytes", "incarnation"])


class BaseSession:
    """Common implementation of Session and InteractiveSession."""

    def __init__(self, target="", graph=None, config=None):
        self._graph = graph if graph is not None else ops.get_default_graph()
        if config is not None and not isinstance(config, config_pb2.ConfigProto):
            raise TypeError("config must be a tx.ConfigProto, but got %s" % type(config))
        self._config = config
        self._target = target.decode() if isinstance(target, bytes) else target
        self._session = _pywrap.Session(self._target,
                                        (config or config_pb2.ConfigProto()).SerializeToString())
        self._closed = False
        self._extend_lock = threading.Lock()
        self._num_extended = 0
        self._num_functions_extended = 0
        self._default_contexts = []
        self._one_shot_lock = threading.Lock()
        self._num_one_shot_done = 0  # one-shot iterator initializers run so far (tx.data)
        self._plans = {}  # run()'s resolved fetches and feeds (_RunPlan), see _cached_plan

    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self):
        return self._target

    def list_devices(self):
        """The session's devices (TF 1.x Session.list_devices): objects with name,
        device_type, memory_limit_bytes and incarnation."""
        out = []
        for raw in self._session.list_devices():
            attrs = device_attributes_pb2.DeviceAttributes()
            attrs.ParseFromString(raw)
            out.append(_DeviceAttributes(attrs.name, attrs.device_type, attrs.memory_limit,
                                         attrs.incarnation))
        return out

    def close(self):
        """Releases the session; later run() calls raise RuntimeError."""
        if not self._closed:
            self._closed = True
            self._session.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # pylint: disable=broad-except
            pass

    def as_default(self):
        return _SessionDefault(self)

    def _extend_graph(self):
        if self._graph.version <= self._num_extended:
            return
        with self._extend_lock:
            op_list = self._graph.get_operations()
            if len(op_list) <= self._num_extended:
                return
            gd = graph_pb2.GraphDef()
            gd.versions.CopyFrom(self._graph.graph_def_versions)
            functions = list(self._graph._functions)  # pylint: disable=protected-access
            for f in functions[self._num_functions_extended:]:
                gd.library.function.add().CopyFrom(f)
            for op in op_list[self._num_extended:]:
                gd.node.add().CopyFrom(op._node_def)
            self._session.extend(gd.SerializeToString())
            self._num_extended = len(op_list)
            self._num_functions_extended = len(functions)

    def _run_one_shot_initializers(self):
        """Runs the MakeIterator ops of one-shot iterators (tx.data.make_one_shot_iterator)
        created since the last run, once per session."""
        inits = self._graph.get_collection(_ONE_SHOT_INITIALIZERS)
        if len(inits) <= self._num_one_shot_done:
            return
        with self._one_shot_lock:
            pending = inits[self._num_one_shot_done:]
            if not pending:
                return
            try:
                self._session.run([], [], [op.name for op in pending], None, False)
            except errors.OpError as e:
                self._attach_node(e)
                raise
            self._num_one_shot_done += len(pending)

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the ops and evaluates the tensors in `fetches` (a Tensor, Operation, name, or a
        nested list / tuple / namedtuple / dict of them) and returns their values in the same
        structure: numpy arrays (numpy scalars for 0-d), None for Operations.

        The resolved fetches and feed keys of a run are cached (keyed by the fetch object and the
        feed keys, when both are hashable), so a loop that runs the same fetches with the same
        feed keys resolves names once, as make_callable does."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        feed_dict = feed_dict or {}
        plan = self._cached_plan(fetches, feed_dict)
        feeds = [(name, *_feed_value(tensor, value))
                 for (tensor, name), value in zip(plan.feeds, feed_dict.values())]
        return self._run_plan(plan, feeds, options, run_metadata)

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """A function that runs `fetches` with the tensors of `feed_list` fed from its positional
        arguments, in order, and returns what run() would (TF 1.x Session.make_callable): fetches
        and feeds are resolved and checked once, here (the same errors as run()). With
        accept_options=True it also takes the keyword arguments `options` (RunOptions) and
        `run_metadata` (RunMetadata). Calling it with the wrong number of values is a TypeError;
        a closed session's callable raises RuntimeError."""
        feed_list = list(feed_list or [])
        plan = _RunPlan(self, fetches, feed_list)

        def _callable(*feed_values, **kwargs):
            if self._closed:
                raise RuntimeError("Attempted to use a closed Session.")
            allowed = ("options", "run_metadata") if accept_options else ()
            unknown = [k for k in kwargs if k not in allowed]
            if unknown:
                raise TypeError("make_callable's function got an unexpected keyword argument %r"
                                % unknown[0])
            if len(feed_values) != len(plan.feeds):
                raise TypeError("make_callable's function takes %d feed value(s) (feed_list), "
                                "got %d" % (len(plan.feeds), len(feed_values)))
            feeds = [(name, *_feed_value(tensor, value))
                     for (tensor, name), value in zip(plan.feeds, feed_values)]
            return self._run_plan(plan, feeds, kwargs.get("options"),
                                  kwargs.get("run_metadata"))

        return _callable

    def _cached_plan(self, fetches, feed_dict):
        try:
            key = (type(fetches), fetches, tuple(feed_dict))
            plan = self._plans.get(key)
        except TypeError:  # unhashable fetches (a list or dict of them) or feed keys
            return _RunPlan(self, fetches, list(feed_dict))
        if plan is None:
            plan = _RunPlan(self, fetches, list(feed_dict))
            if len(self._plans) >= _MAX_CACHED_PLANS:
                self._plans.clear()
            self._plans[key] = plan
        return plan

    def _run_plan(self, plan, feeds, options, run_metadata):
        self._extend_graph()
        self._run_one_shot_initializers()
        options_bytes = None if options is None else options.SerializeToString()
        try:
            arrays, metadata = self._session.run(feeds, plan.fetch_names, plan.targets,
                                                 options_bytes, run_metadata is not None)
        except errors.OpError as e:
            self._attach_node(e)
            raise
        if run_metadata is not None and metadata is not None:
            run_metadata.ParseFromString(metadata)
        return plan.mapper.build([None if s is None else _fetch_value(arrays[s])
                                  for s in plan.slots])

    def _feed_tensor(self, key):
        if isinstance(key, ops.Tensor):
            if key.graph is not self._graph:
                raise ValueError("Cannot feed %s: it is not an element of this session's graph."
                                 % key.name)
            return key
        if isinstance(key, bytes):
            key = key.decode("utf-8")
        if isinstance(key, str):
            name = key if ":" in key else key + ":0"
            try:
                return self._graph.as_graph_element(name, allow_tensor=True,
                                                    allow_operation=False)
            except KeyError as e:
                raise errors._as_value_error(errors.NotFoundError(
                    None, None, "Cannot interpret feed_dict key %r as Tensor: %s"
                    % (key, e.args[0] if e.args else e)))
        raise TypeError("Cannot interpret feed_dict key as Tensor: %r" % (key,))

    def _attach_node(self, e):
        m = _NODE_IN_MESSAGE.search(e.message or "")
        if m is None or e.op is not None:
            return
        try:
            op = self._graph.get_operation_by_name(m.group(1))
        except (KeyError, ValueError, TypeError):
            return
        e._op = op
        e._node_def = op.node_def

    def __enter__(self):
        ctx = self.as_default()
        ctx.__enter__()
        self._default_contexts.append(ctx)
        return self

    def __exit__(self, exc_type, exc_value, tb):
        ctx = self._default_contexts.pop()
        ctx.__exit__(exc_type, exc_value, tb)
        self.close()


def _fetch_value(arr):
    if isinstance(arr, np.ndarray) and arr.ndim == 0:
        return arr[()]
    return arr


class _SessionDefault:
    """Makes a session (and its graph) the default in the current thread."""

    def __init__(self, session):
        self._session = session
        self._graph_ctx = None

    def __enter__(self):
        _default_session_stack.stack.append(self._session)
        self._graph_ctx = self._session.graph.as_default()
        self._graph_ctx.__enter__()
        return self._session

    def __exit__(self, exc_type, exc_value, tb):
        self._graph_ctx.__exit__(exc_type, exc_value, tb)
        stack = _default_session_stack.stack
        if stack and stack[-1] is self._session:
            stack.pop()
        return False


class Session(BaseSession):
    """A session running a tx.Graph: tx.Session(target='', graph=None, config=None)."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)


class InteractiveSession(BaseSession):
    """A session that makes itself the default session (and its graph the default graph) when
    created, for interactive use of tensor.eval() and op.run()."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._default_ctx = self.as_default()
        self._default_ctx.__enter__()

    def close(self):
        super().close()
        ctx, self._default_ctx = getattr(self, "_default_ctx", None), None
        if ctx is not None:
            try:
                ctx.__exit__(None, None, None)
            except AssertionError:
                pass
