"""The manifest format shared by reverse_write.py (TensorFlux writes files and its own values)
and reverse_check.py (TensorFlow reads them back): values as JSON, and tf.train.Example
features as JSON. Imports numpy only, so both the Debian Python and the oracle's venv load it."""

import base64

import numpy as np


def encode(value):
    """A numpy value (or bytes) as a JSON-able {"dtype", "shape", "data"}: strings base64,
    NaN/Inf as their repr (JSON has no literal for them)."""
    if isinstance(value, bytes):
        value = np.array(value, dtype=object)
    arr = np.asarray(value)
    if arr.dtype.kind in "SOU":
        data = [base64.b64encode(v if isinstance(v, bytes) else str(v).encode()).decode()
                for v in arr.ravel()]
        return {"dtype": "string", "shape": list(arr.shape), "data": data}
    data = arr.ravel().tolist()
    if arr.dtype.kind == "f":
        data = [v if np.isfinite(v) else repr(float(v)) for v in data]
    return {"dtype": arr.dtype.name, "shape": list(arr.shape), "data": data}


def decode(d):
    """The inverse of encode(): strings come back as an object array of bytes."""
    if d["dtype"] == "string":
        return np.array([base64.b64decode(v) for v in d["data"]], dtype=object).reshape(d["shape"])
    data = [float(v) if isinstance(v, str) else v for v in d["data"]]
    return np.array(data, dtype=d["dtype"]).reshape(d["shape"])


def example_features(ex):
    """A tf.train.Example's features as {key: {"kind": ..., "values": [...]}} (bytes base64)."""
    feats = {}
    for key, f in ex.features.feature.items():
        kind = f.WhichOneof("kind")
        vals = list(getattr(f, kind).value)
        if kind == "bytes_list":
            vals = [base64.b64encode(v).decode() for v in vals]
        feats[key] = {"kind": kind, "values": vals}
    return feats
