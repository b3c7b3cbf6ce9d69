"""tx.keras: keras-style names TF 1.x code uses from tf.keras (regularizers)."""

from tensorflux.keras import regularizers  # noqa: F401
