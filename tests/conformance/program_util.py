"""Helpers for program cases (Case.program): seeded values, ordered reads, temp folders and the
few file and proto encodings the cases write themselves, in plain Python so that the bytes do
not depend on either system.

    program(m) builds with m = tf.compat.v1 (the oracle) or tensorflux (the test); everything
    here is independent of m except `ordered`, which only uses control_dependencies.
"""

import os
import shutil
import struct
import tempfile

import numpy as np

from .table import seed_of


def values(key, shape, dtype="float32", low=-2.0, high=2.0):
    """Seeded numpy values for a program case (`key` names the case and the value)."""
    rs = np.random.RandomState(seed_of(key))
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rs.randint(0, 2, size=shape).astype(np.bool_)
    if dt.kind in "iu":
        return rs.randint(int(low), int(high) + 1, size=shape).astype(dt)
    return rs.uniform(low, high, size=shape).astype(dt)


def ordered(m, makers):
    """Builds makers[0](), makers[1](), ... each under control dependencies on all that came
    before, so one session run evaluates them in that order (e.g. successive get_next calls).
    A maker returns a tensor, an operation or a (nested) list/tuple/dict of tensors; the
    result is the flat list of what they returned."""
    out, deps = [], []
    for make in makers:
        if deps:
            with m.control_dependencies(deps):
                got = make()
        else:
            got = make()
        flat = flatten(got)
        out.extend(flat)
        deps = list(flat) or deps
    return out


def flatten(x):
    if isinstance(x, dict):
        return [t for k in sorted(x) for t in flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in flatten(v)]
    return [x]


def tmpdir(case_id):
    """A fresh, empty folder for the case under the system's temp dir, its name made from the
    case id (the same on every run)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in case_id)
    path = os.path.join(tempfile.gettempdir(), "tx_conformance", safe)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


# ---------------------------------------------------------------- TFRecord framing

def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord_bytes(records):
    """TFRecord framing of `records` (a list of bytes)."""
    out = bytearray()
    for r in records:
        length = struct.pack("<Q", len(r))
        out += length + struct.pack("<I", masked_crc(length)) + r
        out += struct.pack("<I", masked_crc(r))
    return bytes(out)


# ---------------------------------------------------------------- protobuf wire encoding

def _varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(num, wire, payload):
    key = _varint((num << 3) | wire)
    if wire == 2:
        return key + _varint(len(payload)) + payload
    return key + payload


def _bytes(x):
    return x.encode() if isinstance(x, str) else bytes(x)


def feature(value):
    """A tf.train.Feature: bytes (list of bytes/str), float (list of floats) or int64 list,
    chosen from the Python values ({'b': [...]}, {'f': [...]} or {'i': [...]})."""
    kind, vals = next(iter(value.items()))
    if kind == "b":
        inner = b"".join(_field(1, 2, _bytes(v)) for v in vals)
        return _field(1, 2, inner)
    if kind == "f":
        packed = b"".join(struct.pack("<f", float(v)) for v in vals)
        return _field(2, 2, _field(1, 2, packed) if vals else b"")
    packed = b"".join(_varint(int(v)) for v in vals)
    return _field(3, 2, _field(1, 2, packed) if vals else b"")


def example(features):
    """Serialized tf.train.Example: features maps name -> {'b'|'f'|'i': values}."""
    entries = b""
    for name in features:  # in the given order
        entry = _field(1, 2, _bytes(name)) + _field(2, 2, feature(features[name]))
        entries += _field(1, 2, entry)
    return _field(1, 2, entries)


def scalar_summary(tags_and_values):
    """Serialized tf.Summary with simple_value entries [(tag, value), ...]."""
    out = b""
    for tag, v in tags_and_values:
        out += _field(1, 2, _field(1, 2, _bytes(tag)) + _field(2, 5, struct.pack("<f", v)))
    return out
