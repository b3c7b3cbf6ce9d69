"""tx.test: the GPU checks of TF 1.x's tf.test."""

from tensorflux.client import device_lib


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """True when this process has a GPU device (TF 1.x tf.test.is_gpu_available). The
    arguments are accepted for compatibility: every GPU device here is a CUDA one, and its
    compute capability is not checked."""
    del cuda_only, min_cuda_compute_capability
    return any(d.device_type == "GPU" for d in device_lib.list_local_devices())


def gpu_device_name():
    """The name of the first GPU device ("/device:GPU:0"), or "" without one."""
    for d in device_lib.list_local_devices():
        if d.device_type == "GPU":
            return d.name
    return ""
