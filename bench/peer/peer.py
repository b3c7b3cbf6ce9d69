"""TensorFlux against PyTorch on the Fashion-MNIST MLP and CNN, in one run (issue 8, make bench).

    PYTHONPATH=build/python /usr/bin/python3 bench/peer/peer.py [--models mlp,cnn] [--steps N]
                                                                [--rounds N]

Both systems train the same models (examples/fashion_mnist/model.py: mlp_logits, 784-256-ReLU-10
at batch 128; cnn_logits without dropout or L2, conv32-pool-conv64-pool-dense128-dense10 at
batch 64) with Glorot-uniform kernels, zero biases, Adam (lr 1e-3, eps 1e-8) and softmax cross
entropy, on the same batches (one epoch of the training set in the same shuffled order, fed from
numpy arrays in both), then evaluate test accuracy. PyTorch (Debian's python3-torch) runs in a
subprocess with torch.set_num_threads(2) and OMP_WAIT_POLICY=PASSIVE, as shared/PEERS.md says is
fair on 2 cores: its OpenMP threads otherwise spin against OpenBLAS's. TensorFlux runs with its
defaults.

Speed: each step's wall time (batch indexing, the feed and the step) is taken. The two systems
train at the same time, in windows of --window steps run back to back: TensorFlux's window k,
then PyTorch's window k (the order alternates from one window to the next), each process waiting
while the other runs. This machine's speed changes from one second to the next by up to 2x (a
shared VM), so two runs one after the other can differ by more than the systems do; windows run
next to each other see the same machine. The ratio is the median over windows after the first
20 steps of (PyTorch's time / TensorFlux's time for the window's batches); images/s of each is
the median over those windows. Prints one table row per model and round (images/s of each, the
ratio, one-epoch test accuracy of each), with --rounds N > 1 the median ratio over the rounds,
and the machine's load average at the start and end: figures taken with a load above ~0.5 are
not final.
Exit status 2 when the data or torch is missing.
"""

import argparse
import json
import os
import select
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "fashion_mnist"))
DATA_DIR = "/usr/share/datasets/fashion-mnist"  # model.DATA_DIR; the PyTorch process does not
#                                                 import tensorflux (model.py does)
BATCH = {"mlp": 128, "cnn": 64}
WARMUP = 20


def load(files):
    """(train_x, train_y, test_x, test_y): float32 [N, 28, 28, 1] in [0, 1], int32 [N], from the
    IDX files (train images, train labels, test images, test labels)."""
    from idx import read_idx as idx  # examples/fashion_mnist/idx.py: numpy only

    out = []
    for images, labels in (files[0:2], files[2:4]):
        out.append((idx(images).astype(np.float32) * np.float32(1.0 / 255.0))[..., None])
        out.append(idx(labels).astype(np.int32))
    return out


def batches(n, batch_size, seed, steps):
    """The index arrays of one epoch in a seeded shuffled order (the last partial batch dropped),
    cut to `steps` batches when steps > 0."""
    order = np.random.default_rng(seed).permutation(n)
    out = [order[s:s + batch_size] for s in range(0, n - batch_size + 1, batch_size)]
    return out[:steps] if steps > 0 else out


def window_seconds(step_seconds, window, steps=None):
    """(seconds of each full window of `window` steps after the first WARMUP steps, the window
    length used): of the first `steps` steps after WARMUP when given, and a window longer than
    what is left is cut to it. The epoch's tail shorter than a window is left out."""
    t = np.asarray(step_seconds[WARMUP:])
    n = len(t) if steps is None else min(steps, len(t))
    window = max(1, min(window, n))
    return [t[i:i + window].sum() for i in range(0, n - window + 1, window)], window


def summarize(step_seconds, batch_size, window):
    """Median images/s over windows of `window` steps after the first WARMUP steps."""
    sums, window = window_seconds(step_seconds, window)
    return float(np.median([batch_size * window / s for s in sums])) if sums else float("nan")


class TensorFluxTrainer:
    """One model trained in TensorFlux in this process: train(batches) -> seconds per step."""

    def __init__(self, name, data, seed):
        import model  # examples/fashion_mnist/model.py
        import tensorflux as tx

        self.data, self.bs = data, BATCH[name]
        graph = tx.Graph()
        with graph.as_default():
            tx.set_random_seed(seed)
            self.x = tx.placeholder(tx.float32, [None, 28, 28, 1], name="x")
            self.y = tx.placeholder(tx.int32, [None], name="y")
            logits = (model.mlp_logits(self.x, seed=seed) if name == "mlp" else
                      model.cnn_logits(self.x, training=False, dropout_rate=0.0, seed=seed))
            loss = tx.losses.sparse_softmax_cross_entropy(self.y, logits)
            self.train_op = tx.train.AdamOptimizer(1e-3, epsilon=1e-8).minimize(loss)
            self.n_correct = tx.reduce_sum(tx.cast(
                tx.equal(tx.argmax(logits, 1, output_type=tx.int32), self.y), tx.int32))
            init = tx.global_variables_initializer()
        self.sess = tx.Session(graph=graph)
        self.sess.run(init)

    def train(self, batch_indices):
        train_x, train_y = self.data[0], self.data[1]
        times = []
        for idx in batch_indices:
            t0 = time.perf_counter()
            self.sess.run(self.train_op, {self.x: train_x[idx], self.y: train_y[idx]})
            times.append(time.perf_counter() - t0)
        return times

    def accuracy(self):
        test_x, test_y = self.data[2], self.data[3]
        right = sum(int(self.sess.run(self.n_correct, {self.x: test_x[i:i + 1000],
                                                       self.y: test_y[i:i + 1000]}))
                    for i in range(0, len(test_x), 1000))
        return right / len(test_x)

    def close(self):
        self.sess.close()


class TorchTrainer:
    """The same model in PyTorch (in the worker process): train(batches) -> seconds per step."""

    def __init__(self, name, data, seed, threads, channels_last):
        import torch
        from torch import nn

        self.torch = torch
        torch.set_num_threads(threads)
        torch.manual_seed(seed)
        self.data = data
        if name == "mlp":
            net = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
        else:
            net = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(),
                                nn.Linear(128, 10))
        for m in net.modules():
            if isinstance(m, (nn.Linear, nn.Conv2d)):
                nn.init.xavier_uniform_(m.weight)
                nn.init.zeros_(m.bias)
        self.memory_format = torch.channels_last if channels_last else torch.contiguous_format
        self.net = net.to(memory_format=self.memory_format)
        self.opt = torch.optim.Adam(net.parameters(), lr=1e-3, eps=1e-8)
        self.loss_fn = nn.CrossEntropyLoss()

    def images(self, a):  # NHWC numpy -> NCHW tensor
        return self.torch.from_numpy(np.ascontiguousarray(a.transpose(0, 3, 1, 2))).contiguous(
            memory_format=self.memory_format)

    def train(self, batch_indices):
        train_x, train_y = self.data[0], self.data[1]
        self.net.train()
        times = []
        for idx in batch_indices:
            t0 = time.perf_counter()
            xb, yb = self.images(train_x[idx]), self.torch.from_numpy(train_y[idx]).long()
            self.opt.zero_grad(set_to_none=True)
            self.loss_fn(self.net(xb), yb).backward()
            self.opt.step()
            times.append(time.perf_counter() - t0)
        return times

    def accuracy(self):
        test_x, test_y = self.data[2], self.data[3]
        self.net.eval()
        right = 0
        with self.torch.no_grad():
            for i in range(0, len(test_x), 1000):
                pred = self.net(self.images(test_x[i:i + 1000])).argmax(1).numpy()
                right += int((pred == test_y[i:i + 1000]).sum())
        return right / len(test_x)

    def close(self):
        pass


def torch_worker(args):
    """--torch-worker: serves one JSON request per stdin line, one JSON reply per stdout line:
    {"op": "init", "model": m} -> {}, {"op": "train", "start": s, "count": k} -> {"times": [...]}
    (batches s .. s + k - 1 of the epoch's order), {"op": "accuracy"} -> {"test_accuracy": a}.
    Exits at end of input. The replies go to the original stdout alone: whatever else writes to
    file descriptor 1 (torch, oneDNN's verbose mode, a print) goes to stderr instead."""
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.stderr.write("PyTorch not found: install Debian's python3-torch\n")
        sys.exit(2)
    data = load(args.files)
    trainer, order = None, None
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "init":
            trainer = TorchTrainer(req["model"], data, args.seed, args.threads,
                                   args.channels_last)
            order = batches(len(data[0]), BATCH[req["model"]], args.seed, args.steps)
            reply = {}
        elif req["op"] == "train":
            reply = {"times": trainer.train(order[req["start"]:req["start"] + req["count"]])}
        else:
            reply = {"test_accuracy": trainer.accuracy()}
        out.write(json.dumps(reply) + "\n")
        out.flush()


class TorchWorker:
    """Driver side of torch_worker: this script in a subprocess with the peer's fair settings
    (PEERS.md: 2 threads, OMP_WAIT_POLICY=PASSIVE). Each reply is awaited at most
    REPLY_TIMEOUT seconds; a worker that exits or stalls ends the benchmark with its message."""

    REPLY_TIMEOUT = 600

    def __init__(self, cmd, env):
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self._fd, self._buf = self.proc.stdout.fileno(), b""

    def _reply_line(self):
        """(the next line of the worker's stdout, else None, whether it is still sending): read
        straight from the pipe, so that a partial line is held to the deadline too."""
        deadline = time.monotonic() + self.REPLY_TIMEOUT
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._fd], [], [], left)[0]:
                return None, True
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                return None, False
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode(), False

    @classmethod
    def start(cls, args, files):
        env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
        env.pop("GOMP_SPINCOUNT", None)  # would override PASSIVE's zero spin in libgomp
        cmd = [sys.executable, os.path.abspath(__file__), "--torch-worker",
               "--steps", str(args.steps), "--seed", str(args.seed),
               "--threads", str(args.threads), "--files"] + list(files)
        if args.channels_last:
            cmd.append("--channels-last")
        return cls(cmd, env)

    def call(self, **req):
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # the worker exited: _reply_line below reports it
        line, stalled = self._reply_line()
        if line is not None:
            return json.loads(line)
        if stalled:
            self.proc.kill()
        code = self.proc.wait()
        sys.stderr.write("the PyTorch worker %s\n" % (
            "sent no reply within %g s" % self.REPLY_TIMEOUT if stalled else
            "exited with status %d" % code))
        sys.exit(code if not stalled and code > 0 else 1)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


class TorchProxy:
    """A TorchTrainer in the worker process, with TensorFluxTrainer's methods."""

    def __init__(self, worker, name):
        self.worker, self.start = worker, 0
        worker.call(op="init", model=name)

    def train(self, batch_indices):
        times = self.worker.call(op="train", start=self.start, count=len(batch_indices))["times"]
        self.start += len(batch_indices)
        return times

    def accuracy(self):
        return self.worker.call(op="accuracy")["test_accuracy"]

    def close(self):
        pass


def chunks(n, window):
    """[begin, end) step ranges of an n-step epoch: the WARMUP steps, then `window` steps each
    (the last one shorter) -- the windows summarize() takes."""
    bounds = [0, min(WARMUP, n)]
    while bounds[-1] < n:
        bounds.append(min(n, bounds[-1] + window))
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def paired_ratio(ours, theirs, window):
    """Median over the windows after WARMUP of (their time / our time) for the same window's
    steps, i.e. our images/s over theirs with each window compared to the one run right next to
    it. Windows shorter than `window` (the epoch's tail) are left out unless there is no other."""
    n = min(len(ours), len(theirs)) - WARMUP
    a, _ = window_seconds(ours, window, n)
    b, _ = window_seconds(theirs, window, n)
    return float(np.median([y / x for x, y in zip(a, b)])) if a else float("nan")


def interleave(ours, theirs, order, window):
    """Trains both trainers on the batches `order` (one list of indices per step) in the chunks()
    of `window` steps, each chunk by one system and then by the other, the first of each pair
    alternating (ours first in chunk 0). Returns (our step times, their step times)."""
    times = {id(ours): [], id(theirs): []}
    for k, (begin, end) in enumerate(chunks(len(order), window)):
        for system in ((ours, theirs) if k % 2 == 0 else (theirs, ours)):
            got = system.train(order[begin:end])
            if len(got) != end - begin:
                raise RuntimeError("%d step times for %d steps" % (len(got), end - begin))
            times[id(system)] += got
    return times[id(ours)], times[id(theirs)]


def run_interleaved(name, data, args, worker):
    """Trains `name` for one epoch (or --steps) in both systems at once (interleave()), so that
    both see the same seconds of this machine, whose speed changes from one second to the next.
    Returns each system's result and the paired ratio."""
    order = batches(len(data[0]), BATCH[name], args.seed, args.steps)
    ours, theirs = TensorFluxTrainer(name, data, args.seed), TorchProxy(worker, name)
    times = interleave(ours, theirs, order, args.window)
    result = []
    for system, t in zip((ours, theirs), times):
        result.append({"images_per_sec": summarize(t, BATCH[name], args.window),
                       "test_accuracy": system.accuracy(), "steps": len(t)})
        system.close()
    return result[0], result[1], paired_ratio(times[0], times[1], args.window)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="mlp,cnn", help="comma-separated: mlp, cnn")
    parser.add_argument("--steps", type=int, default=0,
                        help="train this many steps instead of one epoch (no accuracy figure "
                             "worth quoting then)")
    parser.add_argument("--window", type=int, default=20, help="steps per timing window")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2, help="PyTorch's intra-op threads")
    parser.add_argument("--channels-last", action="store_true",
                        help="PyTorch's CNN in channels_last memory format (default NCHW)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="train both systems this many times (a fresh model each round) "
                             "and print the median of the rounds' ratios")
    parser.add_argument("--data-dir", default=DATA_DIR)
    parser.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--files", nargs=4, help=argparse.SUPPRESS)  # the worker's IDX files
    args = parser.parse_args()
    names = [m for m in args.models.split(",") if m]
    for m in names:
        if m not in BATCH:
            parser.error("unknown model %r (mlp, cnn)" % m)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.torch_worker:
        torch_worker(args)
        return

    import model  # examples/fashion_mnist/model.py
    try:
        files = model.data_files(args.data_dir, "train") + model.data_files(args.data_dir, "test")
    except FileNotFoundError as e:
        sys.stderr.write("%s\n" % e)
        sys.exit(2)
    data = load(files)

    load_start = os.getloadavg()[0]
    print("%-5s %5s %5s %16s %16s %7s %10s %10s" % (
        "round", "model", "batch", "TensorFlux img/s", "PyTorch img/s", "ratio", "acc TX",
        "acc torch"))
    ratios, steps = {m: [] for m in names}, {}
    worker = TorchWorker.start(args, files)
    for r in range(1, args.rounds + 1):
        for m in names:
            a, b, ratio = run_interleaved(m, data, args, worker)
            ratios[m].append(ratio)
            steps[m] = a["steps"]
            print("%-5d %5s %5d %16.0f %16.0f %7.2f %10.4f %10.4f" % (
                r, m, BATCH[m], a["images_per_sec"], b["images_per_sec"], ratio,
                a["test_accuracy"], b["test_accuracy"]), flush=True)
    worker.close()
    load_end = os.getloadavg()[0]
    if args.rounds > 1:
        print("median ratio over %d rounds: %s" % (args.rounds, ", ".join(
            "%s %.2f" % (m, float(np.median(ratios[m]))) for m in names)))
    print("steps per model: %s; first %d skipped, median of %d-step windows; PyTorch %d threads, "
          "OMP_WAIT_POLICY=PASSIVE%s; load average %.2f at start, %.2f at end" % (
              ", ".join("%s %d" % (m, steps[m]) for m in names), WARMUP, args.window,
              args.threads, ", channels_last" if args.channels_last else "", load_start, load_end))


if __name__ == "__main__":
    main()
