"""tx.keras.initializers: TF 1.x's tf.keras.initializers names over tensorflux.ops.init_ops.
Keras' defaults differ from tf.initializers' for the plain random ones: RandomNormal and
TruncatedNormal have stddev 0.05, RandomUniform is uniform in [-0.05, 0.05)."""

from tensorflux.framework import dtypes
from tensorflux.ops import init_ops
from tensorflux.ops.init_ops import Constant  # noqa: F401
from tensorflux.ops.init_ops import GlorotNormal  # noqa: F401
from tensorflux.ops.init_ops import GlorotUniform  # noqa: F401
from tensorflux.ops.init_ops import Identity  # noqa: F401
from tensorflux.ops.init_ops import Initializer  # noqa: F401
from tensorflux.ops.init_ops import Ones  # noqa: F401
from tensorflux.ops.init_ops import Orthogonal  # noqa: F401
from tensorflux.ops.init_ops import VarianceScaling  # noqa: F401
from tensorflux.ops.init_ops import Zeros  # noqa: F401
from tensorflux.ops.init_ops import he_normal  # noqa: F401
from tensorflux.ops.init_ops import he_uniform  # noqa: F401
from tensorflux.ops.init_ops import lecun_normal  # noqa: F401
from tensorflux.ops.init_ops import lecun_uniform  # noqa: F401


class RandomNormal(init_ops.RandomNormal):
    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype=dtypes.float32):
        super().__init__(mean, stddev, seed, dtype)


class RandomUniform(init_ops.RandomUniform):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None, dtype=dtypes.float32):
        super().__init__(minval, maxval, seed, dtype)


class TruncatedNormal(init_ops.TruncatedNormal):
    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype=dtypes.float32):
        super().__init__(mean, stddev, seed, dtype)


zeros = Zeros
ones = Ones
constant = Constant
random_normal = RandomNormal
random_uniform = RandomUniform
truncated_normal = TruncatedNormal
orthogonal = Orthogonal
identity = Identity
glorot_normal = GlorotNormal
glorot_uniform = GlorotUniform

_BY_NAME = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
    "random_uniform": RandomUniform, "truncated_normal": TruncatedNormal,
    "orthogonal": Orthogonal, "identity": Identity, "glorot_normal": GlorotNormal,
    "glorot_uniform": GlorotUniform,
    "variance_scaling": VarianceScaling, "he_normal": he_normal, "he_uniform": he_uniform,
    "lecun_normal": lecun_normal, "lecun_uniform": lecun_uniform,
}


def get(identifier):
    """An initializer from a name ("glorot_uniform", "GlorotUniform", ...), a callable (returned
    as is) or None (None). ValueError for an unknown name."""
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, str):
        key = "".join("_" + c.lower() if c.isupper() else c for c in identifier).lstrip("_")
        if key in _BY_NAME:
            return _BY_NAME[key]()
        raise ValueError("Unknown initializer: %s" % identifier)
    raise ValueError("Could not interpret initializer identifier: %r" % (identifier,))
