"""tx.train: training under TF 1.x's tf.train names: optimizers, the global step,
learning-rate schedules and the Saver."""

from tensorflux.training.learning_rate_decay import cosine_decay  # noqa: F401
from tensorflux.training.learning_rate_decay import cosine_decay_restarts  # noqa: F401
from tensorflux.training.learning_rate_decay import exponential_decay  # noqa: F401
from tensorflux.training.learning_rate_decay import inverse_time_decay  # noqa: F401
from tensorflux.training.learning_rate_decay import linear_warmup  # noqa: F401
from tensorflux.training.learning_rate_decay import natural_exp_decay  # noqa: F401
from tensorflux.training.learning_rate_decay import piecewise_constant  # noqa: F401
from tensorflux.training.learning_rate_decay import polynomial_decay  # noqa: F401
from tensorflux.training.optimizer import Optimizer  # noqa: F401
from tensorflux.training.optimizers import AdagradOptimizer  # noqa: F401
from tensorflux.training.optimizers import AdamOptimizer  # noqa: F401
from tensorflux.training.optimizers import AdamWOptimizer  # noqa: F401
from tensorflux.training.optimizers import GradientDescentOptimizer  # noqa: F401
from tensorflux.training.optimizers import MomentumOptimizer  # noqa: F401
from tensorflux.training.optimizers import RMSPropOptimizer  # noqa: F401
from tensorflux.training.training_util import create_global_step  # noqa: F401
from tensorflux.training.training_util import get_global_step  # noqa: F401
from tensorflux.training.training_util import get_or_create_global_step  # noqa: F401
from tensorflux.training.saver import Saver  # noqa: F401
from tensorflux.training.saver import get_checkpoint_state  # noqa: F401
from tensorflux.training.saver import latest_checkpoint  # noqa: F401
# tf.train.Example and its parts (TF's protos, byte-compatible).
from tensorflux.example_pb2 import Example, SequenceExample  # noqa: F401,E402
from tensorflux.feature_pb2 import (  # noqa: F401,E402
    BytesList, Feature, FeatureList, FeatureLists, Features, FloatList, Int64List)
