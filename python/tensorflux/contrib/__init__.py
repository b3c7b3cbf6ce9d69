"""tx.contrib: the parts of TF 1.x's tf.contrib that TF 1.x model code commonly uses (layers'
regularizers, predictor)."""

from tensorflux.contrib import layers  # noqa: F401
from tensorflux.contrib import predictor  # noqa: F401
