"""tx.layers Conv2D / conv2d and the 2-D pooling layers (TF 1.x tf.layers names, arguments and
defaults).

conv2d: inputs [N, H, W, C] (channels_last; channels_first = NCHW) -> activation(Conv2D(inputs,
kernel) + bias), kernel [kh, kw, C, filters] ("kernel", default initializer: tx.get_variable's,
Glorot uniform with fans kh*kw*C and kh*kw*filters), bias [filters] ("bias", zeros). padding
'valid' or 'same' (any case), strides and dilation_rate an int or 2 ints (TF forbids strides > 1
together with dilation > 1, and so does this layer).
max_pooling2d / average_pooling2d: pool_size and strides an int or 2 ints, padding 'valid'
(default) or 'same'; channels_first inputs are transposed to NHWC around the (NHWC-only) pooling
kernels.
"""

from tensorflux.framework import ops
from tensorflux.layers import base
from tensorflux.ops import array_ops2
from tensorflux.ops import conv_ops
from tensorflux.ops import pool_bn_ops


class Conv2D(base.Layer):
    """2-D convolution layer (Conv2D op) with optional bias and activation."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer=None, bias_initializer=None,
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        self.filters = int(filters)
        if self.filters <= 0:
            raise ValueError("Conv2D: filters must be positive, got %r" % (filters,))
        self.kernel_size = base._tuple(kernel_size, 2, "kernel_size")  # pylint: disable=protected-access
        self.strides = base._tuple(strides, 2, "strides")  # pylint: disable=protected-access
        self.dilation_rate = base._tuple(dilation_rate, 2, "dilation_rate")  # pylint: disable=protected-access
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("strides > 1 is not supported together with dilation_rate > 1 "
                             "(got strides=%r, dilation_rate=%r)"
                             % (self.strides, self.dilation_rate))
        self.padding = base._padding(padding)  # pylint: disable=protected-access
        self.data_format = base._data_format(data_format)  # pylint: disable=protected-access
        self._init_kernel_bias(activation, use_bias, kernel_initializer, bias_initializer,
                               kernel_regularizer, bias_regularizer, activity_regularizer,
                               kernel_constraint, bias_constraint)

    def build(self, input_shape):
        if input_shape.ndims is not None and input_shape.ndims != 4:
            raise ValueError("Input 0 of layer %s is incompatible with the layer: expected "
                             "ndim=4, found ndim=%d. Full shape received: %s"
                             % (self._base_name, input_shape.ndims, input_shape))
        channel_axis = 3 if self.data_format == "NHWC" else 1
        channels = input_shape.dims[channel_axis].value if input_shape.ndims else None
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found "
                             "`None`.")
        self._build_kernel_bias(list(self.kernel_size) + [channels, self.filters])

    def call(self, inputs):  # pylint: disable=arguments-differ
        outputs = conv_ops.conv2d(inputs, self.kernel,
                                  strides=base._window(self.strides, self.data_format),  # pylint: disable=protected-access
                                  padding=self.padding, data_format=self.data_format,
                                  dilations=base._window(self.dilation_rate, self.data_format),  # pylint: disable=protected-access
                                  name="Conv2D")
        return self._bias_activation(outputs, self.data_format)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional form of Conv2D (tf.layers.conv2d). bias_initializer None means zeros."""
    layer = Conv2D(filters, kernel_size, strides=strides, padding=padding,
                   data_format=data_format, dilation_rate=dilation_rate, activation=activation,
                   use_bias=use_bias, kernel_initializer=kernel_initializer,
                   bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                   bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                   kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                   trainable=trainable, name=name, _reuse=reuse)
    return layer.apply(inputs)


class _Pooling2D(base.Layer):
    """Shared by MaxPooling2D and AveragePooling2D: a window op without variables."""

    _pool = None  # pool_bn_ops function

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = base._tuple(pool_size, 2, "pool_size")  # pylint: disable=protected-access
        self.strides = base._tuple(strides, 2, "strides")  # pylint: disable=protected-access
        self.padding = base._padding(padding)  # pylint: disable=protected-access
        self.data_format = base._data_format(data_format)  # pylint: disable=protected-access

    def __call__(self, inputs):  # pylint: disable=arguments-differ
        inputs = ops.convert_to_tensor(inputs, name="inputs")
        if inputs.shape.ndims is not None and inputs.shape.ndims != 4:
            raise ValueError("Input 0 of layer %s is incompatible with the layer: expected "
                             "ndim=4, found ndim=%d" % (self._base_name, inputs.shape.ndims))
        ksize = base._window(self.pool_size, "NHWC")  # pylint: disable=protected-access
        strides = base._window(self.strides, "NHWC")  # pylint: disable=protected-access
        with ops.name_scope(self._name, self._base_name, [inputs]):
            # The pooling kernels are NHWC only (as TF's CPU ones): channels_first inputs are
            # transposed around them.
            nchw = self.data_format == "NCHW"
            x = array_ops2.transpose(inputs, [0, 2, 3, 1]) if nchw else inputs
            y = type(self)._pool(x, ksize, strides, self.padding)  # pylint: disable=not-callable
            return array_ops2.transpose(y, [0, 3, 1, 2]) if nchw else y

    apply = __call__

    def call(self, inputs):  # pylint: disable=arguments-differ
        return self(inputs)


class MaxPooling2D(_Pooling2D):
    """Max over pool_size windows (MaxPool)."""
    _pool = staticmethod(pool_bn_ops.max_pool2d)


class AveragePooling2D(_Pooling2D):
    """Mean over pool_size windows (AvgPool; with 'same' padding, over the valid elements)."""
    _pool = staticmethod(pool_bn_ops.avg_pool2d)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """Functional form of MaxPooling2D (tf.layers.max_pooling2d)."""
    return MaxPooling2D(pool_size, strides, padding=padding, data_format=data_format,
                        name=name)(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                      name=None):
    """Functional form of AveragePooling2D (tf.layers.average_pooling2d)."""
    return AveragePooling2D(pool_size, strides, padding=padding, data_format=data_format,
                            name=name)(inputs)
