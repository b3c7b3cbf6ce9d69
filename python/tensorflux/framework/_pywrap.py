"""The C++ extension (_pywrap_tensorflux), imported once with a clear error when it is missing.

OpenMP spin: oneDNN (the float GEMMs and convolutions) runs on libgomp, which reads its settings
from the environment once, when it is loaded. Unless the user set OMP_WAIT_POLICY or
GOMP_SPINCOUNT, the extension is loaded with OMP_WAIT_POLICY=ACTIVE and GOMP_SPINCOUNT=1000: a
team's idle thread spins for 1,000 pauses (about 30-50 us on the 2-core machine of
docs/PERFORMANCE.md) before it sleeps, however many teams the process has. With neither variable
set, libgomp spins 300,000 pauses (about 11 ms there) while the process's OpenMP threads are no
more than its cores, and 100 (a few us) once they outnumber them; with GOMP_SPINCOUNT alone it
spins that count, but still 100 when outnumbered (libgomp takes 1,000 then only under ACTIVE).
- The long spin: the executor runs a step's chain of GEMMs on one thread, so one team's second
  thread spun on the other core through the next kernel and the next step, taking the core from
  the intra-op pool (ResourceApplyAdam 80 -> 367 us in the bench/peer MLP step).
- The short one: a second team appears as soon as a second thread runs one oneDNN call (a pool
  thread, say, in the first steps before the executor has measured its kernels), and from then
  on the step's team slept and woke at every gap between its GEMMs and ParallelFors (about 4.7
  times a step instead of 2 in the bench/peer MLP, each wake 25-50 us on this VM): steps of
  845-1,016 against 767-916 us (4 alternated processes, docs/PERFORMANCE.md 2026-12-01).
The variables are set only while the extension loads: the process's environment, and so that of
the processes it starts (PyTorch in bench/peer, servers), is as the user left it. When another
module has loaded libgomp before tensorflux is imported, libgomp has read its settings already:
neither variable is set then, so that the library, which runs ParallelFor on oneDNN's OpenMP
teams only when it sees OMP_WAIT_POLICY=ACTIVE as it loads (core/openmp_team.h), does not do so
on threads that sleep between regions.
"""

import contextlib
import os

# libgomp's wait policy and spin count while a team waits for work (see the module docstring).
OPENMP_SETTINGS = {"OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": "1000"}


def _libgomp_loaded():
    """Whether libgomp is mapped into this process already (Linux; False where unknown)."""
    try:
        with open("/proc/self/maps") as maps:
            return any(os.path.basename(line.rstrip("\n").split(" ")[-1]).startswith("libgomp.so")
                       for line in maps)
    except OSError:
        return False


@contextlib.contextmanager
def _openmp_settings():
    """OPENMP_SETTINGS in the environment for the block when neither variable is set and
    libgomp is not loaded yet; the environment is as before afterwards."""
    if any(k in os.environ for k in OPENMP_SETTINGS) or _libgomp_loaded():
        yield
        return
    os.environ.update(OPENMP_SETTINGS)
    try:
        yield
    finally:
        for k in OPENMP_SETTINGS:
            os.environ.pop(k, None)


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
