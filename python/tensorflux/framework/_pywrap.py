"""The C++ extension (_pywrap_tensorflux), imported once with a clear error when it is missing.

OpenMP spin: oneDNN (the float GEMMs and convolutions) runs on libgomp, which reads its settings
from the environment once, when it is loaded. Unless the user set OMP_WAIT_POLICY or
GOMP_SPINCOUNT, the extension is loaded with GOMP_SPINCOUNT=1000: a team's idle thread spins for
1,000 pauses (about 50 us on the 2-core machine of docs/PERFORMANCE.md) before it sleeps. With
neither variable set, libgomp spins 300,000 pauses (about 11 ms there) for a team, and 100 once
its threads outnumber the cores. The executor runs a step's chain of GEMMs on one thread, so one
team's second thread then spun on the other core through the next kernel's ParallelFor and the
next step, taking the core from the intra-op pool (ResourceApplyAdam 80 -> 367 us in the
bench/peer MLP step). The variable is set only while the extension loads: the process's
environment, and so that of the processes it starts (PyTorch in bench/peer, servers), is as the
user left it. When another module has loaded libgomp before tensorflux is imported, its
settings stay libgomp's defaults.
"""

import contextlib
import os

# libgomp's spin count while a team waits for work (see the module docstring).
OPENMP_SPIN_COUNT = "1000"


@contextlib.contextmanager
def _openmp_settings():
    """GOMP_SPINCOUNT=OPENMP_SPIN_COUNT in the environment for the block when neither it nor
    OMP_WAIT_POLICY is set; the environment is as before afterwards."""
    if "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ:
        yield
        return
    os.environ["GOMP_SPINCOUNT"] = OPENMP_SPIN_COUNT
    try:
        yield
    finally:
        os.environ.pop("GOMP_SPINCOUNT", None)


try:
    with _openmp_settings():
        from tensorflux._pywrap_tensorflux import Session  # noqa: F401
        from tensorflux._pywrap_tensorflux import chrome_trace_from_step_stats  # noqa: F401
        from tensorflux._pywrap_tensorflux import infer_node  # noqa: F401
        from tensorflux._pywrap_tensorflux import list_local_devices  # noqa: F401
        from tensorflux._pywrap_tensorflux import op_list  # noqa: F401
        from tensorflux._pywrap_tensorflux import parse_device_name  # noqa: F401
        from tensorflux._pywrap_tensorflux import read_safetensors  # noqa: F401
        from tensorflux._pywrap_tensorflux import set_py_func_dispatcher  # noqa: F401
        from tensorflux._pywrap_tensorflux import tensor_proto_to_ndarray  # noqa: F401
        from tensorflux._pywrap_tensorflux import tensor_round_trip  # noqa: F401
        from tensorflux._pywrap_tensorflux import tensor_to_proto  # noqa: F401
        from tensorflux._pywrap_tensorflux import write_safetensors  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the build
    if isinstance(e.__cause__, KeyboardInterrupt):
        # Ctrl-C while the extension initialized (pybind11 wraps it in ImportError): an
        # interrupt, not a missing build.
        raise KeyboardInterrupt() from None
    raise ImportError(
        "tensorflux: cannot load the C++ extension _pywrap_tensorflux (%s). Build it with "
        "`make build` and put build/python on PYTHONPATH." % e) from e
