"""tx.contrib.layers: TF 1.x's weight regularizers (tf.contrib.layers.*_regularizer); see
tensorflux.ops.regularizers."""

from tensorflux.ops.regularizers import apply_regularization  # noqa: F401
from tensorflux.ops.regularizers import l1_l2_regularizer  # noqa: F401
from tensorflux.ops.regularizers import l1_regularizer  # noqa: F401
from tensorflux.ops.regularizers import l2_regularizer  # noqa: F401
from tensorflux.ops.regularizers import sum_regularizer  # noqa: F401
