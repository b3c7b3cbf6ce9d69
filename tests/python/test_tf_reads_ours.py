"""TensorFlow and TensorBoard read what TensorFlux writes (issue 19's reverse oracle).

tools/oracle/reverse_write.py (this Python, with tensorflux) writes GraphDefs, a SavedModel,
checkpoints, TFRecords and event files, plus a short run of the Fashion-MNIST demo's train.py
when its data is installed; tools/oracle/reverse_check.py (the oracle venv's Python, with
TensorFlow 2.15 and tensorboard) reads them and compares with TensorFlux's values.

Runs only where the oracle venv exists: $TX_ORACLE_VENV (the venv's directory, or its python),
else ~/.cache/tensorflux/oracle-venv. Skipped otherwise, so `make test` needs no TensorFlow.
"""

import json
import os
import subprocess
import sys

import pytest

import tensorflux as tx

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_TOOLS = os.path.join(_REPO, "tools", "oracle")
_DEMO_DATA = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"
_DEMO_STEPS = 40  # two scalar summaries (every 20 steps), the traced step 5, one evaluation


def _oracle_python():
    """(python or None, why not)."""
    env = os.environ.get("TX_ORACLE_VENV")
    if env:
        for cand in (os.path.join(env, "bin", "python"), env):
            if os.path.isfile(cand) and os.access(cand, os.X_OK):
                return cand, None
        return None, "TX_ORACLE_VENV=%s holds no bin/python" % env
    cand = os.path.expanduser("~/.cache/tensorflux/oracle-venv/bin/python")
    if os.path.isfile(cand) and os.access(cand, os.X_OK):
        return cand, None
    return None, ("no oracle venv (%s missing; set TX_ORACLE_VENV): TensorFlow is not "
                  "available to read TensorFlux's files" % cand)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    python, why = _oracle_python()
    if python is None:
        pytest.skip(why)
    out = str(tmp_path_factory.mktemp("reverse_oracle"))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(tx.__file__)))
    cmd = [sys.executable, os.path.join(_TOOLS, "reverse_write.py"), out]
    if os.path.exists(_DEMO_DATA):
        cmd += ["--demo-steps", str(_DEMO_STEPS)]
    w = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert w.returncode == 0, "reverse_write.py failed:\n%s\n%s" % (w.stdout, w.stderr)
    env.pop("PYTHONPATH")
    result_json = os.path.join(out, "reverse_report.json")
    c = subprocess.run([python, os.path.join(_TOOLS, "reverse_check.py"), out, "--json",
                        result_json], env=env, capture_output=True, text=True, timeout=900,
                       check=False)
    if not os.path.exists(result_json):
        pytest.fail("reverse_check.py did not run:\n%s\n%s" % (c.stdout, c.stderr[-4000:]))
    with open(result_json, encoding="utf-8") as f:
        rows = json.load(f)["results"]
    return {"rows": rows, "stdout": c.stdout, "demo": "--demo-steps" in cmd}


def _rows(report, area, contains=""):
    rows = [r for r in report["rows"] if r["area"] == area and contains in r["name"]]
    assert rows, "no %s checks ran:\n%s" % (area, report["stdout"])
    failed = [r for r in rows if r["status"] == "FAIL"]
    assert not failed, "\n".join("%s: %s" % (r["name"], r["detail"]) for r in failed)
    return rows


def test_tensorflow_imports_and_runs_our_graphdefs(report):
    rows = _rows(report, "graph")
    names = {r["name"] for r in rows}
    assert {"ops_zoo (binary)", "ops_zoo (text)", "train_step (binary)"} <= names
    assert all(r["status"] == "PASS" for r in rows)


def test_tensorflow_loads_our_saved_model(report):
    rows = _rows(report, "saved_model")
    assert len(rows) == 3 and all(r["status"] == "PASS" for r in rows)


def test_tensorflow_reads_our_checkpoints(report):
    rows = _rows(report, "checkpoint")
    by_name = {r["name"]: r for r in rows}
    assert by_name["SaveV2 kernel bundle"]["status"] == "PASS"
    # tx.train.Saver writes safetensors until issue 21: KNOWN (TF cannot read it) or PASS.
    assert by_name["tx.train.Saver().save"]["status"] in ("KNOWN", "PASS")


def test_tensorflow_reads_our_tfrecords(report):
    rows = _rows(report, "tfrecord")
    assert len(rows) == 5 and all(r["status"] == "PASS" for r in rows)


def test_tensorboard_reads_our_event_file(report):
    rows = _rows(report, "events", "tx.summary.FileWriter")
    assert len(rows) == 5 and all(r["status"] == "PASS" for r in rows)


def test_tensorboard_reads_the_demo_event_file(report):
    if not report["demo"]:
        pytest.skip("Fashion-MNIST data not installed (%s): the demo did not run" % _DEMO_DATA)
    rows = _rows(report, "events", "make demo")
    assert len(rows) == 6 and all(r["status"] == "PASS" for r in rows)
    rows = _rows(report, "graph", "make demo")
    assert all(r["status"] == "PASS" for r in rows)
