"""bench/peer/peer.py's helpers (the benchmark itself runs in make bench): images/s as the median
over windows after the first 20 steps, the epoch's batches, the interleaved windows of the two
systems and their paired ratio, and the peer worker's failure paths (exit, stall)."""

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


def test_chunks_are_the_warmup_then_windows(peer):
    assert peer.chunks(75, 20) == [(0, 20), (20, 40), (40, 60), (60, 75)]
    assert peer.chunks(10, 20) == [(0, 10)]  # all warm-up
    assert peer.chunks(20, 7) == [(0, 20)]
    assert peer.chunks(0, 5) == []


def test_paired_ratio_compares_each_window_with_its_neighbour(peer):
    # After 20 warm-up steps, 3 windows of 2 steps. Ours: 1, 1 | 2, 2 | 1, 1 seconds; theirs:
    # 2, 2 | 2, 2 | 3, 3: window ratios (theirs / ours) 2, 1, 3 -> median 2. The machine being
    # twice as slow in our second window does not move the median as a run-wide mean would.
    ours = [9.0] * 20 + [1, 1, 2, 2, 1, 1]
    theirs = [0.1] * 20 + [2, 2, 2, 2, 3, 3]
    assert peer.paired_ratio(ours, theirs, 2) == pytest.approx(2.0)
    # A tail shorter than the window is left out: one more step of ours at 1 s, theirs at 100 s.
    assert peer.paired_ratio(ours + [1], theirs + [100], 2) == pytest.approx(2.0)
    assert np.isnan(peer.paired_ratio([1.0] * 20, [1.0] * 20, 5))  # nothing after warm-up


class _FakeTrainer:
    def __init__(self, name, log, seconds):
        self.name, self.log, self.seconds = name, log, seconds

    def train(self, batch_indices):
        self.log.append((self.name, [int(b[0]) for b in batch_indices]))
        return [self.seconds] * len(batch_indices)


def test_interleave_alternates_which_system_goes_first(peer):
    log = []
    order = [np.array([i]) for i in range(45)]
    ours, theirs = _FakeTrainer("tx", log, 0.5), _FakeTrainer("torch", log, 1.5)
    a, b = peer.interleave([ours, theirs], order, 10)
    assert a == [0.5] * 45 and b == [1.5] * 45
    # chunks: warm-up 0-19, then 20-29, 30-39, 40-44; each pair's first system alternates.
    assert [(name, idx[0], idx[-1]) for name, idx in log] == [
        ("tx", 0, 19), ("torch", 0, 19), ("torch", 20, 29), ("tx", 20, 29),
        ("tx", 30, 39), ("torch", 30, 39), ("torch", 40, 44), ("tx", 40, 44)]


def test_interleave_refuses_a_short_reply(peer):
    class Short(_FakeTrainer):
        def train(self, batch_indices):
            return [1.0]
    with pytest.raises(RuntimeError, match="1 step times for 20 steps"):
        peer.interleave([_FakeTrainer("tx", [], 1.0), Short("torch", [], 1.0)],
                        [np.array([i]) for i in range(30)], 10)


def test_interleave_rotates_which_of_several_systems_goes_first(peer):
    log = []
    order = [np.array([i]) for i in range(50)]
    systems = [_FakeTrainer(n, log, s) for n, s in (("tx", 1.0), ("a", 2.0), ("b", 3.0))]
    times = peer.interleave(systems, order, 10)
    assert times == [[1.0] * 50, [2.0] * 50, [3.0] * 50]
    assert [(name, idx[0]) for name, idx in log] == [
        ("tx", 0), ("a", 0), ("b", 0), ("a", 20), ("b", 20), ("tx", 20),
        ("b", 30), ("tx", 30), ("a", 30), ("tx", 40), ("a", 40), ("b", 40)]


def test_peer_worker_that_exits_or_stalls_ends_the_benchmark(peer, capsys, monkeypatch):
    import sys
    dead = peer.PeerWorker([sys.executable, "-c", "import sys; sys.exit(2)"], None)
    with pytest.raises(SystemExit) as e:
        dead.call(op="init", model="mlp")
    assert e.value.code == 2  # torch missing in the worker: its status, as the docstring says
    assert "exited with status 2" in capsys.readouterr().err
    monkeypatch.setattr(peer.PeerWorker, "REPLY_TIMEOUT", 0.5)
    stalled = peer.PeerWorker([sys.executable, "-c", "import time; time.sleep(30)"], None)
    with pytest.raises(SystemExit) as e:
        stalled.call(op="init", model="mlp")
    assert e.value.code == 1
    assert "sent no reply within" in capsys.readouterr().err
    assert stalled.proc.poll() is not None  # killed, not left behind
    echo = peer.PeerWorker([sys.executable, "-c",
                             "import sys, json\nfor l in sys.stdin:\n"
                             "    print(json.dumps({'times': [0.25] * json.loads(l)['count']}),"
                             " flush=True)"], None)
    assert echo.call(op="train", start=0, count=3) == {"times": [0.25, 0.25, 0.25]}
    echo.close()
    assert echo.proc.returncode == 0


def test_peer_worker_reply_cut_off_mid_line_ends_at_the_deadline(peer, capsys, monkeypatch):
    import sys
    monkeypatch.setattr(peer.PeerWorker, "REPLY_TIMEOUT", 0.5)
    partial = peer.PeerWorker([sys.executable, "-c",
                                "import sys, time\nsys.stdout.write('{\"ti'); sys.stdout.flush()\n"
                                "time.sleep(30)"], None)
    with pytest.raises(SystemExit) as e:
        partial.call(op="init", model="mlp")
    assert e.value.code == 1
    assert "sent no reply within" in capsys.readouterr().err
    assert partial.proc.poll() is not None


def test_peer_worker_replies_alone_on_its_stdout(peer):
    """What else the worker process writes to its stdout (a library's print, oneDNN's verbose
    lines from C) goes to its stderr, not into the replies."""
    import subprocess
    import sys
    script = (
        "import importlib.util, os, sys, types\n"
        "spec = importlib.util.spec_from_file_location('p', %r)\n"
        "p = importlib.util.module_from_spec(spec); spec.loader.exec_module(p)\n"
        "class Fake:\n"
        "    def __init__(self, *a):\n"
        "        print('noise'); sys.stdout.flush(); os.write(1, b'C noise\\n')\n"
        "p.make_trainer = lambda kind, name, data, args: Fake()\n"
        "p.load = lambda files: [[0] * 256]\n"
        "p.peer_worker(types.SimpleNamespace(files=None, seed=1, threads=1, peer_worker='torch',\n"
        "                                    channels_last=False, steps=1, tf_inter_op=1))\n"
        % _PEER)
    out = subprocess.run([sys.executable, "-c", script], input='{"op": "init", "model": "mlp"}\n',
                         capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout == "{}\n"
    assert "noise" in out.stderr and "C noise" in out.stderr
