"""tx.initializers: the initializers under TF 1.x's tf.initializers names (classes are in
tensorflux.ops.init_ops; tx.zeros_initializer etc. are the same objects at the top level)."""

from tensorflux.ops.init_ops import Constant as constant  # noqa: F401
from tensorflux.ops.init_ops import GlorotNormal as glorot_normal  # noqa: F401
from tensorflux.ops.init_ops import GlorotNormal as xavier_normal  # noqa: F401
from tensorflux.ops.init_ops import GlorotUniform as glorot_uniform  # noqa: F401
from tensorflux.ops.init_ops import GlorotUniform as xavier_uniform  # noqa: F401
from tensorflux.ops.init_ops import Identity as identity  # noqa: F401
from tensorflux.ops.init_ops import Initializer  # noqa: F401
from tensorflux.ops.init_ops import Ones as ones  # noqa: F401
from tensorflux.ops.init_ops import Orthogonal as orthogonal  # noqa: F401
from tensorflux.ops.init_ops import RandomNormal as random_normal  # noqa: F401
from tensorflux.ops.init_ops import RandomUniform as random_uniform  # noqa: F401
from tensorflux.ops.init_ops import TruncatedNormal as truncated_normal  # noqa: F401
from tensorflux.ops.init_ops import VarianceScaling as variance_scaling  # noqa: F401
from tensorflux.ops.init_ops import Zeros as zeros  # noqa: F401
from tensorflux.ops.init_ops import he_normal  # noqa: F401
from tensorflux.ops.init_ops import he_uniform  # noqa: F401
from tensorflux.ops.init_ops import lecun_normal  # noqa: F401
from tensorflux.ops.init_ops import lecun_uniform  # noqa: F401
