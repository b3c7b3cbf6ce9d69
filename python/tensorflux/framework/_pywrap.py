"""The C++ extension (_pywrap_tensorflux), imported once with a clear error when it is missing.

OpenMP spin: oneDNN (the float GEMMs and convolutions) runs on libgomp, which reads its settings
from the environment once, when it is loaded. Unless the user set OMP_WAIT_POLICY or
GOMP_SPINCOUNT, the extension is loaded with OMP_WAIT_POLICY=ACTIVE and GOMP_SPINCOUNT=10000: a
team's idle thread spins for 10,000 pauses (about 250 us on the 2-core machine of
docs/PERFORMANCE.md, 25 ns a pause) before it sleeps while the process's OpenMP threads are no
more than its cores, and 1,000 once they outnumber them (a second team). With neither variable
set, libgomp spins 300,000 pauses (about 7.5 ms there) in the first case and 100 (a few us) in
the second; with GOMP_SPINCOUNT alone it spins that count, but still 100 when outnumbered
(libgomp takes 1,000 then only under ACTIVE).
- Not the long default: the executor runs a step's chain of GEMMs on one thread, so one team's
  second thread spun on the other core through the next kernel and the next step, taking the
  core from the intra-op pool (ResourceApplyAdam 80 -> 367 us in the bench/peer MLP step).
  ParallelFor now runs on that team under ACTIVE (core/openmp_team.h), and 250 us is about the
  longest gap between a step's parallel regions and between one step and the next from Python.
- Not libgomp's short one: between two GEMMs of the MLP step (its loss and gradient chain, about
  100 us) and between steps the team slept and woke, twice a step, each wake 25-50 us on this VM.
  With one team (a session with one CPU device runs its steps on the calling thread), 10,000
  pauses against 1,000 gave MLP steps 9% faster (docs/PERFORMANCE.md, 2026-12-02); 100,000 no
  faster than 10,000.
- A second team appears as soon as a second thread runs one oneDNN call (a session with an
  inter-op pool, a thread of the user's); libgomp then spins 1,000 pauses, not 100: steps of
  767-916 against 845-1,016 us (4 alternated processes, docs/PERFORMANCE.md 2026-12-01).
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
OPENMP_SETTINGS = {"OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": "10000"}


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
        from tensorflux._pywrap_tensorflux import gradient_kind  # noqa: F401
        from tensorflux._pywrap_tensorflux import infer_node  # noqa: F401
        from tensorflux._pywrap_tensorflux import kernel_list  # noqa: F401
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
