"""TensorFlux: a dataflow-graph engine with TensorFlow 1.x's graph API.

    import tensorflux as tx
    x = tx.placeholder(tx.float32, [None, 3], name="x")
    y = tx.matmul(x, tx.ones([3, 1])) + 2.0
    with tx.Session() as sess:
        print(sess.run(y, feed_dict={x: [[1, 2, 3]]}))

Names, arguments and defaults follow tf.compat.v1, so TF 1.x graph code ports by changing the
import. Graphs run in the C++ engine (_pywrap_tensorflux).
"""

__version__ = "0.1.0"

# pylint: disable=g-import-not-at-top,wrong-import-position
from tensorflux.framework import _pywrap  # noqa: F401  (fails early, clearly, without the build)

from tensorflux import errors
from tensorflux import dtypes
from tensorflux.framework.dtypes import DType, as_dtype
from tensorflux.framework.dtypes import (
    bfloat16, bool, complex64, complex128, double, float16, float32, float64, half, int8, int16,
    int32, int64, qint8, qint16, qint32, quint8, quint16, resource, string, uint8, uint16, uint32,
    uint64, variant)  # pylint: disable=redefined-builtin
from tensorflux.framework.tensor_shape import Dimension, TensorShape
from tensorflux.framework.ops import (
    GraphKeys, Operation, Tensor, add_to_collection, colocate_with, control_dependencies,
    convert_to_tensor, device,
    get_collection, get_collection_ref, get_default_graph, name_scope,
    register_tensor_conversion_function, reset_default_graph)
from tensorflux.framework.device import DeviceSpec
from tensorflux.framework.graph import GRAPH_DEF_VERSION, Graph
from tensorflux.framework.tensor_util import MakeNdarray, make_ndarray, make_tensor_proto
from tensorflux.framework.constant_op import constant
from tensorflux.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux.framework.importer import import_graph_def
from tensorflux.ops.array_ops import (
    fill, identity, identity_n, ones, ones_like, placeholder, placeholder_with_default, rank,
    reshape, shape, size, zeros, zeros_like)
from tensorflux.ops.array_ops2 import (
    broadcast_to, concat, dynamic_stitch, expand_dims, gather, gather_nd, invert_permutation,
    newaxis, one_hot, pad, range, scatter_nd, shape_n, slice, split, squeeze, stack,
    stop_gradient, strided_slice, tile, transpose, unsorted_segment_sum, unstack)  # noqa: A004
from tensorflux.ops.math_ops import (
    add, cast, divide, exp, log, matmul, maximum, minimum, multiply, negative, realdiv, sqrt,
    square, subtract, to_double, to_float, to_int32, to_int64, truediv)
from tensorflux.ops.math_ops2 import (
    abs, add_n, clip_by_value, cos, equal, erf, floor_div, floordiv, floormod, greater,
    greater_equal, less, less_equal, log1p, logical_and, logical_not, logical_or, logical_xor, mod,
    not_equal, pow, reciprocal, rsqrt, sigmoid, sign, sin, squared_difference, tanh, where,
    where_v2)  # noqa: A004
from tensorflux.ops.clip_ops import clip_by_global_norm, clip_by_norm, global_norm
from tensorflux.ops.control_flow_ops import group, no_op
from tensorflux.ops.data_flow_ops import ConditionalAccumulator, FIFOQueue
from tensorflux.ops.reduction_ops import (
    argmax, argmin, reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod,
    reduce_sum)
from tensorflux.ops.gradients import AggregationMethod, UnconnectedGradients, gradients
from tensorflux.ops.numerics import check_numerics
from tensorflux.ops.script_ops import py_func
from tensorflux.ops.variables import (
    Variable, all_variables, global_variables, global_variables_initializer,
    initialize_all_variables, is_variable_initialized, local_variables,
    local_variables_initializer, trainable_variables, variables_initializer)
from tensorflux.ops.random_ops import (
    get_seed, random_normal, random_shuffle, random_uniform, set_random_seed, truncated_normal)
from tensorflux.ops.init_ops import (
    constant_initializer, glorot_normal_initializer, glorot_uniform_initializer,
    ones_initializer, orthogonal_initializer, random_normal_initializer,
    random_uniform_initializer, truncated_normal_initializer, variance_scaling_initializer,
    zeros_initializer)
from tensorflux.ops.variable_scope import (
    AUTO_REUSE, VariableScope, get_variable, get_variable_scope, no_regularizer, variable_scope)
from tensorflux.client.session import (
    InteractiveSession, Session, get_default_session)
from tensorflux import contrib
from tensorflux import data
from tensorflux import debugging
from tensorflux import image
from tensorflux import initializers
from tensorflux import io
from tensorflux import keras
from tensorflux import layers
from tensorflux import losses
from tensorflux import math
from tensorflux import linalg
from tensorflux import nn
from tensorflux import random
from tensorflux import raw_ops
from tensorflux import saved_model
from tensorflux.framework import graph_util
from tensorflux import summary
from tensorflux import test
from tensorflux.client import timeline
from tensorflux import train

from tensorflux.attr_value_pb2 import AttrValue, NameAttrList
from tensorflux.event_pb2 import Event, SessionLog
from tensorflux.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorflux.config_pb2 import (
    ConfigProto, GraphOptions, RunMetadata, RunOptions)
from tensorflux.graph_pb2 import GraphDef
from tensorflux.node_def_pb2 import NodeDef
from tensorflux.saved_model_pb2 import MetaGraphDef, SignatureDef, TensorInfo
from tensorflux.tensor_pb2 import TensorProto
from tensorflux.tensor_shape_pb2 import TensorShapeProto

OptimizerOptions = GraphOptions.OptimizerOptions
from tensorflux.framework.tensor_util import constant_value as get_static_value

del _pywrap
