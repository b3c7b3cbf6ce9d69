"""tx.linalg: matrix functions under their tf.linalg names."""

from tensorflux.ops.math_ops import matmul  # noqa: F401
