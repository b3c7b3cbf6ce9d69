"""tx.saved_model: TF 1.x SavedModel loading (tx.saved_model.loader.load) and its constants."""

from tensorflux.saved_model import loader  # noqa: F401
from tensorflux.saved_model import signature_constants  # noqa: F401
from tensorflux.saved_model import tag_constants  # noqa: F401
from tensorflux.saved_model.loader import load  # noqa: F401
from tensorflux.saved_model.loader import maybe_saved_model_directory  # noqa: F401
