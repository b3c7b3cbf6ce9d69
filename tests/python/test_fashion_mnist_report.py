"""examples/fashion_mnist/report.py: the confusion matrix against a hand-worked example and a
Python loop, per-class accuracy, the terminal tables, and write_report's report.md (parsed back
to the figures it was given) and report.png (a PNG of the documented size)."""

import importlib.util
import os
import struct

import numpy as np
import pytest

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_spec = importlib.util.spec_from_file_location(
    "fashion_report", os.path.join(_REPO, "examples", "fashion_mnist", "report.py"))
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)

NAMES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
         "Bag", "Ankle boot")
# Hand-worked: class 0 -> {0, 1}, class 1 -> {1}, class 2 -> {2, 0, 2}.
LABELS = [0, 0, 1, 2, 2, 2]
PREDS = [0, 1, 1, 2, 0, 2]
HAND = [[1, 1, 0],
        [0, 1, 0],
        [1, 0, 2]]


def test_confusion_matrix_hand_worked():
    cm = report.confusion_matrix(np.array(LABELS, np.int32), PREDS, 3)
    assert cm.dtype == np.int64 and cm.shape == (3, 3)
    np.testing.assert_array_equal(cm, HAND)
    np.testing.assert_array_equal(report.confusion_matrix([], [], 2), np.zeros((2, 2)))


def test_confusion_matrix_matches_a_loop():
    rng = np.random.default_rng(3)
    labels, preds = rng.integers(0, 10, 500), rng.integers(0, 10, 500)
    expected = np.zeros((10, 10), np.int64)
    for t, p in zip(labels, preds):
        expected[t][p] += 1
    np.testing.assert_array_equal(report.confusion_matrix(labels, preds, 10), expected)


@pytest.mark.parametrize("labels,preds,match", [
    ([0, 1], [0], "2 labels but 1 predictions"),
    ([0, 3], [0, 1], r"labels must lie in \[0, 3\), found \[0, 3\]"),
    ([0, 1], [-1, 1], "predictions must lie"),
    ([0.0, 1.0], [0, 1], "labels must be integers"),
])
def test_confusion_matrix_errors(labels, preds, match):
    with pytest.raises(ValueError, match=match):
        report.confusion_matrix(labels, preds, 3)


def test_per_class_accuracy_and_tables():
    acc = report.per_class_accuracy(HAND)
    np.testing.assert_allclose(acc, [1 / 2, 1 / 1, 2 / 3])
    assert report.accuracy(HAND) == pytest.approx(4 / 6)
    empty = report.per_class_accuracy([[2, 0], [0, 0]])
    assert empty[0] == 1.0 and np.isnan(empty[1])
    lines = report.format_per_class(HAND, ["a", "bb", "ccc"]).splitlines()
    assert lines[0].split() == ["class", "samples", "correct", "accuracy"]
    assert [ln.split() for ln in lines[1:]] == [["a", "2", "1", "0.5000"],
                                               ["bb", "1", "1", "1.0000"],
                                               ["ccc", "3", "2", "0.6667"]]
    lines = report.format_confusion(HAND, ["a", "bb", "ccc"]).splitlines()
    assert lines[0].split()[-3:] == ["0", "1", "2"]
    assert [ln.split() for ln in lines[1:]] == [["0", "a", "1", "1", "0"],
                                               ["1", "bb", "0", "1", "0"],
                                               ["2", "ccc", "1", "0", "2"]]
    with pytest.raises(ValueError, match="2 class names for a 3x3"):
        report.format_per_class(HAND, ["a", "b"])
    with pytest.raises(ValueError, match="square"):
        report.per_class_accuracy([[1, 2, 3]])


def _history():
    return [
        {"epoch": 1, "step": 4, "loss": 0.61234, "train_accuracy": 0.781, "test_accuracy": 0.8412,
         "images_per_sec": 2345.67, "learning_rate": 1e-3,
         "step_losses": [2.3, 1.1, 0.8, 0.6]},
        {"epoch": 2, "step": 7, "loss": 0.40001, "train_accuracy": 0.8555, "test_accuracy": None,
         "images_per_sec": 2401.0, "learning_rate": 5.5e-4, "step_losses": [0.5, 0.45, 0.4]},
    ]


def test_write_report_parses_back(tmp_path):
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 10, 1000)
    preds = np.where(rng.random(1000) < 0.85, labels, rng.integers(0, 10, 1000))
    cm = report.confusion_matrix(labels, preds, 10)
    (tmp_path / "model.ckpt-10.index").write_bytes(b"x" * 7)
    (tmp_path / "events").mkdir()
    config = {"epochs": 2, "batch_size": 64, "cluster": "local (1 ps | 2 workers)"}
    md, png = report.write_report(str(tmp_path), _history(), cm, NAMES, config)
    assert md == str(tmp_path / "report.md") and png == str(tmp_path / "report.png")

    r = report.read_report(md)
    assert r["config"] == {"batch_size": "64", "cluster": "local (1 ps | 2 workers)",
                           "epochs": "2"}
    assert r["epochs"] == [
        {"epoch": 1, "step": 4, "loss": 0.6123, "train_accuracy": 0.781, "test_accuracy": 0.8412,
         "images_per_sec": 2345.7, "learning_rate": 1e-3},
        {"epoch": 2, "step": 7, "loss": 0.4, "train_accuracy": 0.8555, "test_accuracy": None,
         "images_per_sec": 2401.0, "learning_rate": 5.5e-4}]
    assert r["test_accuracy"] == pytest.approx(np.mean(labels == preds), abs=5e-5)
    assert r["class_names"] == list(NAMES)
    np.testing.assert_array_equal(r["confusion"], cm)
    for c, name in enumerate(NAMES):
        assert r["per_class"][name] == (np.sum(labels == c), np.sum((labels == c) & (preds == c)))
    assert r["files"] == ["events/", "model.ckpt-10.index", "report.md", "report.png"]
    text = open(md, encoding="utf-8").read()
    assert "- `model.ckpt-10.index` (7 bytes)" in text
    assert "- `report.png` (%d bytes)" % os.path.getsize(png) in text


def test_count_is_singular_for_one():
    assert [report.count(n, "worker") for n in (0, 1, 2)] == ["0 workers", "1 worker",
                                                             "2 workers"]
    assert report.count(1, "CPU tower") == "1 CPU tower"
    assert [report.count(n, "ps") for n in (1, 3)] == ["1 ps", "3 ps"]


def test_loss_curve_is_on_the_global_step():
    # 4 steps an epoch. Epoch 1 ran its 4 steps; epoch 2 was cut short by --max-steps at step 6
    # (2 of its 4 steps): its losses end half-way through the epoch, not stretched over it.
    history = [{"epoch": 1, "step": 4, "step_losses": [2.3, 1.1, 0.8, 0.6]},
               {"epoch": 2, "step": 6, "step_losses": [0.5, 0.45]}]
    xs, ys = report.loss_curve(history, steps_per_epoch=4)
    assert ys == [2.3, 1.1, 0.8, 0.6, 0.5, 0.45]
    np.testing.assert_allclose(xs, [0.25, 0.5, 0.75, 1.0, 1.25, 1.5])
    xs, _ = report.loss_curve(history)  # no steps_per_epoch: x in steps
    assert xs == [1, 2, 3, 4, 5, 6]
    # A resumed run that lost the interrupted step's loss (checkpointed at step 3, 2 losses
    # came back): the curve stays on the steps, ending at the epoch's last step.
    xs, _ = report.loss_curve([{"epoch": 1, "step": 4, "step_losses": [2.3, 1.1, 0.6]}], 4)
    np.testing.assert_allclose(xs, [0.5, 0.75, 1.0])


def test_report_png_is_a_png_of_the_documented_size(tmp_path):
    _, png = report.write_report(str(tmp_path), _history(), np.array(HAND), ["a", "b", "c"], {})
    with open(png, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    assert struct.unpack(">II", head[16:24]) == report.PNG_SIZE
    image = pytest.importorskip("matplotlib.image").imread(png)
    assert image.shape[:2] == (report.PNG_SIZE[1], report.PNG_SIZE[0])
    assert image[..., :3].std() > 0.05  # something was drawn
