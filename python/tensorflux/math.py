"""tx.math: the math functions under their tf.math names."""

from tensorflux.ops.math_ops import add  # noqa: F401
from tensorflux.ops.math_ops import divide  # noqa: F401
from tensorflux.ops.math_ops import exp  # noqa: F401
from tensorflux.ops.math_ops import log  # noqa: F401
from tensorflux.ops.math_ops import maximum  # noqa: F401
from tensorflux.ops.math_ops import minimum  # noqa: F401
from tensorflux.ops.math_ops import multiply  # noqa: F401
from tensorflux.ops.math_ops import negative  # noqa: F401
from tensorflux.ops.math_ops import realdiv  # noqa: F401
from tensorflux.ops.math_ops import sqrt  # noqa: F401
from tensorflux.ops.math_ops import square  # noqa: F401
from tensorflux.ops.math_ops import subtract  # noqa: F401
from tensorflux.ops.math_ops import truediv  # noqa: F401
from tensorflux.ops.array_ops2 import unsorted_segment_sum  # noqa: F401
from tensorflux.ops.reduction_ops import argmax  # noqa: F401
from tensorflux.ops.reduction_ops import argmin  # noqa: F401
from tensorflux.ops.reduction_ops import reduce_all  # noqa: F401
from tensorflux.ops.reduction_ops import reduce_any  # noqa: F401
from tensorflux.ops.reduction_ops import reduce_max  # noqa: F401
from tensorflux.ops.reduction_ops import reduce_mean  # noqa: F401
from tensorflux.ops.reduction_ops import reduce_min  # noqa: F401
from tensorflux.ops.reduction_ops import reduce_prod  # noqa: F401
from tensorflux.ops.reduction_ops import reduce_sum  # noqa: F401
