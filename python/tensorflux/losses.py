"""tx.losses: TF 1.x's tf.compat.v1.losses (see tensorflux.ops.losses)."""

from tensorflux.ops.losses import Reduction  # noqa: F401
from tensorflux.ops.losses import absolute_difference  # noqa: F401
from tensorflux.ops.losses import add_loss  # noqa: F401
from tensorflux.ops.losses import compute_weighted_loss  # noqa: F401
from tensorflux.ops.losses import get_losses  # noqa: F401
from tensorflux.ops.losses import get_regularization_loss  # noqa: F401
from tensorflux.ops.losses import get_regularization_losses  # noqa: F401
from tensorflux.ops.losses import get_total_loss  # noqa: F401
from tensorflux.ops.losses import huber_loss  # noqa: F401
from tensorflux.ops.losses import log_loss  # noqa: F401
from tensorflux.ops.losses import mean_squared_error  # noqa: F401
from tensorflux.ops.losses import sigmoid_cross_entropy  # noqa: F401
from tensorflux.ops.losses import softmax_cross_entropy  # noqa: F401
from tensorflux.ops.losses import sparse_softmax_cross_entropy  # noqa: F401
