"""bench/peer/peer.py's timing and batching helpers (the benchmark itself runs in make bench):
images/s as the median over windows after the first 20 steps, and the epoch's batches."""

import importlib.util
import os

import numpy as np
import pytest

_PEER = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "peer", "peer.py")


@pytest.fixture(scope="module")
def peer():
    spec = importlib.util.spec_from_file_location("bench_peer", _PEER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_summarize_skips_warmup_and_takes_the_median_window(peer):
    assert peer.WARMUP == 20
    # 20 slow warm-up steps (ignored), then windows of 3 steps: 0.3 s, 0.6 s and 0.15 s for
    # 3 x 64 images -> 640, 320 and 1280 images/s; the median is 640. A 10th step after the
    # last full window is left out.
    steps = [5.0] * 20 + [0.1] * 3 + [0.2] * 3 + [0.05] * 3 + [9.0]
    assert peer.summarize(steps, 64, 3) == pytest.approx(640.0)
    # A window longer than what is left is cut to it: one window of 3 steps of 0.1 s, 30 images.
    assert peer.summarize([1.0] * 20 + [0.1] * 3, 10, 50) == pytest.approx(100.0)


def test_batches_cover_the_epoch_once_in_a_seeded_order(peer):
    a = peer.batches(1000, 64, seed=3, steps=0)
    assert len(a) == 1000 // 64  # the partial last batch is dropped
    assert all(len(b) == 64 for b in a)
    flat = np.concatenate(a)
    assert len(np.unique(flat)) == len(flat)  # no index twice
    assert not np.array_equal(flat, np.sort(flat))  # shuffled
    b = peer.batches(1000, 64, seed=3, steps=0)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))  # same seed, same order
    c = peer.batches(1000, 64, seed=4, steps=5)
    assert len(c) == 5 and not np.array_equal(c[0], a[0])
