"""tx.image: TF 1.x's tf.image pieces for the input pipeline, all as graph ops.

Decoding (DecodePng / DecodeJpeg kernels), bilinear resizing (ResizeBilinear: TF's
align_corners / half_pixel_centers sampling), uint8 -> float scaling, per-channel normalization,
central / random crops and random horizontal flips. Random transforms take a seed (with the
graph seed, as tx.random_uniform) and are deterministic for a fixed seed pair. Images are
[height, width, channels] (the crops and flips) or [batch, height, width, channels] (resize).
"""

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework.op_def_library import apply_op
from tensorflux.ops import array_ops
from tensorflux.ops import array_ops2
from tensorflux.ops import math_ops
from tensorflux.ops import math_ops2
from tensorflux.ops import random_ops


def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None):
    """PNG bytes (a scalar string) -> uint8 [height, width, channels]."""
    return apply_op("DecodePng", contents=contents, channels=channels, dtype=dtype,
                    name=name or "DecodePng")


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True,
                try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """JPEG bytes (a scalar string) -> uint8 [height, width, channels]."""
    return apply_op("DecodeJpeg", contents=contents, channels=channels, ratio=ratio,
                    fancy_upscaling=fancy_upscaling, try_recover_truncated=try_recover_truncated,
                    acceptable_fraction=float(acceptable_fraction), dct_method=dct_method,
                    name=name or "DecodeJpeg")


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """[batch, h, w, c] images of a real type -> float32 [batch, new_h, new_w, c]."""
    size = ops.convert_to_tensor(size, dtype=dtypes.int32)
    return apply_op("ResizeBilinear", images=images, size=size, align_corners=align_corners,
                    half_pixel_centers=half_pixel_centers, name=name or "ResizeBilinear")


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Integer images scale to [0, 1] floats (x / max of the integer type); floats are cast;
    [0, 1] floats scale to an integer type as TF does (x * (max + 0.5), truncated; with
    saturate, clipped to [0, 1] first). Integer -> other integer types is not supported yet."""
    image = ops.convert_to_tensor(image)
    dtype = dtypes.as_dtype(dtype)
    src = image.dtype.base_dtype
    with ops.name_scope(name, "convert_image", [image]):
        if not dtype.is_floating:
            if src == dtype:
                return array_ops.identity(image)
            if not src.is_floating:
                raise NotImplementedError("convert_image_dtype from %s to %s is not supported"
                                          % (src.name, dtype.name))
            if saturate:
                image = math_ops2.clip_by_value(image, 0.0, 1.0)
            scale = np.iinfo(dtype.as_numpy_dtype).max + 0.5
            return math_ops.cast(math_ops.multiply(image, scale), dtype)
        if src.is_floating:
            return math_ops.cast(image, dtype)
        scale = 1.0 / np.iinfo(src.as_numpy_dtype).max
        return math_ops.multiply(math_ops.cast(image, dtype), scale)


def normalize_per_channel(image, mean, stddev, name=None):
    """(image - mean) / stddev with one mean and stddev per channel (the last axis); integer
    images are first scaled to [0, 1] floats."""
    image = ops.convert_to_tensor(image)
    with ops.name_scope(name, "normalize_per_channel", [image]):
        if not image.dtype.is_floating:
            image = convert_image_dtype(image, dtypes.float32)
        dt = image.dtype.base_dtype
        mean = ops.convert_to_tensor(np.asarray(mean, dt.as_numpy_dtype))
        stddev = ops.convert_to_tensor(np.asarray(stddev, dt.as_numpy_dtype))
        return math_ops.divide(math_ops.subtract(image, mean), stddev)


def _static_hwc(image, what):
    dims = image.shape.as_list() if image.shape.ndims is not None else None
    if dims is None or len(dims) != 3 or None in dims:
        raise ValueError("%s needs a [height, width, channels] image of known shape, got %s"
                         % (what, image.shape))
    return dims


def central_crop(image, central_fraction):
    """The centred window of central_fraction of the height and width (tf.image.central_crop:
    offset int((size - size * fraction) / 2))."""
    image = ops.convert_to_tensor(image)
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    h, w, c = _static_hwc(image, "central_crop")
    if central_fraction == 1.0:
        return image
    top, left = int((h - h * central_fraction) / 2), int((w - w * central_fraction) / 2)
    return array_ops2.slice(image, [top, left, 0], [h - 2 * top, w - 2 * left, c])


def random_crop(value, size, seed=None, name=None):
    """A uniformly placed window of `size` (one entry per dimension), as tf.image.random_crop:
    offset = RandomUniformInt % (shape - size + 1)."""
    value = ops.convert_to_tensor(value)
    with ops.name_scope(name, "random_crop", [value]):
        size = ops.convert_to_tensor(size, dtype=dtypes.int32)
        limit = math_ops.add(math_ops.subtract(array_ops.shape(value), size), 1)
        offset = math_ops2.mod(
            random_ops.random_uniform(array_ops.shape(size), maxval=np.iinfo(np.int32).max,
                                      dtype=dtypes.int32, seed=seed), limit)
        return array_ops2.slice(value, offset, size)


def flip_left_right(image):
    """Reverses the width axis of a [height, width, channels] image."""
    image = ops.convert_to_tensor(image)
    width = array_ops.shape(image)[1]
    return array_ops2.gather(image, array_ops2.range(width - 1, -1, -1), axis=1)


def random_flip_left_right(image, seed=None):
    """flip_left_right with probability 1/2 (a seeded RandomUniform draw per run)."""
    image = ops.convert_to_tensor(image)
    with ops.name_scope(None, "random_flip_left_right", [image]):
        mirror = math_ops2.less(random_ops.random_uniform([], seed=seed), 0.5)
        return math_ops2.where_v2(mirror, flip_left_right(image), image)
