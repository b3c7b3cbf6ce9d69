"""The global step (TF 1.x tf.train.get_global_step / create_global_step /
get_or_create_global_step): an int64 scalar resource variable named "global_step", kept in the
GraphKeys.GLOBAL_STEP collection (and GLOBAL_VARIABLES), not trainable, starting at 0. An
optimizer's apply_gradients(global_step=...) adds 1 to it after each update."""

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.ops import init_ops
from tensorflux.ops import variable_scope

GLOBAL_STEP_NAME = "global_step"


def get_global_step(graph=None):
    """The global step of `graph` (default: the default graph): the one variable of the
    GLOBAL_STEP collection, else a tensor named "global_step:0", else None (also None, as TF,
    when the collection holds several). TypeError when it is not an integer scalar."""
    graph = graph or ops.get_default_graph()
    found = graph.get_collection(ops.GraphKeys.GLOBAL_STEP)
    if len(found) == 1:
        step = found[0]
    elif not found:
        try:
            step = graph.get_tensor_by_name(GLOBAL_STEP_NAME + ":0")
        except KeyError:
            return None
    else:
        return None
    _assert_global_step(step)
    return step


def _assert_global_step(step):
    if not step.dtype.base_dtype.is_integer:
        raise TypeError("Existing \"global_step\" does not have integer type: %s"
                        % step.dtype.name)
    shape = step.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError("Existing \"global_step\" is not scalar: %s" % shape)


def create_global_step(graph=None):
    """Creates the global step variable of `graph` (ValueError "'global_step' already exists."
    when it has one). Made with tx.get_variable in the current variable scope, as TF does."""
    graph = graph or ops.get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError("'global_step' already exists.")
    with graph.as_default(), graph.name_scope(None):
        return variable_scope.get_variable(
            GLOBAL_STEP_NAME, shape=[], dtype=dtypes.int64,
            initializer=init_ops.zeros_initializer(), trainable=False,
            collections=[ops.GraphKeys.GLOBAL_VARIABLES, ops.GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    """The global step of `graph`, created first if it has none."""
    graph = graph or ops.get_default_graph()
    step = get_global_step(graph)
    if step is None:
        step = create_global_step(graph)
    return step
