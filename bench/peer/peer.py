"""TensorFlux against its peers on the Fashion-MNIST MLP and CNN, in one run (make bench).

    PYTHONPATH=build/python /usr/bin/python3 bench/peer/peer.py [--models mlp,cnn] [--steps N]
                                                [--rounds N] [--peers torch-debian,torch,...]

The peers (PEERS below): Debian's PyTorch 1.13 (eager), PyTorch from PyPI (eager, and
torch.compile) in the virtualenv scripts/peers makes, and TensorFlow 2.15 (tf.compat.v1 graph
mode Session, oneDNN on) in the oracle's virtualenv (scripts/oracle). A peer whose Python is
missing is reported and left out; one that fails to train (torch.compile without a working
compiler) is dropped with its reason. Each runs in its own worker process
(bench/peer/trainers.py).

All systems train the same models (examples/fashion_mnist/model.py: mlp_logits,
784-256-ReLU-10 at batch 128; cnn_logits without dropout or L2,
conv32-pool-conv64-pool-dense128-dense10 at batch 64) with Glorot-uniform kernels, zero biases,
Adam (lr 1e-3, eps 1e-8) and softmax cross entropy, on the same batches (one epoch of the
training set in the same shuffled order, fed from numpy arrays), then evaluate test accuracy.
The peers run with 2 intra-op threads (shared/PEERS.md): PyTorch with OMP_WAIT_POLICY=PASSIVE
(its OpenMP threads otherwise spin against OpenBLAS's), TensorFlow with oneDNN on and
--tf-inter-op inter-op threads. TensorFlux runs with its defaults.

Speed: each step's wall time (batch indexing, the feed and the step) is taken. The systems train
at the same time, in windows of --window steps run back to back: window k by every system one
after the other (which goes first rotates from one window to the next), each process waiting
while another runs. This machine's speed changes from one second to the next by up to 2x (a
shared VM), so two runs one after the other can differ by more than the systems do; windows run
next to each other see the same machine. A peer's ratio is the median over windows after the
first 20 steps of (the peer's time / TensorFlux's time for the window's batches); images/s of
each is the median over those windows. Prints per model and round one row per system (images/s,
ratio, one-epoch test accuracy) and the ratio against the fastest peer; with --rounds N > 1 the
median ratios over the rounds; and the machine's load average at the start and end: figures
taken with a load above ~0.5 are not final.
Exit status 2 when the data is missing.
"""

import argparse
import json
import os
import select
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trainers  # noqa: E402  bench/peer/trainers.py (this folder)

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


class TensorFluxTrainer(trainers.SessionTrainer):
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



PEERS = {
    # name: (how to find its Python, worker kind, what it is)
    "torch-debian": ("debian", "torch", "Debian's PyTorch 1.13, eager"),
    "torch": ("peer-venv", "torch", "PyTorch from PyPI, eager"),
    "torch-compile": ("peer-venv", "torch-compile", "PyTorch from PyPI, torch.compile"),
    "tensorflow": ("oracle-venv", "tensorflow", "TensorFlow 2.15, tf.compat.v1 Session"),
}
DEFAULT_PEERS = "torch-debian,torch,torch-compile,tensorflow"


def peer_python(where):
    """The Python that runs a peer: Debian's, or a virtualenv's (scripts/peers makes the PyPI
    PyTorch one, scripts/oracle the TensorFlow one); None when that virtualenv is missing."""
    home = os.path.expanduser("~/.cache/tensorflux")
    if where == "debian":
        return "/usr/bin/python3"
    venv = os.environ.get("TX_PEER_VENV" if where == "peer-venv" else "TX_ORACLE_VENV",
                          os.path.join(home, where))
    py = os.path.join(venv, "bin", "python")
    return py if os.path.exists(py) else None


def make_trainer(kind, name, data, args):
    import trainers  # bench/peer/trainers.py

    if kind == "tensorflow":
        return trainers.TensorFlowTrainer(name, data, args.seed, args.threads, args.tf_inter_op)
    return trainers.TorchTrainer(name, data, args.seed, args.threads, args.channels_last,
                                 compile=kind == "torch-compile")


def peer_worker(args):
    """--peer-worker KIND: serves one JSON request per stdin line, one JSON reply per stdout line:
    {"op": "init", "model": m} -> {} (or {"error": message} when the peer cannot build it),
    {"op": "train", "start": s, "count": k} -> {"times": [...]} (batches s .. s + k - 1 of the
    epoch's order), {"op": "accuracy"} -> {"test_accuracy": a}. Exits at end of input. The
    replies go to the original stdout alone: whatever else writes to file descriptor 1 (the
    peer's libraries, oneDNN's verbose mode, a print) goes to stderr instead."""
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    data = load(args.files)
    trainer, order = None, None
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "init":
            try:
                trainer = make_trainer(args.peer_worker, req["model"], data, args)
                order = batches(len(data[0]), BATCH[req["model"]], args.seed, args.steps)
                reply = {}
            except ImportError as e:
                reply = {"error": "%s: %s" % (type(e).__name__, e)}
        elif req["op"] == "train":
            try:
                reply = {"times": trainer.train(order[req["start"]:req["start"] + req["count"]])}
            except Exception as e:  # e.g. torch.compile without a working compiler
                reply = {"error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300])}
        else:
            reply = {"test_accuracy": trainer.accuracy()}
        out.write(json.dumps(reply) + "\n")
        out.flush()


class PeerWorker:
    """Driver side of peer_worker: this script in a subprocess of the peer's Python with the
    peer's fair settings (shared/PEERS.md: 2 intra-op threads; OMP_WAIT_POLICY=PASSIVE for
    PyTorch; TensorFlow with oneDNN on). Each reply is awaited at most REPLY_TIMEOUT seconds; a
    worker that exits or stalls ends the benchmark with its message."""

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
    def start(cls, peer, python, args, files):
        kind = PEERS[peer][1]
        env = dict(os.environ, PYTHONPATH=HERE)
        if kind == "tensorflow":
            env.update(TF_ENABLE_ONEDNN_OPTS="1", TF_CPP_MIN_LOG_LEVEL="2")
        else:
            env["OMP_WAIT_POLICY"] = "PASSIVE"
            env.pop("GOMP_SPINCOUNT", None)  # would override PASSIVE's zero spin in libgomp
        cmd = [python, os.path.abspath(__file__), "--peer-worker", kind,
               "--steps", str(args.steps), "--seed", str(args.seed),
               "--threads", str(args.threads), "--tf-inter-op", str(args.tf_inter_op),
               "--files"] + list(files)
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
        sys.stderr.write("the peer's worker %s\n" % (
            "sent no reply within %g s" % self.REPLY_TIMEOUT if stalled else
            "exited with status %d" % code))
        sys.exit(code if not stalled and code > 0 else 1)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


class PeerUnavailable(Exception):
    """The peer cannot train this model here (its library is missing, or torch.compile fails)."""

    def __init__(self, peer, message):
        super().__init__(message)
        self.peer = peer


class PeerProxy:
    """A peer's trainer in its worker process, with TensorFluxTrainer's methods."""

    def __init__(self, worker, name, peer):
        self.worker, self.start, self.peer = worker, 0, peer
        reply = worker.call(op="init", model=name)
        if "error" in reply:
            raise PeerUnavailable(peer, reply["error"])

    def train(self, batch_indices):
        reply = self.worker.call(op="train", start=self.start, count=len(batch_indices))
        if "error" in reply:
            raise PeerUnavailable(self.peer, reply["error"])
        self.start += len(batch_indices)
        return reply["times"]

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


def interleave(systems, order, window):
    """Trains every trainer of `systems` on the batches `order` (one list of indices per step)
    in the chunks() of `window` steps, each chunk by every system one after the other, the
    order rotating by one from one chunk to the next (chunk k starts with systems[k % n]).
    Returns each system's step times, in the order of `systems`."""
    times = [[] for _ in systems]
    n = len(systems)
    for k, (begin, end) in enumerate(chunks(len(order), window)):
        for j in range(n):
            i = (k + j) % n
            got = systems[i].train(order[begin:end])
            if len(got) != end - begin:
                raise RuntimeError("%d step times for %d steps" % (len(got), end - begin))
            times[i] += got
    return times


def run_interleaved(name, data, args, workers):
    """Trains `name` for one epoch (or --steps) in TensorFlux and every peer of `workers`
    (peer name -> PeerWorker) at once (interleave()), so that all see the same seconds of this
    machine, whose speed changes from one second to the next. Returns (TensorFlux's result,
    {peer: result or the reason it could not run}, {peer: paired ratio})."""
    order = batches(len(data[0]), BATCH[name], args.seed, args.steps)
    skipped, live = {}, dict(workers)
    while True:  # a peer that fails mid-run (torch.compile) is dropped and the round restarts
        ours, peers = TensorFluxTrainer(name, data, args.seed), {}
        for p, w in live.items():
            try:
                peers[p] = PeerProxy(w, name, p)
            except PeerUnavailable as e:
                skipped[p] = str(e)
        live = {p: live[p] for p in peers}
        try:
            times = interleave([ours] + list(peers.values()), order, args.window)
            break
        except PeerUnavailable as e:
            skipped[e.peer] = str(e)
            del live[e.peer]
            ours.close()
    results = {}
    for (p, system), t in zip([("tensorflux", ours)] + list(peers.items()), times):
        results[p] = {"images_per_sec": summarize(t, BATCH[name], args.window),
                      "test_accuracy": system.accuracy(), "steps": len(t)}
        system.close()
    ratios = {p: paired_ratio(times[0], t, args.window)
              for p, t in zip(peers, times[1:])}
    ours_result = results.pop("tensorflux")
    results.update({p: reason for p, reason in skipped.items()})
    return ours_result, results, ratios


def print_round(r, m, ours, results, ratios):
    """One row per system: images/s, our ratio to it (its time / ours for the same windows),
    one-epoch test accuracy; a peer that could not run shows why."""
    print("%-5d %5s %-14s %12.0f %7s %8.4f" % (r, m, "tensorflux", ours["images_per_sec"], "",
                                              ours["test_accuracy"]))
    for p, res in results.items():
        if isinstance(res, str):
            print("%-5d %5s %-14s %12s %7s %8s  (%s)" % (r, m, p, "-", "-", "-", res[:100]))
        else:
            print("%-5d %5s %-14s %12.0f %7.2f %8.4f" % (r, m, p, res["images_per_sec"],
                                                        ratios[p], res["test_accuracy"]))
    if ratios:
        fastest = min(ratios, key=ratios.get)
        print("%-5d %5s against the fastest peer (%s): %.2f" % (r, m, fastest, ratios[fastest]),
              flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="mlp,cnn", help="comma-separated: mlp, cnn")
    parser.add_argument("--peers", default=DEFAULT_PEERS,
                        help="comma-separated, of: " + ", ".join(PEERS))
    parser.add_argument("--steps", type=int, default=0,
                        help="train this many steps instead of one epoch (no accuracy figure "
                             "worth quoting then)")
    parser.add_argument("--window", type=int, default=20, help="steps per timing window")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2, help="the peers' intra-op threads")
    parser.add_argument("--tf-inter-op", type=int, default=1,
                        help="TensorFlow's inter-op threads")
    parser.add_argument("--channels-last", action="store_true",
                        help="PyTorch's CNN in channels_last memory format (default NCHW)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="train every system this many times (a fresh model each round) "
                             "and print the median of the rounds' ratios")
    parser.add_argument("--data-dir", default=DATA_DIR)
    parser.add_argument("--peer-worker", choices=("torch", "torch-compile", "tensorflow"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--files", nargs=4, help=argparse.SUPPRESS)  # the worker's IDX files
    args = parser.parse_args()
    names = [m for m in args.models.split(",") if m]
    for m in names:
        if m not in BATCH:
            parser.error("unknown model %r (mlp, cnn)" % m)
    peer_names = [p for p in args.peers.split(",") if p]
    for p in peer_names:
        if p not in PEERS:
            parser.error("unknown peer %r (%s)" % (p, ", ".join(PEERS)))
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.peer_worker:
        peer_worker(args)
        return

    import model  # examples/fashion_mnist/model.py
    try:
        files = model.data_files(args.data_dir, "train") + model.data_files(args.data_dir, "test")
    except FileNotFoundError as e:
        sys.stderr.write("%s\n" % e)
        sys.exit(2)
    data = load(files)

    workers = {}
    for p in peer_names:
        python = peer_python(PEERS[p][0])
        if python is None:
            print("peer %s: not installed (%s; make bench sets it up)" % (p, PEERS[p][2]))
            continue
        workers[p] = PeerWorker.start(p, python, args, files)
    load_start = os.getloadavg()[0]
    print("%-5s %5s %-14s %12s %7s %8s" % ("round", "model", "system", "images/s", "ratio",
                                          "accuracy"))
    ratios, steps = {m: {} for m in names}, {}
    for r in range(1, args.rounds + 1):
        for m in names:
            ours, results, round_ratios = run_interleaved(m, data, args, workers)
            for p, v in round_ratios.items():
                ratios[m].setdefault(p, []).append(v)
            steps[m] = ours["steps"]
            print_round(r, m, ours, results, round_ratios)
    for w in workers.values():
        w.close()
    load_end = os.getloadavg()[0]
    if args.rounds > 1:
        for m in names:
            med = {p: float(np.median(v)) for p, v in ratios[m].items()}
            print("%s median ratio over %d rounds: %s" % (m, args.rounds, ", ".join(
                "%s %.2f" % (p, v) for p, v in med.items())))
    print("ratio: the peer's time / TensorFlux's time for the same batches (above 1: TensorFlux "
          "is faster). steps per model: %s; first %d skipped, median of %d-step windows; peers "
          "%d intra-op threads (PyTorch OMP_WAIT_POLICY=PASSIVE%s; TensorFlow inter-op %d, "
          "oneDNN on); load average %.2f at start, %.2f at end" % (
              ", ".join("%s %d" % (m, steps[m]) for m in names), WARMUP, args.window,
              args.threads, ", channels_last" if args.channels_last else "", args.tf_inter_op,
              load_start, load_end))


if __name__ == "__main__":
    main()
