"""tx.train: training under TF 1.x's tf.train names (learning-rate schedules so far)."""

from tensorflux.training.learning_rate_decay import cosine_decay  # noqa: F401
from tensorflux.training.learning_rate_decay import exponential_decay  # noqa: F401
from tensorflux.training.learning_rate_decay import inverse_time_decay  # noqa: F401
from tensorflux.training.learning_rate_decay import linear_warmup  # noqa: F401
from tensorflux.training.learning_rate_decay import natural_exp_decay  # noqa: F401
from tensorflux.training.learning_rate_decay import piecewise_constant  # noqa: F401
from tensorflux.training.learning_rate_decay import polynomial_decay  # noqa: F401
