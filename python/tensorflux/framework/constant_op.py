"""tx.constant and the default conversion of Python / numpy values to Const nodes."""

import numpy as np

from tensorflux import attr_value_pb2
from tensorflux.framework import ops
from tensorflux.framework import tensor_util


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A Const node holding `value` (TF 1.x tf.constant).

    dtype defaults to the value's type (Python float -> float32, int -> int32/int64). With
    `shape`, a scalar (or a shorter list, whose last value repeats) fills the whole shape.
    """
    g = ops.get_default_graph()
    proto = tensor_util.make_tensor_proto(value, dtype=dtype, shape=shape,
                                          verify_shape=verify_shape)
    attrs = {
        "value": attr_value_pb2.AttrValue(tensor=proto),
        "dtype": attr_value_pb2.AttrValue(type=proto.dtype),
    }
    op = g._create_op_internal("Const", [], attrs, name=name)
    return op.outputs[0]


def _constant_conversion(value, dtype=None, name=None, as_ref=False):
    return constant(value, dtype=dtype, name=name or "Const")


ops.register_tensor_conversion_function(
    (list, tuple, int, float, bool, str, bytes, np.ndarray, np.generic), _constant_conversion,
    priority=100)
