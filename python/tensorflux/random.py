"""tx.random: the random op functions under their tf.random (TF 1.x) names."""

from tensorflux.ops.random_ops import get_seed  # noqa: F401
from tensorflux.ops.random_ops import random_normal as normal  # noqa: F401
from tensorflux.ops.random_ops import random_shuffle as shuffle  # noqa: F401
from tensorflux.ops.random_ops import random_uniform as uniform  # noqa: F401
from tensorflux.ops.random_ops import set_random_seed  # noqa: F401
from tensorflux.ops.random_ops import truncated_normal  # noqa: F401
