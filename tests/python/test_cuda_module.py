"""The CUDA module is loaded lazily (devices/cuda_module.h): importing tensorflux maps no CUDA
library, and a process whose devices are listed maps them only where a CUDA driver loads.
Each check runs in a fresh interpreter, since a process loads the module at most once."""

import ctypes.util
import os
import subprocess
import sys

CUDA_LIBS = ("libcudart", "libcublas", "libcudnn", "libtensorflux_cuda")

CHECK = """
import sys
import tensorflux as tx
from tensorflux.client import device_lib

def mapped():
    with open("/proc/self/maps") as f:
        maps = f.read()
    return [lib for lib in %r if lib in maps]

print("after import:", mapped())
if sys.argv[1] == "devices":
    names = [d.name for d in device_lib.list_local_devices()]
    print("devices:", names)
    print("after devices:", mapped())
""" % (CUDA_LIBS,)


def run(mode, **env):
    full_env = dict(os.environ, **env)
    out = subprocess.run([sys.executable, "-c", CHECK, mode], env=full_env, check=True,
                         capture_output=True, text=True).stdout
    return dict(line.split(": ", 1) for line in out.strip().splitlines())


def test_import_maps_no_cuda_library():
    assert run("import")["after import"] == "[]"


def test_devices_load_the_module_only_with_a_driver():
    has_driver = ctypes.util.find_library("cuda") is not None
    out = run("devices")
    assert out["after import"] == "[]"
    if not has_driver:
        assert out["after devices"] == "[]"
        assert "GPU" not in out["devices"]


def test_tx_disable_gpu_keeps_the_module_unloaded():
    out = run("devices", TX_DISABLE_GPU="1")
    assert out["after devices"] == "[]"
    assert "GPU" not in out["devices"]
