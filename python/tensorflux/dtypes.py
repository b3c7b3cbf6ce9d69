"""tx.dtypes: element types."""

from tensorflux.framework.dtypes import *  # noqa: F401,F403
from tensorflux.framework.dtypes import DType, as_dtype  # noqa: F401
