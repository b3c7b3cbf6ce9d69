"""tx.data.experimental (TF 1.x's tf.data.experimental)."""

from tensorflux.data.dataset_ops import AUTOTUNE  # noqa: F401
from tensorflux.data.readers import CsvDataset, IdxDataset  # noqa: F401
from tensorflux.data.options import (  # noqa: F401
    MapVectorizationOptions, OptimizationOptions, ThreadingOptions)
