"""tx.test: the GPU checks of TF 1.x's tf.test."""

import re

from tensorflux.client import device_lib


def _compute_capability(desc):
    """(major, minor) from a physical_device_desc's "compute capability: M.m", or None."""
    match = re.search(r"compute capability: (\d+)\.(\d+)", desc)
    return (int(match.group(1)), int(match.group(2))) if match else None


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """True when this process has a GPU device (TF 1.x tf.test.is_gpu_available). Every GPU
    device here is a CUDA one, so cuda_only changes nothing. min_cuda_compute_capability: a
    (major, minor) pair: only a GPU of at least that compute capability counts (as TF)."""
    del cuda_only  # every GPU device here is a CUDA device
    for d in device_lib.list_local_devices():
        if d.device_type != "GPU":
            continue
        if min_cuda_compute_capability is None:
            return True
        cc = _compute_capability(d.physical_device_desc)
        if cc is not None and cc >= tuple(min_cuda_compute_capability):
            return True
    return False


def gpu_device_name():
    """The name of the first GPU device ("/device:GPU:0"), or "" without one."""
    for d in device_lib.list_local_devices():
        if d.device_type == "GPU":
            return d.name
    return ""
