"""tx.nn: neural-network functions under their tf.nn (TF 1.x) names."""

from tensorflux.ops.conv_ops import conv2d  # noqa: F401
from tensorflux.ops.conv_ops import conv2d_backprop_filter  # noqa: F401
from tensorflux.ops.conv_ops import conv2d_backprop_input  # noqa: F401
from tensorflux.ops.conv_ops import depthwise_conv2d  # noqa: F401
from tensorflux.ops.conv_ops import depthwise_conv2d_native  # noqa: F401
from tensorflux.ops.math_ops2 import elu  # noqa: F401
from tensorflux.ops.math_ops2 import leaky_relu  # noqa: F401
from tensorflux.ops.math_ops2 import relu  # noqa: F401
from tensorflux.ops.math_ops2 import relu6  # noqa: F401
from tensorflux.ops.math_ops2 import selu  # noqa: F401
from tensorflux.ops.math_ops2 import sigmoid  # noqa: F401
from tensorflux.ops.math_ops2 import softplus  # noqa: F401
from tensorflux.ops.math_ops2 import tanh  # noqa: F401
from tensorflux.ops.nn_impl import dropout  # noqa: F401
from tensorflux.ops.nn_ops import bias_add  # noqa: F401
from tensorflux.ops.nn_ops import l2_loss  # noqa: F401
from tensorflux.ops.nn_ops import log_softmax  # noqa: F401
from tensorflux.ops.nn_ops import sigmoid_cross_entropy_with_logits  # noqa: F401
from tensorflux.ops.nn_ops import softmax  # noqa: F401
from tensorflux.ops.nn_ops import softmax_cross_entropy_with_logits  # noqa: F401
from tensorflux.ops.nn_ops import softmax_cross_entropy_with_logits_v2  # noqa: F401
from tensorflux.ops.nn_ops import sparse_softmax_cross_entropy_with_logits  # noqa: F401
from tensorflux.ops.pool_bn_ops import avg_pool  # noqa: F401
# TF 1.x: tf.compat.v1.nn.avg_pool2d is avg_pool (value, ..., input=None).
from tensorflux.ops.pool_bn_ops import avg_pool as avg_pool2d  # noqa: F401
from tensorflux.ops.pool_bn_ops import fused_batch_norm  # noqa: F401
from tensorflux.ops.pool_bn_ops import max_pool  # noqa: F401
from tensorflux.ops.pool_bn_ops import max_pool2d  # noqa: F401
from tensorflux.ops.sync_batch_norm import batch_normalization  # noqa: F401
from tensorflux.ops.sync_batch_norm import moments  # noqa: F401
from tensorflux.ops.sync_batch_norm import sync_batch_normalization  # noqa: F401
from tensorflux.ops.sync_batch_norm import sync_moments  # noqa: F401
