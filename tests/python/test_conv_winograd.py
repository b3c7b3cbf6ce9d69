"""float32 Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter on a shape that takes oneDNN's
Winograd F(4x4, 3x3) (kernels/cpu/conv_dnnl.cc: 3x3, stride 1, depths multiples of 16, batch x
output pixels >= 3,136) agree with the float64 direct loops to Winograd's rounding, and differ in
their bits from the direct algorithm that TX_ENABLE_WINOGRAD=0 keeps (so the Winograd path really
ran). Each algorithm runs in a fresh interpreter: the variable is read once per process.
oneDNN implements Winograd only for some ISAs (AVX-512 here): where it has none, conv_dnnl.cc
falls back to direct convolution, so the not-bit-identical check applies only when oneDNN's
verbose log (ONEDNN_VERBOSE/DNNL_VERBOSE) shows a Winograd primitive ran."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tensorflux as tx

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(tx.__file__)))

# Writes y, dx, dw of one SAME 3x3 convolution ([16, 14, 14, 32] * [3, 3, 32, 64]) with a fixed
# upstream gradient, in the dtype argv[2], to the .npz argv[1].
_SCRIPT = r"""
import sys
import numpy as np
import tensorflux as tx
dtype = np.dtype(sys.argv[2])
rng = np.random.default_rng(5)
x = rng.standard_normal((16, 14, 14, 32))
w = rng.standard_normal((3, 3, 32, 64)) * 0.1
dy = rng.standard_normal((16, 14, 14, 64))
g = tx.Graph()
with g.as_default():
    xp = tx.placeholder(dtype, x.shape)
    wp = tx.placeholder(dtype, w.shape)
    dyp = tx.placeholder(dtype, dy.shape)
    y = tx.nn.conv2d(xp, wp, strides=[1, 1, 1, 1], padding="SAME")
    dx, dw = tx.gradients(y, [xp, wp], grad_ys=dyp)
with tx.Session(graph=g) as sess:
    out = sess.run([y, dx, dw], {xp: x.astype(dtype), wp: w.astype(dtype), dyp: dy.astype(dtype)})
np.savez(sys.argv[1], y=out[0], dx=out[1], dw=out[2])
"""


def _run(tmp_path, name, dtype, env_updates, verbose=False):
    env = dict(os.environ, PYTHONPATH=_PACKAGE_PARENT)
    if verbose:  # oneDNN logs each primitive execution (implementation name) on stdout
        env.update(ONEDNN_VERBOSE="1", DNNL_VERBOSE="1")
    env.pop("TX_ENABLE_WINOGRAD", None)
    env.update(env_updates)
    path = str(tmp_path / (name + ".npz"))
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, path, dtype], env=env, check=True,
                          timeout=300, capture_output=True, text=True)
    with np.load(path) as f:
        out = {k: f[k] for k in ("y", "dx", "dw")}
    if verbose:
        # exec lines name the implementation, e.g. "jit_wino_4x3:avx512_core" / "wino".
        out["ran_winograd"] = any("wino" in line for line in proc.stdout.splitlines()
                                  if "exec" in line and "convolution" in line)
    return out


def test_winograd_matches_float64_and_is_not_the_direct_algorithm(tmp_path):
    ref = _run(tmp_path, "ref", "float64", {})
    wino = _run(tmp_path, "wino", "float32", {}, verbose=True)
    direct = _run(tmp_path, "direct", "float32", {"TX_ENABLE_WINOGRAD": "0"})
    for k in ("y", "dx", "dw"):
        scale = np.abs(ref[k]).max()
        for got in (wino, direct):
            assert got[k].dtype == np.float32
            err = np.abs(got[k].astype(np.float64) - ref[k]).max() / scale
            assert err < 2e-5, (k, err)
        # Different arithmetic, so different roundings somewhere in every output; where oneDNN
        # has no Winograd for this CPU (no AVX-512) both runs are direct convolution.
        if wino["ran_winograd"]:
            assert not np.array_equal(wino[k], direct[k]), k
    if not wino["ran_winograd"]:
        pytest.skip("oneDNN ran no Winograd primitive on this CPU (its Winograd needs AVX-512): "
                    "accuracy checked, the not-the-direct-algorithm check skipped")
