"""tx.linalg: matrix functions under their tf.linalg names."""

from tensorflux.ops.linalg_ops import qr  # noqa: F401
from tensorflux.ops.math_ops import matmul  # noqa: F401
