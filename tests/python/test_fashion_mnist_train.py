"""examples/fashion_mnist/train.py in short runs (--max-steps, --eval-examples): flag, --out
(unwritable, or continued with other settings), data and damaged-checkpoint errors exit 2 with
one line; on a local cluster the traced step shows each worker reading its own input and the ps
applying Adam; Ctrl-C saves a checkpoint, prints one line naming it, stops the servers and a
second run continues from it (in process: the checkpoint is the same); Ctrl-C during an epoch's
evaluation: the resumed run evaluates that epoch (one history entry, one report row); a
SIGKILLed client leaves no servers behind; TF_CONFIG and grpc:// clusters; model.pb is a frozen
graph from "images" to "probabilities"; a worker that dies mid-run ends it with one line, exit
1, and no servers left. (The accuracy run is `make demo`; the end-to-end test with `tensorflux
predict` is test_fashion_mnist_e2e.py.)"""

import fcntl
import gzip
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import tensorflux as tx
from conftest import wait_until

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_DIR = os.path.join(_REPO, "examples", "fashion_mnist")
TRAIN = os.path.join(_DIR, "train.py")
DATA = "/usr/share/datasets/fashion-mnist"
SHORT = ["--eval-examples", "200", "--batch-size", "16"]

needs_data = pytest.mark.skipif(not os.path.isdir(DATA),
                                reason="Debian's dataset-fashion-mnist is not installed")
needs_server = pytest.mark.skipif(tx.train.LocalCluster.server_binary() is None,
                                  reason="tensorflux-server is not built")


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    env.pop("TF_CONFIG", None)
    env.update(extra)
    return env


def _run(args, timeout=240, **env):
    return subprocess.run([sys.executable, TRAIN] + args, env=_env(**env), capture_output=True,
                          text=True, timeout=timeout, check=False)


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def _wait_gone(pids, seconds=15):
    deadline = time.time() + seconds
    while time.time() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


@pytest.mark.parametrize("flags,message", [
    (["--epochs", "0"], "--epochs must be >= 1"),
    (["--batch-size", "-1"], "--batch-size must be >= 1"),
    (["--cluster", "tcp://x"], "--cluster must be local, none or grpc://"),
    (["--eval-examples", "10001"], "--eval-examples must be <= 10000"),
    (["--max-steps", "0"], "--max-steps must be >= 1"),
    (["--epochs", "two"], "invalid int value"),
    (["--learning-rate", "nan"], "--learning-rate must be a finite number > 0, got nan"),
    (["--warmup-epochs", "inf"], "--warmup-epochs must be a finite number >= 0, got inf"),
    (["--l2", "-1"], "--l2 must be a finite number >= 0, got -1.0"),
])
def test_bad_flags_exit_2(flags, message):
    proc = _run(flags, timeout=60)
    assert proc.returncode == 2, proc.stderr
    # The short usage line and the error (not the usage of every flag, nor a traceback).
    usage, error = proc.stderr.strip().splitlines()
    assert usage.startswith("usage: train.py ") and "--help lists them" in usage, usage
    assert error.startswith("train.py: error: ") and message in error, error


@pytest.mark.skipif(not os.path.isdir(os.path.join(_REPO, "build", "python", "tensorflux")),
                    reason="no build/python in this checkout")
def test_runs_without_pythonpath_and_says_why_tensorflux_does_not_import(tmp_path):
    # `python3 examples/fashion_mnist/train.py --help` as a new user types it: the checkout's
    # build/python is found (before: ModuleNotFoundError: No module named 'tensorflux').
    env = _env()
    del env["PYTHONPATH"]
    proc = subprocess.run([sys.executable, TRAIN, "--help"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0 and "--eval-examples" in proc.stdout, proc.stderr
    # A tensorflux that does not import (here: its numpy): one line, exit 2.
    (tmp_path / "numpy").mkdir()
    (tmp_path / "numpy" / "__init__.py").write_text("raise ImportError('no numpy here')\n")
    env["PYTHONPATH"] = str(tmp_path)
    proc = subprocess.run([sys.executable, TRAIN, "--help"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "train.py: error: cannot import tensorflux (no numpy here); build it with `make build` "
        "and run PYTHONPATH=build/python /usr/bin/python3 %s" % TRAIN], proc.stderr
    # Ctrl-C while it imports (here: raised by its numpy): one line, exit 130, no traceback.
    (tmp_path / "numpy" / "__init__.py").write_text("raise KeyboardInterrupt\n")
    proc = subprocess.run([sys.executable, TRAIN, "--help"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 130
    assert proc.stderr.splitlines() == [
        "train.py: interrupted before training started; no checkpoint saved"], proc.stderr


@needs_data
@pytest.mark.parametrize("flags,message", [
    (["--batch-size", "30001"], "--batch-size 30001 is larger than a tower's shard (30000"),
    (["--eval-examples", "1"], "--eval-examples 1 leaves some of the 2 towers nothing"),
])
def test_flags_that_do_not_fit_the_towers_exit_2(tmp_path, flags, message):
    proc = _run(["--cluster", "none", "--out", str(tmp_path)] + flags, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("train.py: error: " + message), proc.stderr


@needs_data
def test_an_out_that_cannot_be_made_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "file").write_text("x")
    proc = _run(["--cluster", "none", "--out", str(tmp_path / "file" / "run")], timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == ["train.py: error: cannot create --out %s: Not a directory"
                     % (tmp_path / "file" / "run")], proc.stderr


@needs_data
def test_an_out_that_cannot_be_written_is_one_line_and_exit_2():
    # /proc: a directory no one can create files in (root included, unlike a chmod 555 one).
    proc = _run(["--cluster", "none", "--out", "/proc"], timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "train.py: error: cannot write to --out /proc: No such file or directory"], proc.stderr


@needs_data
@pytest.mark.parametrize("text,why", [
    ("{not json", "Expecting property name"),
    ('[{"epoch": 1}]', "not a list of epoch entries"),
])
def test_a_damaged_history_is_one_line_and_exit_2(tmp_path, text, why):
    (tmp_path / "history.json").write_text(text)
    proc = _run(["--cluster", "none", "--out", str(tmp_path), "--max-steps", "1"] + SHORT)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "train.py: error: %s is damaged (%s" % (tmp_path / "history.json", why)), proc.stderr


@needs_data
@pytest.mark.parametrize("damaged,why", [
    ("model_checkpoint_path: \"model.ckpt-2\"\nall_model_checkp", "2:1 : "),
    ("", "no model_checkpoint_path"),
    (None, "not a regular file"),  # a directory
    ("BIG", "over 1048576 bytes"),  # 1 MiB + 1 of blanks
], ids=["cut", "empty", "directory", "huge"])
def test_a_damaged_checkpoint_state_file_is_one_line_and_exit_2(tmp_path, damaged, why):
    """A `checkpoint` state file that does not parse (TF's latest_checkpoint ignores it, so the
    run would train again from step 0 and rewrite it over the checkpoints it names), names no
    checkpoint (was 'corrupt Fashion-MNIST data'), is a directory (was: trained from step 0 over
    the checkpoints, then failed writing the state file) or is over 1 MiB: one line naming it
    and exit 2; the checkpoints and the file are left as they were."""
    out = str(tmp_path / "run")
    first = _run(["--cluster", "none", "--out", out, "--max-steps", "2"] + SHORT)
    assert first.returncode == 0, first.stderr
    state_file = os.path.join(out, "checkpoint")
    if damaged == "BIG":
        damaged = " " * ((1 << 20) + 1)
    if damaged is None:
        os.remove(state_file)
        os.mkdir(state_file)
    else:
        with open(state_file, "w") as f:
            f.write(damaged)
    before = sorted(os.listdir(out))
    proc = _run(["--cluster", "none", "--out", out, "--max-steps", "3"] + SHORT)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "train.py: error: %s is damaged (%s" % (state_file, why)), proc.stderr
    assert lines[0].endswith("remove it to train again from step 0, or pass another --out")
    assert sorted(os.listdir(out)) == before
    if damaged is not None:
        assert open(state_file).read() == damaged


@needs_data
def test_a_damaged_or_removed_checkpoint(tmp_path):
    out = str(tmp_path / "run")
    first = _run(["--cluster", "none", "--out", out, "--max-steps", "2"] + SHORT)
    assert first.returncode == 0, first.stderr
    # Continuing it with other settings (a step of another size, another seed) is refused
    # (before: it trained on, its epochs' figures mixed); --epochs may change.
    other = _run(["--cluster", "none", "--out", out, "--max-steps", "3", "--seed", "2"]
                 + SHORT[:-1] + ["8"])
    assert other.returncode == 2, other.stderr
    assert other.stderr.strip().splitlines() == [
        "train.py: error: --out %s continues a run trained with other settings: --batch-size "
        "16 (this run: 8), --seed 1 (this run: 2); pass the same flags to continue it, or "
        "another --out" % out], other.stderr
    ckpt = tx.train.latest_checkpoint(out)
    with open(ckpt, "rb") as f:
        data = f.read()
    with open(ckpt, "wb") as f:
        f.write(data[:len(data) // 2])
    # A cut checkpoint: one line naming it, exit 2 (before: "corrupt Fashion-MNIST data").
    cut = _run(["--cluster", "none", "--out", out, "--max-steps", "3"] + SHORT)
    assert cut.returncode == 2, cut.stderr
    lines = cut.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("train.py: error: cannot resume from " + ckpt)
    # Removed: the run starts again at step 0 and history.json (so report.md) drops the earlier
    # run's epoch, which was ahead of the restored step (before: both epochs 1 were reported).
    os.remove(ckpt)
    again = _run(["--cluster", "none", "--out", out, "--max-steps", "3"] + SHORT)
    assert again.returncode == 0, again.stderr
    assert "resumed" not in again.stdout
    history = json.load(open(os.path.join(out, "history.json")))
    assert [(h["epoch"], h["step"], len(h["step_losses"])) for h in history] == [(1, 3, 3)]


def test_missing_data_is_one_line_and_exit_2(tmp_path):
    proc = _run(["--data-dir", str(tmp_path), "--out", str(tmp_path / "out")], timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "dataset-fashion-mnist" in lines[0] and str(tmp_path) in lines[0]
    # Every missing file is named at once (the test split's too, not only the first split's).
    for name in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                 "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        assert os.path.join(str(tmp_path), name) in lines[0], lines[0]


@needs_data
@pytest.mark.parametrize("name,payload,message", [
    ("t10k-labels-idx1-ubyte.gz", bytes([0, 0, 8, 1]) + (9999).to_bytes(4, "big") + bytes(9999),
     "IDX header says type 0x08 [9999]"),
    ("t10k-labels-idx1-ubyte.gz", bytes([0, 0, 8, 1]) + (10000).to_bytes(4, "big") + bytes(9999),
     "9999 data bytes for [10000]"),
    ("t10k-images-idx3-ubyte.gz", None, "unreadable"),  # a gzip stream cut short
])
def test_corrupt_data_is_one_line_and_exit_2(tmp_path, name, payload, message):
    for f in os.listdir(DATA):
        os.symlink(os.path.join(DATA, f), tmp_path / f)
    os.remove(tmp_path / name)
    if payload is None:
        with open(os.path.join(DATA, name), "rb") as f:
            (tmp_path / name).write_bytes(f.read()[:100000])
    else:
        with gzip.open(tmp_path / name, "wb") as f:
            f.write(payload)
    proc = _run(["--data-dir", str(tmp_path), "--out", str(tmp_path / "out")], timeout=60)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert name in proc.stderr and message in proc.stderr, proc.stderr


def report_module():
    spec = importlib.util.spec_from_file_location("fmnist_report",
                                                  os.path.join(_DIR, "report.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _latest_step(out):
    return int(re.search(r"model\.ckpt-(\d+)", tx.train.latest_checkpoint(out)).group(1))


def _start_long_run(out):
    """(Popen, server pids) of a local-cluster run of 1000 steps writing to `out`, once its
    servers are up (stderr piped)."""
    proc = subprocess.Popen([sys.executable, TRAIN, "--out", str(out), "--max-steps", "1000"]
                            + SHORT, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    for line in proc.stdout:
        if line.startswith("server pids: "):
            pids = [int(p) for p in line.split()[2:5]]
            assert all(_alive(p) for p in pids)
            return proc, pids
    proc.kill()
    raise AssertionError("no server pids: " + proc.stderr.read())


def _wait_for(proc, ready, what):
    """Returns once ready() is true (`proc` must run meanwhile; at most 120 s)."""
    assert wait_until(lambda: ready() or proc.poll() is not None, 120), "no %s in 120 s" % what
    assert proc.poll() is None, proc.communicate()


def _wait_until_training(proc, out):
    """Returns once trace.json (written after the run's 5th step) is there."""
    _wait_for(proc, lambda: os.path.exists(os.path.join(str(out), "trace.json")),
              "training step")


def _interrupt_when(proc, ready, what, times=1):
    """Once ready() is true, Ctrl-C `times` times (50 ms apart) to `proc`; its (stdout, stderr)
    once it ended (killed if the test fails first)."""
    try:
        _wait_for(proc, ready, what)
        for _ in range(times):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.05)
        return proc.communicate(timeout=60)
    finally:
        proc.kill()


@needs_data
@needs_server
def test_interrupt_saves_stops_servers_and_a_rerun_resumes(tmp_path):
    out = str(tmp_path / "run")
    proc, pids = _start_long_run(out)
    _, err = _interrupt_when(proc, lambda: os.path.exists(os.path.join(out, "trace.json")),
                             "training step", times=3)  # as Ctrl-C pressed 3 times
    assert proc.returncode == 130, err
    # One line: where the checkpoint is and how to continue (before: a second, bare
    # "train.py: interrupted" line; a second Ctrl-C while saving could end in a traceback).
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    saved = re.fullmatch(r"train\.py: interrupted at step (\d+) of 1000 and saved (\S+); the "
                         r"same command again continues from it", lines[0])
    assert saved, err
    step = int(saved.group(1))
    assert saved.group(2) == tx.train.latest_checkpoint(out)
    assert step >= 5 and _latest_step(out) == step
    assert _wait_gone(pids) == []
    # The traced step: each worker read its own batch and ran its tower's convolutions; Adam
    # updated the variables on the ps.
    trace = json.load(open(os.path.join(out, "trace.json")))["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in trace if e.get("name") == "process_name"}
    placed = {(names[e["pid"]].split("/device")[0], e["args"]["op"]) for e in trace
              if e.get("ph") == "X" and e["args"].get("op") in (
                  "IteratorGetNext", "Conv2DBackpropFilter", "ResourceApplyAdam")}
    assert placed == {("/job:worker/replica:0/task:%d" % t, op) for t in (0, 1)
                      for op in ("IteratorGetNext", "Conv2DBackpropFilter")} | {
                          ("/job:ps/replica:0/task:0", "ResourceApplyAdam")}
    # In process now: the checkpoint of the cluster run continues to --max-steps.
    again = _run(["--out", out, "--cluster", "none", "--max-steps", str(step + 3)] + SHORT)
    assert again.returncode == 0, again.stderr
    assert re.search(r"resumed from %s\S* at step %d\n" % (
        re.escape(os.path.join(out, "model.ckpt-%d" % step)), step), again.stdout), again.stdout
    assert _latest_step(out) == step + 3
    assert again.stdout.strip().splitlines()[-1].startswith("test_accuracy=0.")
    # One row for the epoch, over the steps of both runs: the interrupted run kept its part
    # (the losses of its steps that came back: all `step`, or all but the interrupted one).
    history = json.load(open(os.path.join(out, "history.json")))
    assert [h["step"] for h in history] == [step + 3]
    losses = history[0]["step_losses"]
    assert step + 2 <= len(losses) <= step + 3, (len(losses), step)
    assert losses[0] > 2.0  # the first step's loss, near ln(10) = 2.30 from the Glorot init
    assert history[0]["loss"] == pytest.approx(np.mean(losses), rel=1e-9)
    assert "partial" not in history[0]
    # Both runs' checkpoints are kept; TensorBoard events: the graph and the scalars.
    state = tx.train.get_checkpoint_state(out)
    assert [re.search(r"ckpt-(\d+)", p).group(1) for p in state.all_model_checkpoint_paths] == [
        str(step), str(step + 3)]
    tags, graphs = set(), 0
    for name in os.listdir(out):
        if name.startswith("events.out.tfevents"):
            for event in tx.train.summary_iterator(os.path.join(out, name)):
                graphs += event.HasField("graph_def")
                tags.update(v.tag for v in event.summary.value)
    assert graphs == 2
    assert {"loss", "accuracy", "learning_rate", "images_per_second", "test_accuracy"} <= tags
    # model.pb: images -> probabilities, no variables left; rows of probabilities sum to 1.
    graph_def = tx.GraphDef()
    with open(os.path.join(out, "model.pb"), "rb") as f:
        graph_def.ParseFromString(f.read())
    ops = {n.op for n in graph_def.node}
    assert not ops & {"VarHandleOp", "VariableV2", "ReadVariableOp", "RandomUniform"}
    with tx.Graph().as_default():
        tx.import_graph_def(graph_def, name="")
        with tx.Session() as sess:
            probs = sess.run("probabilities:0", {"images:0": np.full([3, 28, 28, 1], 128.0,
                                                                     np.float32)})
    assert probs.shape == (3, 10)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    assert open(os.path.join(out, "labels.txt")).read().splitlines()[0] == "T-shirt/top"


@needs_data
def test_interrupted_evaluation_is_done_by_the_resumed_run(tmp_path):
    # In process, one tower (the cluster line says so in the singular). Ctrl-C during the
    # evaluation of an epoch whose steps are all done: the resumed run evaluates that epoch, and
    # history.json and report.md have it once (before: its row was lost).
    out = str(tmp_path / "run")
    history_path = os.path.join(out, "history.json")
    cmd = ["--cluster", "none", "--workers", "1", "--out", out, "--max-steps", "2",
           "--batch-size", "16"]
    proc = subprocess.Popen([sys.executable, TRAIN] + cmd + ["--eval-examples", "10000"],
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    # history.json appears with the checkpoint, before the evaluation.
    stdout, err = _interrupt_when(proc, lambda: os.path.exists(history_path), "checkpoint")
    assert proc.returncode == 130, err
    assert stdout.splitlines()[0] == ("cluster: in process, 1 CPU tower; 1 tower x 16 images, "
                                      "3750 steps/epoch, 2 steps"), stdout
    assert "epoch=" not in stdout  # interrupted in the evaluation
    assert err.strip().splitlines() == [
        "train.py: interrupted at step 2 of 2 and saved %s; the same command again continues "
        "from it" % os.path.join(out, "model.ckpt-2.safetensors")], err
    (pending,) = json.load(open(history_path))
    assert pending["partial"] and pending["step"] == 2 and "test_accuracy" not in pending

    again = _run(cmd + ["--eval-examples", "200"])
    assert again.returncode == 0, again.stderr
    epoch_lines = [ln for ln in again.stdout.splitlines() if ln.startswith("epoch=")]
    assert len(epoch_lines) == 1 and epoch_lines[0].startswith("epoch=1 "), again.stdout
    (entry,) = json.load(open(history_path))
    assert "partial" not in entry and entry["step"] == 2
    assert entry["step_losses"] == pending["step_losses"]
    r = report_module().read_report(os.path.join(out, "report.md"))
    assert [(e["epoch"], e["step"]) for e in r["epochs"]] == [(1, 2)]
    assert r["epochs"][0]["test_accuracy"] == pytest.approx(entry["test_accuracy"], abs=5e-5)
    assert r["test_accuracy"] == pytest.approx(entry["test_accuracy"], abs=5e-5)


@needs_data
def test_a_rerun_without_out_continues_the_interrupted_run(tmp_path):
    # Ctrl-C, then the same command again (as `make demo` twice): the newest run of
    # runs/fashion_mnist/ (relative to the working directory) continues.
    cmd = [sys.executable, TRAIN, "--cluster", "none"] + SHORT
    runs = tmp_path / "runs" / "fashion_mnist"
    proc = subprocess.Popen(cmd + ["--max-steps", "1000"], cwd=tmp_path, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = _interrupt_when(proc, lambda: runs.is_dir() and any(
        (d / "trace.json").exists() for d in runs.iterdir()), "training step")
    assert proc.returncode == 130, err
    (run,) = runs.iterdir()
    step = _latest_step(str(run))

    def again(*flags):
        r = subprocess.run(cmd + list(flags), cwd=tmp_path, env=_env(), capture_output=True,
                           text=True, timeout=240, check=False)
        assert r.returncode == 0, r.stderr
        return r.stdout

    out = again("--max-steps", str(step + 2))  # the run's length may change
    assert out.startswith("continuing the interrupted run %s (pass --out" % run), out
    assert re.search(r"resumed from %s\S* at step %d\n" % (
        re.escape(os.path.join(str(run), "model.ckpt-%d" % step)), step), out), out
    assert list(runs.iterdir()) == [run] and _latest_step(str(run)) == step + 2
    # A finished run (report.md) is not continued; nor is one with other settings.
    again("--max-steps", "1")
    assert len(list(runs.iterdir())) == 2
    newest = max(runs.iterdir())
    os.remove(newest / "report.md")
    time.sleep(1.1)  # a new directory is named by the second
    out = again("--max-steps", "1", "--seed", "2")
    assert not out.startswith("continuing"), out
    assert len(list(runs.iterdir())) == 3
    # A run directory that a running train.py holds (its .lock) is not continued, and an --out
    # naming it is refused.
    newest = max(runs.iterdir())
    os.remove(newest / "report.md")
    with open(newest / ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        busy = _run(["--cluster", "none", "--out", str(newest), "--max-steps", "1"] + SHORT)
        assert busy.returncode == 2, busy.stderr
        assert busy.stderr.strip().splitlines() == [
            "train.py: error: %s is in use by another train.py run" % newest], busy.stderr
        time.sleep(1.1)
        out = again("--max-steps", "1", "--seed", "2")
    assert not out.startswith("continuing"), out
    assert len(list(runs.iterdir())) == 4
    assert ".lock" not in open(max(runs.iterdir()) / "report.md").read()


@needs_data
@needs_server
def test_killed_client_leaves_no_servers(tmp_path):
    proc, pids = _start_long_run(tmp_path)
    try:
        proc.kill()  # no clean-up runs: the servers' parent-death signal stops them
        proc.wait()
    finally:
        proc.kill()
    assert _wait_gone(pids) == []


@needs_data
@needs_server
def test_a_dead_worker_ends_the_run_with_one_line_and_no_servers(tmp_path):
    proc, pids = _start_long_run(tmp_path)
    try:
        _wait_until_training(proc, tmp_path)
        os.kill(pids[2], signal.SIGKILL)  # worker 1, mid-training
        _, err = proc.communicate(timeout=180)
    finally:
        proc.kill()
    assert proc.returncode == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and re.match(r"train\.py: error: \w+Error: ", lines[0]), err
    assert _wait_gone(pids) == []


@needs_data
@needs_server
def test_tf_config_and_grpc_clusters(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    with tx.train.LocalCluster(num_workers=2, num_ps=1, log_dir=str(logs)) as servers:
        tf_config = json.dumps({"cluster": servers.spec,
                                "task": {"type": "worker", "index": 1}})
        a = _run(["--out", str(tmp_path / "a"), "--max-steps", "2"] + SHORT,
                 TF_CONFIG=tf_config)
        b = _run(["--out", str(tmp_path / "b"), "--max-steps", "2", "--cluster",
                  servers.target()] + SHORT)
    for proc in (a, b):
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip().splitlines()[-1].startswith("test_accuracy=")
    assert "TF_CONFIG cluster" in a.stdout and servers.spec["worker"][1] in a.stdout
    assert ("cluster at %s: 1 ps, 2 workers" % servers.target()) in b.stdout
    # The same seed and data on the same towers: the same losses either way, and in process
    # (two CPU towers, one session) as on the cluster.
    c = _run(["--out", str(tmp_path / "c"), "--max-steps", "2", "--cluster", "none"] + SHORT)
    assert c.returncode == 0, c.stderr
    la, lb, lc = [json.load(open(tmp_path / d / "history.json"))[0]["step_losses"]
                  for d in "abc"]
    assert la == lb and len(la) == 2
    np.testing.assert_allclose(lc, la, rtol=1e-5)
