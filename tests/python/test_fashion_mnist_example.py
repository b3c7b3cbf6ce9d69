"""examples/fashion_mnist/mlp.py's data path: the IDX reader on small gzip files written here
(header, big-endian dims, bad magic, truncated data) and the exit status 2 with a message naming
the Debian package when the files are missing. (The training run itself is `make demo`.)"""

import gzip
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_MLP = os.path.join(_REPO, "examples", "fashion_mnist", "mlp.py")


def _load_module():
    spec = importlib.util.spec_from_file_location("fashion_mlp", _MLP)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _write(path, payload):
    with gzip.open(path, "wb") as f:
        f.write(payload)


def test_read_idx(tmp_path):
    mlp = _load_module()
    images = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    header = bytes([0, 0, 8, 3]) + b"".join(d.to_bytes(4, "big") for d in (2, 3, 4))
    _write(tmp_path / "a.gz", header + images.tobytes())
    np.testing.assert_array_equal(mlp.read_idx(str(tmp_path / "a.gz")), images)
    labels = np.array([7, 1, 0], np.uint8)
    _write(tmp_path / "b.gz", bytes([0, 0, 8, 1]) + (3).to_bytes(4, "big") + labels.tobytes())
    np.testing.assert_array_equal(mlp.read_idx(str(tmp_path / "b.gz")), labels)
    _write(tmp_path / "c.gz", bytes([0, 0, 0x0D, 1]) + (3).to_bytes(4, "big") + b"\0" * 12)
    with pytest.raises(ValueError, match="IDX"):
        mlp.read_idx(str(tmp_path / "c.gz"))
    _write(tmp_path / "d.gz", header + images.tobytes()[:-1])
    with pytest.raises(ValueError, match="data bytes"):
        mlp.read_idx(str(tmp_path / "d.gz"))


def test_missing_data_exits_2_with_message(tmp_path):
    env = dict(os.environ, FASHION_MNIST_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, _MLP], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 2
    assert "dataset-fashion-mnist" in proc.stderr and str(tmp_path) in proc.stderr
