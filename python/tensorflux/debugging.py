"""tx.debugging (tf.debugging's NaN/Inf guard)."""

from tensorflux.ops.numerics import check_numerics  # noqa: F401
