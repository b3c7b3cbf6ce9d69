"""2-D convolutions under their tf.nn names (TF 1.x arguments and defaults): conv2d,
conv2d_backprop_input, conv2d_backprop_filter, depthwise_conv2d, depthwise_conv2d_native.

Layouts: input [batch, height, width, channels] for data_format "NHWC" (the default) or
[batch, channels, height, width] for "NCHW"; conv2d filters [kh, kw, in_channels, out_channels]
(in_channels may divide the input's channels: a grouped convolution); depthwise filters
[kh, kw, in_channels, channel_multiplier], output channel c * channel_multiplier + m.
strides and dilations: an int, or a list of 1, 2 (height, width) or 4 (in data_format order)
ints. padding: "SAME", "VALID", or explicit pads [[0, 0], [top, bottom], [left, right], [0, 0]]
(in data_format order). Kernels: float32 (oneDNN) and float64. Invalid shapes or attrs raise
tx.errors.InvalidArgumentError (from shape inference when the shapes are known, else at run).
"""

import numbers

from tensorflux.framework import ops
from tensorflux.framework.op_def_library import apply_op


def _spatial_dims(data_format):
    return (1, 2) if data_format in (None, "NHWC") else (2, 3)


def _four(value, name, data_format, default=1):
    """An int or a list of 1, 2 or 4 ints as the 4-element list the ops take."""
    if value is None:
        value = default
    if isinstance(value, numbers.Integral):
        value = [int(value)]
    value = [int(v) for v in value]
    if len(value) == 4:
        return value
    if len(value) not in (1, 2):
        raise ValueError("%s must be an int or a list of 1, 2 or 4 ints, got %r" % (name, value))
    hw = value * 2 if len(value) == 1 else value
    out = [1, 1, 1, 1]
    h, w = _spatial_dims(data_format)
    out[h], out[w] = hw
    return out


def _padding_attrs(padding):
    """("SAME"|"VALID", []) or ("EXPLICIT", 8 ints) from a string or 4 [before, after] pairs."""
    if isinstance(padding, (bytes, str)):
        padding = padding.decode() if isinstance(padding, bytes) else padding
        return padding.upper(), []
    pairs = [list(p) for p in padding]
    if len(pairs) != 4 or any(len(p) != 2 for p in pairs):
        raise ValueError("explicit padding must be 4 [before, after] pairs, got %r" % (padding,))
    return "EXPLICIT", [int(v) for p in pairs for v in p]


def _conv_attrs(strides, padding, data_format, dilations):
    data_format = data_format or "NHWC"
    padding, explicit = _padding_attrs(padding)
    return dict(strides=_four(strides, "strides", data_format),
                dilations=_four(dilations, "dilations", data_format),
                padding=padding, explicit_paddings=explicit, data_format=data_format)


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002
           data_format="NHWC", dilations=[1, 1, 1, 1], name=None, filters=None):
    """Conv2D: output[b, i, j, o] = sum over di, dj, q of
    input[b, strides[1] * i + dilation * di - pad, ..., q] * filter[di, dj, q, o]."""
    if filter is None:
        filter = filters  # noqa: A001
    if filter is None or strides is None or padding is None:
        raise ValueError("conv2d needs filter(s), strides and padding")
    return apply_op("Conv2D", input=input, filter=filter, use_cudnn_on_gpu=use_cudnn_on_gpu,
                    name=name or "Conv2D", **_conv_attrs(strides, padding, data_format, dilations))


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None,  # noqa: A002
                          padding=None, use_cudnn_on_gpu=True, data_format="NHWC",
                          dilations=[1, 1, 1, 1], name=None, filters=None):
    """Conv2DBackpropInput: the gradient of conv2d with respect to its input (of shape
    input_sizes, an int32 vector of 4 or of the 2 spatial dims)."""
    if filter is None:
        filter = filters  # noqa: A001
    return apply_op("Conv2DBackpropInput", input_sizes=input_sizes, filter=filter,
                    out_backprop=out_backprop, use_cudnn_on_gpu=use_cudnn_on_gpu,
                    name=name or "Conv2DBackpropInput",
                    **_conv_attrs(strides, padding, data_format, dilations))


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           use_cudnn_on_gpu=True, data_format="NHWC", dilations=[1, 1, 1, 1],
                           name=None):
    """Conv2DBackpropFilter: the gradient of conv2d with respect to its filter (of shape
    filter_sizes, an int32 vector of 4)."""
    return apply_op("Conv2DBackpropFilter", input=input, filter_sizes=filter_sizes,
                    out_backprop=out_backprop, use_cudnn_on_gpu=use_cudnn_on_gpu,
                    name=name or "Conv2DBackpropFilter",
                    **_conv_attrs(strides, padding, data_format, dilations))


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002
                            dilations=[1, 1, 1, 1], name=None):
    """DepthwiseConv2dNative: each input channel c convolved with its own
    filter[:, :, c, m] for every m, giving output channel c * channel_multiplier + m."""
    return apply_op("DepthwiseConv2dNative", input=input, filter=filter,
                    name=name or "DepthwiseConv2dNative",
                    **_conv_attrs(strides, padding, data_format, dilations))


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None,  # noqa: A002
                     data_format=None, dilations=None):
    """tf.nn.depthwise_conv2d: DepthwiseConv2dNative with the dilation given as `rate` (or
    `dilations`), [rate_height, rate_width]. As in TF, a rate above 1 needs strides of 1."""
    if rate is None:
        rate = dilations
    data_format = data_format or "NHWC"
    dil = _four(rate, "rate", data_format)
    st = _four(strides, "strides", data_format)
    h, w = _spatial_dims(data_format)
    if max(dil[h], dil[w]) > 1 and max(st[h], st[w]) > 1:
        raise ValueError("strides > 1 not supported in conjunction with rate > 1 "
                         "(strides %r, rate %r)" % (strides, rate))
    with ops.name_scope(name, "depthwise", [input, filter]) as scope:
        return depthwise_conv2d_native(input, filter, st, padding, data_format=data_format,
                                       dilations=dil, name=scope)
