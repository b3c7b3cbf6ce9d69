"""End to end (issue 8): examples/fashion_mnist/train.py on its default local cluster (1 ps + 2
tensorflux-server workers) for a few hundred steps, then everything it wrote is checked another
way: the accuracy it prints, report.md parsed back, report.png's header, the event file's CRCs
(recomputed in Python) and its scalars and graph, the Chrome trace as JSON, the checkpoint
restored into a fresh inference graph (its accuracy on the evaluated images equals the reported
one), `tensorflux predict model.pb` against the restored model's predictions, and no server
process left behind. Skipped when Debian's dataset-fashion-mnist or the binaries are missing.
One training run (50 s at load 10 on 2 cores; killed after 170 s) serves every test of the
module."""

import importlib.util
import json
import os
import re
import struct
import subprocess
import sys

import numpy as np
import pytest

import event_files
import tensorflux as tx

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_EXAMPLE = os.path.join(_REPO, "examples", "fashion_mnist")
_SERVER = tx.train.LocalCluster.server_binary()  # $TX_BIN_DIR's or build/bin's
_BIN = os.path.dirname(_SERVER or "")
STEPS = 300          # of 2 workers x 64 images: 38,400 images, about 0.64 epoch
EVAL_EXAMPLES = 2000  # the first 2000 test images
PREDICT_IMAGES = 300


def _load(name):
    spec = importlib.util.spec_from_file_location("fmnist_" + name,
                                                  os.path.join(_EXAMPLE, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


model = _load("model")
report = _load("report")

pytestmark = [
    pytest.mark.skipif(not all(os.path.isfile(os.path.join(model.DATA_DIR, f))
                               for pair in model.FILES.values() for f in pair),
                       reason="Fashion-MNIST is not installed (Debian's dataset-fashion-mnist)"),
    pytest.mark.skipif(not os.path.isfile(os.path.join(_EXAMPLE, "train.py")),
                       reason="examples/fashion_mnist/train.py is not there yet"),
    pytest.mark.skipif(not _SERVER or not os.access(os.path.join(_BIN, "tensorflux"), os.X_OK),
                       reason="build/bin/tensorflux and tensorflux-server are not built"),
]


def _test_set():
    images, labels = model.data_files(model.DATA_DIR, "test")
    return tx.io.read_idx(images), tx.io.read_idx(labels).astype(np.int64)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("fmnist") / "run")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(tx.__file__)))
    env.pop("TF_CONFIG", None)
    proc = subprocess.run(
        [sys.executable, os.path.join(_EXAMPLE, "train.py"), "--out", out, "--epochs", "1",
         "--max-steps", str(STEPS), "--eval-examples", str(EVAL_EXAMPLES),
         "--server-bin", _SERVER],
        env=env, capture_output=True, text=True, timeout=170, check=False)
    assert proc.returncode == 0, "train.py failed (%d):\n%s\n%s" % (
        proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
    return out, proc.stdout


def test_prints_epoch_lines_and_accuracy(run):
    _, stdout = run
    lines = stdout.strip().splitlines()
    epoch = [ln for ln in lines if ln.startswith("epoch=")]
    assert len(epoch) == 1, stdout
    fields = dict(kv.split("=") for kv in epoch[0].split())
    assert set(fields) >= {"epoch", "loss", "train_accuracy", "test_accuracy", "images_per_sec"}
    assert float(fields["images_per_sec"]) > 0 and 0 < float(fields["loss"]) < 1.0
    found = re.fullmatch(r"test_accuracy=(0\.\d{4})", lines[-1])
    assert found, "last line: %r" % lines[-1]
    assert float(found.group(1)) > 0.80
    for name in model.CLASS_NAMES:  # the per-class table and the confusion matrix
        assert name in stdout


def test_report_files(run):
    out, stdout = run
    r = report.read_report(os.path.join(out, "report.md"))
    assert r["test_accuracy"] == float(stdout.strip().splitlines()[-1].split("=")[1])
    assert r["class_names"] == list(model.CLASS_NAMES)
    cm = r["confusion"]
    assert cm.sum() == EVAL_EXAMPLES
    _, labels = _test_set()
    np.testing.assert_array_equal(cm.sum(axis=1), np.bincount(labels[:EVAL_EXAMPLES], minlength=10))
    assert r["test_accuracy"] == pytest.approx(np.trace(cm) / EVAL_EXAMPLES, abs=5e-5)
    assert {n: tuple(v) for n, v in r["per_class"].items()} == {
        n: (cm[i].sum(), cm[i, i]) for i, n in enumerate(model.CLASS_NAMES)}
    assert len(r["epochs"]) == 1 and r["epochs"][0]["epoch"] == 1
    assert {"report.png", "model.pb"} <= set(r["files"])
    with open(os.path.join(out, "report.png"), "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", head[16:24]) == report.PNG_SIZE


def test_event_file(run):
    out, _ = run
    paths = [os.path.join(d, f) for d, _, fs in os.walk(out) for f in fs
             if f.startswith("events.out.tfevents.")]
    assert paths, os.listdir(out)
    events = [e for p in paths for e in event_files.read_events(p)]  # CRCs checked
    values = event_files.scalars(events)
    for tag in ("loss", "accuracy", "learning_rate", "images_per_second"):
        assert any(t.split("/")[-1] == tag for t in values), (tag, sorted(values))
    loss = next(v for t, v in values.items() if t.split("/")[-1] == "loss")
    assert max(step for step, _ in loss) <= STEPS and all(np.isfinite(x) for _, x in loss)
    g = event_files.graph_def(events)
    assert g is not None and {"conv1/kernel", "logits/kernel"} <= {n.name for n in g.node}


def test_chrome_trace(run):
    out, _ = run
    with open(os.path.join(out, "trace.json")) as f:
        trace = json.load(f)
    complete = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    assert complete and all(e["dur"] >= 0 for e in complete)
    assert any("Conv2D" in json.dumps(e) for e in complete)


def _checkpoint_names(path):
    """Tensor names and shapes in a safetensors file's JSON header."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    return {k: v["shape"] for k, v in header.items() if k != "__metadata__"}


@pytest.fixture(scope="module")
def restored(run):
    """Probabilities [EVAL_EXAMPLES, 10] of the first test images from the latest checkpoint,
    restored into a fresh inference graph built by model.cnn_logits."""
    out, _ = run
    ckpt = tx.train.latest_checkpoint(out)
    assert ckpt is not None, os.listdir(out)
    images, _ = _test_set()
    with tx.Graph().as_default():
        x = tx.placeholder(tx.float32, [None, 28, 28, 1])
        probs = tx.nn.softmax(model.cnn_logits(x * (1.0 / 255.0), training=False))
        variables = tx.global_variables()
        stored = _checkpoint_names(ckpt + ".safetensors" if os.path.exists(
            ckpt + ".safetensors") else ckpt)
        for v in variables:
            assert stored.get(v.op.name) == v.shape.as_list(), (v.op.name, sorted(stored))
        with tx.Session() as sess:
            tx.train.Saver(variables).restore(sess, ckpt)
            return sess.run(probs, {x: images[:EVAL_EXAMPLES, :, :, None].astype(np.float32)})


def test_checkpoint_restores_to_the_reported_figures(run, restored):
    out, _ = run
    _, labels = _test_set()
    acc = np.mean(restored.argmax(1) == labels[:EVAL_EXAMPLES])
    assert acc > 0.80
    reported = report.read_report(os.path.join(out, "report.md"))
    # The in-session evaluation (sharded over the workers) made the report's confusion matrix;
    # the restored checkpoint gives the same one (one image may flip on a near tie).
    cm = report.confusion_matrix(labels[:EVAL_EXAMPLES], restored.argmax(1), 10)
    assert np.abs(cm - reported["confusion"]).sum() <= 2, (cm, reported["confusion"])
    assert acc == pytest.approx(reported["test_accuracy"], abs=1.01 / EVAL_EXAMPLES)


def test_predict_cli_agrees_with_the_checkpoint(run, restored, tmp_path):
    out, _ = run
    images, _ = _test_set()
    npy = str(tmp_path / "test_images.npy")
    np.save(npy, images[:PREDICT_IMAGES])
    proc = subprocess.run([os.path.join(_BIN, "tensorflux"), "predict",
                           os.path.join(out, "model.pb"), "--images", npy, "--batch_size", "128"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = [ln.split("\t") for ln in proc.stdout.strip().splitlines()]
    assert [r[0] for r in rows] == ["%s[%d]" % (npy, i) for i in range(PREDICT_IMAGES)]
    want = restored[:PREDICT_IMAGES]
    assert [r[1] for r in rows] == [model.CLASS_NAMES[c] for c in want.argmax(1)]
    np.testing.assert_allclose([float(r[2]) for r in rows], want.max(1), atol=1e-4)


def _server_cmdlines(addresses=(), pids=None):
    """Command lines of the running tensorflux-server processes (of `pids`, default all) that
    name one of `addresses` (HOST:PORT; any process when empty)."""
    found = []
    for pid in pids or filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        cmd = " ".join(argv)
        if os.path.basename(argv[0]) == "tensorflux-server" and (not addresses or any(
                re.search(re.escape(a) + r"(?!\d)", cmd) for a in addresses)):
            found.append("%s: %s" % (pid, cmd))
    return found


def test_no_server_left_running(run):
    out, stdout = run
    addresses = set()
    for d, _, files in os.walk(out):
        for name in files:
            if name.endswith(".log"):
                with open(os.path.join(d, name), errors="replace") as f:
                    addresses.update(re.findall(r"listening on (?:grpc://)?(\S+)", f.read()))
    assert len(addresses) == 3, addresses  # 1 ps + 2 workers were started
    assert _server_cmdlines(addresses) == []
    found = re.search(r"^server pids: ([\d ]+)", stdout, re.M)
    assert found, stdout
    pids = found.group(1).split()
    assert len(pids) == 3 and _server_cmdlines(pids=pids) == []  # none of them is a server now
