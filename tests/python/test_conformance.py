"""The op conformance table (tests/conformance) against TensorFlow's reference data.

Each case runs in TensorFlux and is compared with what TensorFlow 2.15 computed for the same
inputs (tests/data/oracle/conformance, written by `make oracle`): values, static shapes,
errors, gradients, and finite differences. test_registry_coverage checks that every registered
op, CPU kernel dtype and gradient has a case (or a stated reason in a family's UNCOVERED).
"""

import os
import re
import sys

import numpy as np
import pytest

import tensorflux as tx
from tensorflux.framework import _pywrap
from tensorflux.framework import op_def_library
from tensorflux.framework import op_def_registry

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(_REPO, "tests"))

from conformance import cases as cases_pkg  # noqa: E402
from conformance import runner, store, table  # noqa: E402

DATA = os.path.join(_REPO, "tests", "data", "oracle", "conformance")
STALE = "reference data is stale or missing for this case: run `make oracle` and commit it"


def _apply(op, **kw):
    out = op_def_library.apply_op(op, name="op", **kw)
    if isinstance(out, tx.Operation):
        return out
    # Outputs may be lists (ParseExample's sparse_indices, ...), some of them empty.
    while isinstance(out, (list, tuple)):
        flat = [t for t in out if not (isinstance(t, (list, tuple)) and not t)]
        if not flat:
            return tx.get_default_graph().get_operation_by_name("op")
        out = flat[0]
    return out.op


TX = runner.System("tensorflux", tx, _apply, op_def_registry.get, tx.errors.OpError)
FAMILIES = cases_pkg.cases_by_family()
ALL = [(fam, c) for fam, cs in FAMILIES.items() for c in cs]
_loaded = {}


def reference(family):
    if family not in _loaded:
        base = os.path.join(DATA, family)
        if not os.path.exists(base + ".json"):
            _loaded[family] = ({}, {})
        else:
            _loaded[family] = (store.read_json(base + ".json")["cases"], store.read_npz(base + ".npz"))
    return _loaded[family]


def stored_values(arrays, case):
    prefix = case.id + "/"
    return {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}


def assert_close(got, want, dtype, tol, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, "%s: shape %s, TensorFlow %s" % (what, got.shape, want.shape)
    if want.dtype.kind == "f" or want.dtype == np.float16:
        rtol, atol = tol or table.TOLERANCE.get(dtype, table.TOLERANCE["float32"])
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                                   atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def finite_difference_check(case, arrays, want_grads):
    """d/dx sum(W * op(x)) by central differences, in float64, against TensorFlux's gradient."""
    g = tx.Graph()
    with g.as_default():
        feeds, kw, phs = {}, {}, {}
        for name, val in arrays.items():
            if isinstance(val, list):
                return  # list inputs: TF's gradient comparison covers them
            val = np.asarray(val)
            if name in case.const:
                kw[name] = tx.constant(val)
            else:
                kw[name] = phs[name] = tx.placeholder(tx.as_dtype(val.dtype.name), val.shape)
                feeds[phs[name]] = val
        op = _apply(case.op, **kw, **runner._convert_attrs(TX, case))  # noqa: SLF001
        idx = [i for i, t in enumerate(op.outputs) if t.dtype.is_floating]
        outs = [op.outputs[i] for i in idx]
        with tx.Session(graph=g) as sess:
            base = sess.run(outs, feeds)
            ws = [case.upstream(b.shape, b.dtype, i) for i, b in zip(idx, base)]

            def f(fd):
                return sum(float(np.sum(w * o)) for w, o in zip(ws, sess.run(outs, fd)))

            for name in want_grads:
                x = np.array(feeds[phs[name]], dtype=np.float64)
                if x.size > 64:
                    continue
                num = np.zeros_like(x)
                eps = 1e-6
                for i in range(x.size):
                    for sign in (1, -1):
                        xp = x.copy()
                        xp.reshape(-1)[i] += sign * eps
                        fd = dict(feeds)
                        fd[phs[name]] = xp
                        num.reshape(-1)[i] += sign * f(fd) / (2 * eps)
                np.testing.assert_allclose(want_grads[name], num, rtol=1e-5, atol=1e-6,
                                           err_msg="%s: gradient of %s against finite "
                                                   "differences" % (case.id, name))


def error_matches(tf_meta, exc):
    if tf_meta["op_error"]:
        return isinstance(exc, tx.errors.OpError) and type(exc).__name__ == tf_meta["error"]
    return isinstance(exc, (ValueError, TypeError, tx.errors.OpError))


@pytest.mark.parametrize("family,case", ALL, ids=[c.id for _, c in ALL])
def test_case(family, case):
    metas, arrays = reference(family)
    if case.id not in metas:
        pytest.fail(STALE)
    want = metas[case.id]
    stored = stored_values(arrays, case)
    inputs = {}
    if case.program is None:
        inputs = runner.unflatten_inputs(case, stored)
        regenerated = runner.flatten_inputs(case.arrays())
        for k, v in regenerated.items():
            if k not in stored or stored[k].shape != v.shape or not np.array_equal(
                    stored[k], v, equal_nan=v.dtype.kind == "f"):
                pytest.fail(STALE + " (input %s changed)" % k)
    got, values = runner.run_case(TX, case, inputs)
    if case.deviation:
        # Documented deviation (docs/TF_DIFFERENCES.md): TensorFlux must handle the case without
        # crashing, running it or refusing it with an error (a safer error than TF's behaviour,
        # or another error class than TF's); the results are not compared.
        assert got["status"] in ("ok", "error"), got
        return
    if want["status"] == "error":
        assert got["status"] == "error", (
            "TensorFlow refuses this case (%s at %s: %s) but TensorFlux ran it"
            % (want["error"], want["phase"], want["message"]))
        # Where TF's kernel refuses at run, TensorFlux may refuse earlier, when the graph is
        # built (its shape function saw the problem); at run, with TF's error class.
        if want["op_error"] and want["phase"] == "run" and got["phase"] != "build":
            assert got["error"] == want["error"], (got, want)
        return
    assert got["status"] == "ok", "TensorFlux refused a case TensorFlow runs: %s" % got
    assert got["out_dtypes"] == want["out_dtypes"]
    if case.program is None:
        assert got["shapes"] == want["shapes"], "static shapes differ from TensorFlow's"
    n_out = len(want["out_dtypes"])
    for i in range(n_out):
        if i in case.unspecified:  # TF leaves these values unspecified: shape and dtype only
            assert values["out/%d" % i].shape == stored["out/%d" % i].shape
            continue
        assert_close(values["out/%d" % i], stored["out/%d" % i], case.dtype, case.tol,
                     "%s output %d" % (case.id, i))
    if case.grad:
        assert got["grads"] == want["grads"], "inputs with a gradient differ from TensorFlow's"
        for n in want["grads"]:
            assert_close(values["grad/" + n], stored["grad/" + n], case.dtype,
                         case.grad_tol or table.GRAD_TOLERANCE.get(case.dtype),
                         "%s gradient of %s" % (case.id, n))
        if case.fd and case.dtype == "float64":
            finite_difference_check(case, inputs, {n: values["grad/" + n] for n in got["grads"]})


# ---------------------------------------------------------------- registry coverage

_CONSTRAINT = re.compile(r"(\w+) in \[([^\]]*)\]")


def registered_kernels():
    """(op, device) -> set of dtype names the kernels accept for the op's first type attr."""
    out = {}
    for op in op_def_registry.get_registered_ops():
        for line in _pywrap.kernel_list(op):
            device = re.search(r"device='([^']*)'", line).group(1)
            dts = set()
            for _, names in _CONSTRAINT.findall(line)[:1]:
                dts |= {n.strip() for n in names.split(",") if n.strip()}
            out.setdefault((op, device), set()).update(dts or {"*"})
    return out


def _covered():
    ops, dtypes, grads = {}, {}, set()
    for fam, cs in FAMILIES.items():
        for c in cs:
            for op in [c.op] + list(c.covers):
                ops.setdefault(op, []).append(c.id)
                dtypes.setdefault(op, set()).add(c.dtype)
            if c.grad:
                grads.add(c.op)
            grads.update(c.grad_covers)
    uncovered = {}
    for mod in cases_pkg.families().values():
        uncovered.update(getattr(mod, "UNCOVERED", {}))
    return ops, dtypes, grads, uncovered


_DT_NAMES = {"float": "float32", "double": "float64", "half": "float16"}


def test_registry_coverage():
    """Every registered op has a case; every CPU kernel dtype and every registered gradient
    too, or the family's UNCOVERED says why not."""
    ops, dtypes, grads, uncovered = _covered()
    missing_ops = sorted(op for op in op_def_registry.get_registered_ops()
                         if op not in ops and op not in uncovered)
    missing_dtypes = []
    for (op, device), dts in sorted(registered_kernels().items()):
        if device != "CPU" or op in uncovered or op not in ops:
            continue
        if any(c for c in ops[op] if "/program" in c):
            continue
        for dt in sorted(dts):
            name = _DT_NAMES.get(dt, dt)
            if name in ("*", "bfloat16", "resource", "variant", "string", "bool"):
                continue
            if name not in dtypes[op]:
                missing_dtypes.append("%s:%s" % (op, name))
    missing_grads = sorted(op for op in op_def_registry.get_registered_ops()
                           if _pywrap.gradient_kind(op) == "gradient" and op not in grads
                           and op not in uncovered)
    assert not missing_ops, "ops without a conformance case: %s" % missing_ops
    assert not missing_dtypes, "CPU kernel dtypes without a case: %s" % missing_dtypes
    assert not missing_grads, "gradients without a case: %s" % missing_grads


# ---------------------------------------------------------------- GPU kernels

_GPU_KERNELS_SCRIPT = """
import json
from tensorflux.framework import _pywrap, op_def_registry
why = _pywrap.load_cuda_module_for_testing()
lines = [] if why else [l for op in op_def_registry.get_registered_ops()
                        for l in _pywrap.kernel_list(op) if "device='GPU'" in l]
print(json.dumps({"why": why, "lines": lines}))
"""


def test_gpu_kernel_coverage():
    """Every GPU kernel's (op, dtype) has a case, so scripts/gpu-check compares it with the CPU
    kernel (test_gpu_parity). The CUDA module is loaded in a child process (it registers its
    kernels without a driver); where it was not built this test skips."""
    import json
    import subprocess
    out = subprocess.run([sys.executable, "-c", _GPU_KERNELS_SCRIPT], capture_output=True,
                         text=True, timeout=120, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                             p for p in sys.path if p)))
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    if got["why"]:
        pytest.skip("no CUDA module: " + got["why"])
    _, dtypes, _, uncovered = _covered()
    missing = []
    for line in got["lines"]:
        op = line.split(":", 1)[0]
        if op in uncovered:
            continue
        m = _CONSTRAINT.search(line)
        names = [n.strip() for n in m.group(2).split(",")] if m else ["*"]
        for dt in names:
            name = _DT_NAMES.get(dt, dt)
            if name in ("*", "bfloat16", "resource", "variant", "string", "bool", "int32"):
                continue  # int32 lives in host memory on GPUs; bools and strings: CPU cases
            if name not in dtypes.get(op, ()):
                missing.append("%s:%s" % (op, name))
    assert not missing, "GPU kernel dtypes without a case: %s" % sorted(set(missing))


def _gpu_available():
    try:
        from tensorflux.client import device_lib
        return any(d.device_type == "GPU" for d in device_lib.list_local_devices())
    except Exception:  # pragma: no cover - no device_lib
        return False


GPU_CASES = [(fam, c) for fam, c in ALL if c.program is None and c.deviation is None]


@pytest.mark.parametrize("family,case", GPU_CASES, ids=[c.id for _, c in GPU_CASES])
def test_gpu_parity(family, case):
    """The case's op on GPU:0 against the CPU kernel (scripts/gpu-check): the same values within
    the case's tolerance, the same gradients. Skips without a GPU, and for an op or dtype with no
    GPU kernel (soft placement would run it on the CPU)."""
    if not _gpu_available():
        pytest.skip("no GPU")
    lines = [l for l in _pywrap.kernel_list(case.op) if "device='GPU'" in l]
    if not lines:
        pytest.skip("no GPU kernel for " + case.op)
    inputs = case.arrays()
    cpu, cpu_values = runner.run_case(TX, case, inputs)
    gpu, gpu_values = runner.run_case(TX, case, inputs, device="/GPU:0")
    if cpu["status"] != "ok":
        assert gpu["status"] != "ok", "GPU runs a case the CPU kernel refuses: %s" % cpu
        return
    assert gpu["status"] == "ok", gpu
    for key, want in cpu_values.items():
        if key.startswith(("out/", "grad/")):
            assert_close(gpu_values[key], want, case.dtype, case.tol, "%s %s" % (case.id, key))
