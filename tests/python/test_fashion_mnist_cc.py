"""examples/fashion_mnist/train.cc (build/bin/example_fashion_mnist): a short run on the real
data (--max-steps) whose loss falls and whose test accuracy is far above chance (0.1), and the exit
status 2 with a clear message for missing or unreadable data files and bad flags."""

import gzip
import os
import re
import subprocess

import pytest

from conftest import built_binary

FASHION_DIR = "/usr/share/datasets/fashion-mnist"
NAMES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
         "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")


def _run(*args, timeout=60):
    return subprocess.run([built_binary("example_fashion_mnist"), *args], capture_output=True,
                          text=True, timeout=timeout)


def test_short_run_learns():
    if not all(os.path.isfile(os.path.join(FASHION_DIR, n)) for n in NAMES):
        pytest.skip("Debian's dataset-fashion-mnist is not installed")
    r = _run("--max-steps", "80", "--log-every", "20", "--batch-size", "64", timeout=240)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    losses = [float(m.group(1)) for m in map(re.compile(r"^step=\d+ loss=([0-9.]+) ").match, lines)
              if m]
    assert len(losses) == 4, r.stdout
    # Mean loss of steps 1-20 (from ln(10) = 2.30 at the start) against steps 61-80.
    assert losses[0] > 1.2 and losses[-1] < 0.75 * losses[0], losses
    epoch = re.match(r"^epoch=1 loss=([0-9.]+) train_accuracy=([0-9.]+) test_accuracy=([0-9.]+) "
                     r"images_per_sec=([0-9.]+)$", lines[-2])
    assert epoch, r.stdout
    assert float(epoch.group(2)) > 0.3  # training batches, dropout on
    assert float(epoch.group(4)) > 0
    last = re.match(r"^test_accuracy=(0\.\d{4})$", lines[-1])
    assert last and last.group(1) == epoch.group(3), r.stdout
    assert float(last.group(1)) > 0.55, r.stdout  # chance is 0.1


def test_missing_data_is_exit_2(tmp_path):
    r = _run("--data-dir", str(tmp_path))
    assert r.returncode == 2
    assert "Fashion-MNIST not found" in r.stderr and "dataset-fashion-mnist" in r.stderr
    for name in NAMES:
        assert os.path.join(str(tmp_path), name) in r.stderr
    assert r.stdout == ""


def test_corrupt_data_is_exit_2(tmp_path):
    for name in NAMES:  # gzip files whose content is not IDX
        with gzip.open(tmp_path / name, "wb") as f:
            f.write(b"not an IDX file at all")
    r = _run("--data-dir", str(tmp_path))
    assert r.returncode == 2, r.stderr
    assert "cannot read the Fashion-MNIST files in " + str(tmp_path) in r.stderr
    assert "test_accuracy" not in r.stdout


@pytest.mark.parametrize("args,needle", [(["--epochs", "0"], "--epochs must be a positive"),
                                         (["--batch-size", "x"], "--batch-size must be"),
                                         (["--bogus", "1"], "unknown flag --bogus"),
                                         (["--max-steps"], "needs a value")])
def test_bad_flags_are_exit_2(args, needle):
    r = _run(*args)
    assert r.returncode == 2
    assert needle in r.stderr and "usage:" in r.stderr
