"""Image ops (ops/image_ops.cc): ResizeBilinear, DecodePng, DecodeJpeg.

PNGs are encoded here (zlib, filter type 0); the JPEGs are small files made once by TF's
encode_jpeg (libjpeg-turbo) and committed below as base64. JPEG decoders may differ in the last
bits between libjpeg versions; TensorFlux links the system's libjpeg-turbo and TF bundles its
own. uint8 outputs are compared exactly, so a libjpeg difference would show here: the decoded
pixels agree bit for bit today (same IDCT and upsampling code).
"""

import base64
import struct
import zlib

import numpy as np

from conformance.table import FLOAT_DTYPES, INT_DTYPES, Case, Rand, Special

CASES = []

# ---------------------------------------------------------------- ResizeBilinear
# Output is float32 for every input dtype; TF's CPU also takes uint32/uint64, which TensorFlux's
# op does not list.
RESIZE_DTYPES = FLOAT_DTYPES + ("int8", "uint8", "int16", "uint16", "int32", "int64")


def _size(h, w):
    return np.array([h, w], np.int32)


for dt in RESIZE_DTYPES:
    CASES.append(Case("ResizeBilinear", {"images": Rand((1, 3, 4, 2), low=-50, high=200),
                                         "size": _size(5, 3)}, dtype=dt, const=("size",)))
for variant, attrs in (("align_corners", {"align_corners": True}),
                       ("half_pixel", {"half_pixel_centers": True})):
    CASES += [
        Case("ResizeBilinear", {"images": Rand((2, 3, 4, 1)), "size": _size(5, 7)}, attrs,
             variant=variant + "_up", const=("size",)),
        Case("ResizeBilinear", {"images": Rand((1, 5, 6, 2)), "size": _size(2, 4)}, attrs,
             variant=variant + "_down", const=("size",)),
        Case("ResizeBilinear", {"images": Rand((1, 3, 3, 1)), "size": _size(1, 1)}, attrs,
             variant=variant + "_1x1", const=("size",)),
        Case("ResizeBilinear", {"images": Rand((1, 3, 4, 1), low=0, high=255),
                                "size": _size(6, 5)}, attrs, variant=variant + "_uint8",
             dtype="uint8", const=("size",)),
    ]
CASES += [
    Case("ResizeBilinear", {"images": Rand((1, 4, 4, 1)), "size": _size(2, 2)},
         variant="down", const=("size",)),
    Case("ResizeBilinear", {"images": Rand((1, 2, 3, 1)), "size": _size(2, 3)},
         variant="same_size", const=("size",)),
    Case("ResizeBilinear", {"images": Rand((1, 1, 1, 2)), "size": _size(3, 2)},
         variant="from_1x1", const=("size",)),
    Case("ResizeBilinear", {"images": Rand((1, 3, 4, 2)), "size": _size(5, 3)},
         variant="size_fed"),
    Case("ResizeBilinear", {"images": Rand((0, 3, 4, 2)), "size": _size(5, 3)},
         variant="empty_batch", const=("size",)),
    Case("ResizeBilinear", {"images": Rand((1, 3, 4, 0)), "size": _size(5, 3)},
         variant="empty_channels", const=("size",)),
    Case("ResizeBilinear", {"images": Special(shape=(1, 3, 4, 1)), "size": _size(4, 6)},
         variant="specials", const=("size",)),
    Case("ResizeBilinear", {"images": Special(shape=(1, 2, 4, 1)), "size": _size(3, 6)},
         variant="specials", dtype="int32", const=("size",)),
    Case("ResizeBilinear", {"images": Special(shape=(1, 2, 4, 1)), "size": _size(3, 6)},
         variant="specials", dtype="int64", const=("size",)),
    # Errors.
    Case("ResizeBilinear", {"images": Rand((1, 3, 4, 1)), "size": _size(5, 3)},
         {"align_corners": True, "half_pixel_centers": True}, variant="both_flags",
         const=("size",)),
    Case("ResizeBilinear", {"images": Rand((3, 4, 1)), "size": _size(5, 3)},
         variant="images_rank3", const=("size",)),
    Case("ResizeBilinear", {"images": Rand((1, 3, 4, 1)), "size": np.array([5, 3, 1], np.int32)},
         variant="size_length", const=("size",)),
    Case("ResizeBilinear", {"images": Rand((1, 3, 4, 1)), "size": np.array([[5, 3]], np.int32)},
         variant="size_rank2", const=("size",)),
    Case("ResizeBilinear", {"images": Rand((1, 3, 4, 1)), "size": _size(0, 3)},
         variant="size_zero", const=("size",)),
    Case("ResizeBilinear", {"images": Rand((1, 3, 4, 1)), "size": _size(-2, 3)},
         variant="size_negative"),
    Case("ResizeBilinear", {"images": Rand((1, 0, 4, 1)), "size": _size(2, 3)},
         variant="empty_height", const=("size",)),
]


# The output is float32 for every input dtype (both compute in float): float32's tolerance.
for _c in CASES:
    _c.tol = (1e-5, 1e-6)

# ---------------------------------------------------------------- DecodePng

def _chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data +
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def _png(pixels, color_type, bit_depth=8, palette=None, trns=None):
    """A PNG of `pixels` ([h, w] or [h, w, samples], raw sample values) with filter type 0."""
    pixels = np.asarray(pixels)
    h, w = pixels.shape[:2]
    rows = pixels.reshape(h, w, -1)
    raw = b""
    for r in rows:
        if bit_depth == 16:
            line = r.astype(">u2").tobytes()
        elif bit_depth == 8:
            line = r.astype(np.uint8).tobytes()
        else:
            bits = np.unpackbits(r.reshape(-1, 1).astype(np.uint8), axis=1)[:, 8 - bit_depth:]
            line = np.packbits(bits.reshape(-1)).tobytes()
        raw += b"\x00" + line
    out = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, bit_depth,
                                                            color_type, 0, 0, 0))
    if palette is not None:
        out += _chunk(b"PLTE", np.asarray(palette, np.uint8).tobytes())
    if trns is not None:
        out += _chunk(b"tRNS", trns)
    return out + _chunk(b"IDAT", zlib.compress(raw, 9)) + _chunk(b"IEND", b"")


def _bytes(data):
    return np.array(data, dtype="S%d" % len(data))


_rs = np.random.RandomState(19)
_GRAY = _rs.randint(0, 256, (3, 4))
_RGB = _rs.randint(0, 256, (3, 4, 3))
_RGBA = _rs.randint(0, 256, (2, 3, 4))
_GA = _rs.randint(0, 256, (2, 3, 2))
_GRAY16 = _rs.randint(0, 65536, (2, 3))
_RGB16 = _rs.randint(0, 65536, (2, 2, 3))
_GRAY2 = _rs.randint(0, 4, (3, 5))
_PAL = _rs.randint(0, 4, (2, 5))
_PALETTE = _rs.randint(0, 256, (4, 3))

PNGS = {
    "gray": _png(_GRAY, 0),
    "rgb": _png(_RGB, 2),
    "rgba": _png(_RGBA, 6),
    "gray_alpha": _png(_GA, 4),
    "gray16": _png(_GRAY16, 0, 16),
    "rgb16": _png(_RGB16, 2, 16),
    "gray2": _png(_GRAY2, 0, 2),
    "palette": _png(_PAL, 3, 2, palette=_PALETTE),
    "palette_trns": _png(_PAL, 3, 2, palette=_PALETTE, trns=bytes([255, 0, 128])),
}

for name, channels in (("gray", 0), ("gray", 1), ("gray", 3), ("gray", 4),
                       ("rgb", 0), ("rgb", 1), ("rgb", 3), ("rgb", 4),
                       ("rgba", 0), ("rgba", 3), ("rgba", 1), ("rgba", 2),
                       ("gray_alpha", 0), ("gray_alpha", 1), ("gray_alpha", 4),
                       ("gray16", 0), ("rgb16", 0), ("rgb16", 1),
                       ("gray2", 0), ("palette", 0), ("palette", 1), ("palette_trns", 0)):
    CASES.append(Case("DecodePng", {"contents": _bytes(PNGS[name])}, {"channels": channels},
                      variant="%s_c%d" % (name, channels), dtype="uint8"))
for name in ("gray", "rgb16", "rgba"):
    CASES.append(Case("DecodePng", {"contents": _bytes(PNGS[name])}, {"dtype": "uint16"},
                      variant=name + "_u16", dtype="uint16"))
CASES += [
    # Errors: not a PNG, a truncated one, a non-scalar input, channels 5.
    Case("DecodePng", {"contents": _bytes(b"not a png at all")}, variant="garbage",
         dtype="uint8"),
    Case("DecodePng", {"contents": _bytes(PNGS["rgb"][:40])}, variant="truncated",
         dtype="uint8"),
    Case("DecodePng", {"contents": _bytes(PNGS["rgb"][:-20])}, variant="truncated_data",
         dtype="uint8"),
    Case("DecodePng", {"contents": np.array([PNGS["gray"], PNGS["gray"]])},
         variant="vector", dtype="uint8"),
    Case("DecodePng", {"contents": _bytes(PNGS["gray"])}, {"channels": 5},
         variant="channels5", dtype="uint8"),
]

# ---------------------------------------------------------------- DecodeJpeg
JPEGS = {k: base64.b64decode(v) for k, v in {
    # 16x16 RGB, quality 90, 4:2:0 chroma.
    "rgb16": "/9j/4AAQSkZJRgABAQEBLAEsAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQ"
             "DQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQU"
             "FBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAAQABADASIAAhEBAxEB/8QAHwAAAQUBAQEB"
             "AQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKB"
             "kaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1"
             "dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl"
             "5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcF"
             "BAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5"
             "OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0"
             "tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwD488JfCm3t"
             "YRJOPLxjA25zXtfw1+H1vrE0scEOfI25PrnP+Fe6eC/hD/q/3H6V7z4L+EP+r/cfpWOExU+dS59O1v1PX8P/"
             "ABLwTwVKjGlast58711v8NrLTTfzP//Z",
    # 16x16 grayscale, quality 85.
    "gray16": "/9j/4AAQSkZJRgABAQEBLAEsAAD/2wBDAAUDBAQEAwUEBAQFBQUGBwwIBwcHBw8LCwkMEQ8SEhEPERETFh"
              "wXExQaFRERGCEYGh0dHx8fExciJCIeJBweHx7/wAALCAAQABABAREA/8QAHwAAAQUBAQEBAQEAAAAAAAAA"
              "AAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwR"
              "VS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqD"
              "hIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6e"
              "rx8vP09fb3+Pn6/9oACAEBAAA/APIvhh4f/wBV8np2r6n+GHh//VfJ6dq8y+GHh/8A1XyenavQPjn4s/4V"
              "x8IJ/wCz7jydf1vOn6bsk2yRbh+9nXDq48tM4dc7ZHiyMGv/2Q==",
    # 8x8 RGB, quality 75, no chroma subsampling.
    "rgb8_444": "/9j/4AAQSkZJRgABAQEBLAEsAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBw"
                "gJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/2wBDAQkJCQwLDBgNDRgyIRwhMjIyMjIyMjIyMj"
                "IyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjL/wAARCAAIAAgDAREAAhEBAxEB/8Q"
                "AHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIh"
                "MUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV"
                "1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8"
                "jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgc"
                "ICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLR"
                "ChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHi"
                "ImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09f"
                "b3+Pn6/9oADAMBAAIRAxEAPwDzaw0JETc4x6cdaj2vKelkEHjFJqVuW3S+9/PyP//Z",
}.items()}

for name, attrs, variant in (
        ("rgb16", {}, "rgb16"),
        ("rgb16", {"channels": 3}, "rgb16_c3"),
        ("rgb16", {"channels": 1}, "rgb16_c1"),
        ("rgb16", {"fancy_upscaling": False}, "rgb16_no_fancy"),
        ("rgb16", {"dct_method": "INTEGER_ACCURATE"}, "rgb16_accurate"),
        ("rgb16", {"dct_method": "INTEGER_FAST"}, "rgb16_fast"),
        ("rgb16", {"ratio": 2}, "rgb16_ratio2"),
        ("rgb16", {"ratio": 4}, "rgb16_ratio4"),
        ("gray16", {}, "gray16"),
        ("gray16", {"channels": 3}, "gray16_c3"),
        ("rgb8_444", {}, "rgb8_444"),
        ("rgb8_444", {"channels": 1}, "rgb8_444_c1"),
):
    CASES.append(Case("DecodeJpeg", {"contents": _bytes(JPEGS[name])}, attrs, variant=variant,
                      dtype="uint8"))
CASES += [
    Case("DecodeJpeg", {"contents": _bytes(b"\xff\xd8 not really a jpeg")}, variant="garbage",
         dtype="uint8"),
    Case("DecodeJpeg", {"contents": _bytes(JPEGS["rgb16"][:300])}, variant="truncated",
         dtype="uint8"),
    # Cut inside the scan data (libjpeg's own memory source would pad it with gray).
    Case("DecodeJpeg", {"contents": _bytes(JPEGS["rgb16"][:-40])}, variant="truncated_scan",
         dtype="uint8"),
    Case("DecodeJpeg", {"contents": _bytes(JPEGS["gray16"])}, {"channels": 2},
         variant="channels2", dtype="uint8"),
    Case("DecodeJpeg", {"contents": _bytes(JPEGS["gray16"])}, {"ratio": 3},
         variant="ratio3", dtype="uint8"),
]
