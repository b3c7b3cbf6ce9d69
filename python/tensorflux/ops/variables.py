"""tx.Variable and the variable collections (tf.compat.v1.Variable with use_resource=True).

    v = tx.Variable(tx.zeros([3]), name="v")
    init = tx.global_variables_initializer()
    with tx.Session() as sess:
        sess.run(init)
        sess.run(v.assign_add([1., 2., 3.]))

Every tx.Variable is a resource variable (resource_variable_ops.ResourceVariable). Variables
join GLOBAL_VARIABLES ("variables") and, when trainable, TRAINABLE_VARIABLES
("trainable_variables"), unless `collections` says otherwise.
"""

from tensorflux.framework import ops
from tensorflux.ops import array_ops2  # noqa: F401  (installs Tensor.__getitem__)
from tensorflux.ops import control_flow_ops
from tensorflux.ops import math_ops  # noqa: F401  (installs the Tensor operators)
from tensorflux.ops import math_ops2  # noqa: F401
from tensorflux.ops import resource_variable_ops
from tensorflux.ops.resource_variable_ops import (
    GLOBAL_VARIABLES, LOCAL_VARIABLES, TRAINABLE_VARIABLES, ResourceVariable)

resource_variable_ops._install_operators()  # after math_ops/array_ops2 defined Tensor's
Variable = ResourceVariable
VariableV1 = ResourceVariable


def global_variables(scope=None):
    """The variables of the default graph's GLOBAL_VARIABLES collection (names matching the
    regular expression `scope` when given)."""
    return ops.get_collection(GLOBAL_VARIABLES, scope)


all_variables = global_variables


def trainable_variables(scope=None):
    return ops.get_collection(TRAINABLE_VARIABLES, scope)


def local_variables(scope=None):
    return ops.get_collection(LOCAL_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    """One op that runs the initializers of `var_list` (a NoOp when the list is empty)."""
    if var_list:
        return control_flow_ops.group(*[v.initializer for v in var_list], name=name)
    return control_flow_ops.no_op(name=name)


def global_variables_initializer():
    """Initializes every variable of GLOBAL_VARIABLES (the op is named "init")."""
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer


def local_variables_initializer():
    return variables_initializer(local_variables())


def is_variable_initialized(variable):
    return variable.is_initialized()
