"""tx.keras.regularizers: l1, l2, l1_l2 and L1L2 with keras' definitions (l2 without the 1/2
of TF1's l2_regularizer); see tensorflux.ops.regularizers."""

from tensorflux.ops.regularizers import L1L2  # noqa: F401
from tensorflux.ops.regularizers import Regularizer  # noqa: F401
from tensorflux.ops.regularizers import l1  # noqa: F401
from tensorflux.ops.regularizers import l1_l2  # noqa: F401
from tensorflux.ops.regularizers import l2  # noqa: F401
