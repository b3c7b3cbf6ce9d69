"""Reads and writes the oracle's reference data: one .npz (arrays) and one .json (metadata)
per family. The writer gives the same bytes for the same data: entries in sorted order, a fixed
timestamp, .npy format version 1.0, JSON with sorted keys."""

import io
import json
import zipfile

import numpy as np

_FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def write_npz(path, arrays):
    """arrays: key -> numpy array. Keys may hold '/'."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key in sorted(arrays):
            buf = io.BytesIO()
            # np.ascontiguousarray would turn a 0-d array into shape (1,): only copy when needed.
            a = np.asarray(arrays[key])
            if not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)
            np.lib.format.write_array(buf, a, version=(1, 0), allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=_FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue())


def read_npz(path):
    out = {}
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            with zf.open(name) as f:
                out[name[:-len(".npy")]] = np.lib.format.read_array(io.BytesIO(f.read()),
                                                                   allow_pickle=False)
    return out


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, sort_keys=True, indent=1)
        f.write("\n")


def read_json(path):
    with open(path) as f:
        return json.load(f)
