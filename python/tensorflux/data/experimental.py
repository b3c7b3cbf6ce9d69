"""tx.data.experimental (TF 1.x's tf.data.experimental)."""

from tensorflux.data.dataset_ops import AUTOTUNE  # noqa: F401
from tensorflux.data.readers import CsvDataset, IdxDataset  # noqa: F401
from tensorflux.data.options import (  # noqa: F401
    MapVectorizationOptions, OptimizationOptions, ThreadingOptions)


def ignore_errors(log_warning=False):
    """A transformation for Dataset.apply: the dataset's elements, those whose production raised
    an error dropped (TF's tf.data.experimental.ignore_errors).

    A file source moves past its error: TFRecordDataset and TextLineDataset skip the rest of the
    file that failed (a corrupt or truncated record, a missing file) and go on with the next
    file, as TensorFlow does. Without it such an iterator repeats its DataLossError on every
    later get_next. log_warning=True writes each dropped error to stderr."""
    def _apply_fn(dataset):
        return dataset._ignore_errors(log_warning)  # pylint: disable=protected-access
    return _apply_fn
