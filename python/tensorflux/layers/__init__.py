"""tx.layers: TF 1.x's tf.layers (tf.compat.v1.layers) functional forms and classes:
dense, conv2d, max_pooling2d, average_pooling2d, flatten, dropout, batch_normalization.

Variables are made with tx.get_variable in a variable scope named after the layer ("dense",
"dense_1", ...; "kernel" / "bias", "gamma" / "beta" / "moving_mean" / "moving_variance");
kernel_regularizer / bias_regularizer penalties go to tx.GraphKeys.REGULARIZATION_LOSSES
(tx.losses.get_regularization_loss() sums them); batch normalization's moving-statistics
updates go to tx.GraphKeys.UPDATE_OPS, which the train op must depend on (as in TF 1.x).
"""

from tensorflux.layers.base import Layer  # noqa: F401
from tensorflux.layers.convolutional import AveragePooling2D  # noqa: F401
from tensorflux.layers.convolutional import Conv2D  # noqa: F401
from tensorflux.layers.convolutional import MaxPooling2D  # noqa: F401
from tensorflux.layers.convolutional import average_pooling2d  # noqa: F401
from tensorflux.layers.convolutional import conv2d  # noqa: F401
from tensorflux.layers.convolutional import max_pooling2d  # noqa: F401
from tensorflux.layers.core import Dense  # noqa: F401
from tensorflux.layers.core import Dropout  # noqa: F401
from tensorflux.layers.core import Flatten  # noqa: F401
from tensorflux.layers.core import dense  # noqa: F401
from tensorflux.layers.core import dropout  # noqa: F401
from tensorflux.layers.core import flatten  # noqa: F401
from tensorflux.layers.normalization import BatchNormalization  # noqa: F401
from tensorflux.layers.normalization import batch_normalization  # noqa: F401
