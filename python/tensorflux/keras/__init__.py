"""tx.keras: keras-style names TF 1.x code uses from tf.keras (initializers, regularizers)."""

from tensorflux.keras import initializers  # noqa: F401
from tensorflux.keras import regularizers  # noqa: F401
