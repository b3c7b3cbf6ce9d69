"""tx.image against numpy: PNG decoding of a file written here with zlib, bilinear resizing vs a
float64 numpy reference in each sampling mode, dtype scaling, per-channel normalization, central
and random crops, flips (seeded, deterministic)."""

import struct
import zlib

import numpy as np
import pytest

import tensorflux as tx


def _png(pixels):
    """An 8-bit RGB PNG of a [h, w, 3] uint8 array (filter 0 rows, zlib IDAT)."""
    h, w, _ = pixels.shape
    raw = b"".join(b"\x00" + pixels[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _bilinear(img, oh, ow, align, half):
    """float64 reference: TF's source coordinate per axis, lerp of floor/ceil (clamped)."""
    def axis(n, m):
        scale = (n - 1) / (m - 1) if align and m > 1 else n / m
        src = (np.arange(m) + 0.5) * scale - 0.5 if half else np.arange(m) * scale
        lo = np.floor(src)
        return (np.maximum(lo, 0).astype(int), np.minimum(np.ceil(src), n - 1).astype(int),
                src - lo)
    b, h, w, c = img.shape
    y0, y1, fy = axis(h, oh)
    x0, x1, fx = axis(w, ow)
    img = img.astype(np.float64)
    top = img[:, y0][:, :, x0] + (img[:, y0][:, :, x1] - img[:, y0][:, :, x0]) * fx[None, None, :, None]
    bot = img[:, y1][:, :, x0] + (img[:, y1][:, :, x1] - img[:, y1][:, :, x0]) * fx[None, None, :, None]
    return top + (bot - top) * fy[None, :, None, None]


def _run(t, feed=None):
    with tx.Session() as sess:
        return sess.run(t, feed)


def test_decode_png_written_with_zlib():
    pixels = np.random.RandomState(0).randint(0, 256, (5, 7, 3)).astype(np.uint8)
    with tx.Graph().as_default():
        img = tx.image.decode_png(tx.constant(_png(pixels)), channels=3)
        assert img.shape.as_list() == [None, None, 3]
        np.testing.assert_array_equal(_run(img), pixels)


@pytest.mark.parametrize("align, half", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("oh, ow", [(3, 11), (9, 4)])
def test_resize_bilinear_matches_numpy(align, half, oh, ow):
    img = np.random.RandomState(1).randint(0, 256, (2, 5, 7, 3)).astype(np.uint8)
    with tx.Graph().as_default():
        out = tx.image.resize_bilinear(img, [oh, ow], align_corners=align,
                                       half_pixel_centers=half)
        assert out.shape.as_list() == [2, oh, ow, 3]
        np.testing.assert_allclose(_run(out), _bilinear(img, oh, ow, align, half), rtol=1e-5,
                                   atol=1e-3)


def test_convert_and_normalize():
    img = np.array([[[0, 255, 51]]], np.uint8)
    with tx.Graph().as_default():
        f = _run(tx.image.convert_image_dtype(img, tx.float32))
        n = _run(tx.image.normalize_per_channel(img, [0.5, 0.5, 0.2], [0.5, 0.25, 0.1]))
    np.testing.assert_allclose(f, [[[0, 1, 0.2]]], rtol=1e-6)
    with tx.Graph().as_default():
        # TF's float -> uint8: x * 255.5, truncated (1.0 -> 255, 0.2 -> 51); saturate clips first.
        back = _run(tx.image.convert_image_dtype(np.float32([0.0, 1.0, 0.2, 0.999]), tx.uint8))
        sat = _run(tx.image.convert_image_dtype(np.float32([-0.5, 1.5]), tx.uint8, saturate=True))
    np.testing.assert_array_equal(back, [0, 255, 51, 255])
    np.testing.assert_array_equal(sat, [0, 255])
    np.testing.assert_allclose(n, [[[-1, 2, 0]]], atol=1e-6)


def test_crops_and_flips():
    img = np.arange(6 * 8 * 2, dtype=np.float32).reshape(6, 8, 2)
    with tx.Graph().as_default():
        np.testing.assert_array_equal(_run(tx.image.central_crop(img, 0.5)), img[1:5, 2:6])
        np.testing.assert_array_equal(_run(tx.image.flip_left_right(img)), img[:, ::-1])
        crop = tx.image.random_crop(img, [3, 4, 2], seed=7)
        flip = tx.image.random_flip_left_right(img, seed=3)
        with tx.Session() as sess:
            crops = [sess.run(crop) for _ in range(6)]
            flips = [sess.run(flip) for _ in range(12)]
    windows = [img[y:y + 3, x:x + 4] for y in range(4) for x in range(5)]
    for c in crops:
        assert any(np.array_equal(c, w) for w in windows)
    assert len({c.tobytes() for c in crops}) > 1  # the offset is redrawn each run
    kinds = {0 if np.array_equal(f, img) else 1 for f in flips}
    assert all(np.array_equal(f, img) or np.array_equal(f, img[:, ::-1]) for f in flips)
    assert kinds == {0, 1}

    def draws():  # a fresh graph with the same seeds gives the same sequence
        with tx.Graph().as_default():
            tx.set_random_seed(5)
            c = tx.image.random_crop(img, [3, 4, 2], seed=7)
            with tx.Session() as sess:
                return [sess.run(c).tobytes() for _ in range(4)]
    assert draws() == draws()
