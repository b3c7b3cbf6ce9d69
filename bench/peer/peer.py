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

Speed: each step's wall time (batch indexing, the feed and the step) is taken; the first 20 steps
are skipped and images/s is the median over windows of --window steps. Prints one table row per
model and round (images/s of each, the ratio TensorFlux / PyTorch, one-epoch test accuracy of
each), with --rounds N > 1 the median ratio over the rounds, and the machine's load average at
the start and end: figures taken with a load above ~0.5 are not final.
Exit status 2 when the data or torch is missing.
"""

import argparse
import json
import os
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


def summarize(step_seconds, batch_size, window):
    """Median images/s over windows of `window` steps after the first WARMUP steps."""
    t = np.asarray(step_seconds[WARMUP:])
    window = max(1, min(window, len(t)))
    rates = [batch_size * window / t[i:i + window].sum()
             for i in range(0, len(t) - window + 1, window)]
    return float(np.median(rates)) if rates else float("nan")


def run_tensorflux(name, data, args):
    import model  # examples/fashion_mnist/model.py
    import tensorflux as tx

    train_x, train_y, test_x, test_y = data
    bs = BATCH[name]
    graph = tx.Graph()
    with graph.as_default():
        tx.set_random_seed(args.seed)
        x = tx.placeholder(tx.float32, [None, 28, 28, 1], name="x")
        y = tx.placeholder(tx.int32, [None], name="y")
        logits = (model.mlp_logits(x, seed=args.seed) if name == "mlp" else
                  model.cnn_logits(x, training=False, dropout_rate=0.0, seed=args.seed))
        loss = tx.losses.sparse_softmax_cross_entropy(y, logits)
        train_op = tx.train.AdamOptimizer(1e-3, epsilon=1e-8).minimize(loss)
        n_correct = tx.reduce_sum(tx.cast(tx.equal(tx.argmax(logits, 1, output_type=tx.int32), y),
                                          tx.int32))
        init = tx.global_variables_initializer()
    times = []
    with tx.Session(graph=graph) as sess:
        sess.run(init)
        for idx in batches(len(train_x), bs, args.seed, args.steps):
            t0 = time.perf_counter()
            sess.run(train_op, {x: train_x[idx], y: train_y[idx]})
            times.append(time.perf_counter() - t0)
        right = sum(int(sess.run(n_correct, {x: test_x[i:i + 1000], y: test_y[i:i + 1000]}))
                    for i in range(0, len(test_x), 1000))
    return {"images_per_sec": summarize(times, bs, args.window),
            "test_accuracy": right / len(test_x), "steps": len(times)}


def run_torch(name, data, args):
    import torch
    from torch import nn

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    train_x, train_y, test_x, test_y = data
    bs = BATCH[name]
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
    memory_format = torch.channels_last if args.channels_last else torch.contiguous_format
    net = net.to(memory_format=memory_format)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, eps=1e-8)
    loss_fn = nn.CrossEntropyLoss()

    def images(a):  # NHWC numpy -> NCHW tensor
        return torch.from_numpy(np.ascontiguousarray(a.transpose(0, 3, 1, 2))).contiguous(
            memory_format=memory_format)

    times = []
    net.train()
    for idx in batches(len(train_x), bs, args.seed, args.steps):
        t0 = time.perf_counter()
        xb, yb = images(train_x[idx]), torch.from_numpy(train_y[idx]).long()
        opt.zero_grad(set_to_none=True)
        loss_fn(net(xb), yb).backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    net.eval()
    right = 0
    with torch.no_grad():
        for i in range(0, len(test_x), 1000):
            pred = net(images(test_x[i:i + 1000])).argmax(1).numpy()
            right += int((pred == test_y[i:i + 1000]).sum())
    return {"images_per_sec": summarize(times, bs, args.window),
            "test_accuracy": right / len(test_x), "steps": len(times)}


def torch_subprocess(args, files):
    """Runs this script's --torch-worker mode with the peer's fair settings; its JSON result."""
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    env.pop("GOMP_SPINCOUNT", None)  # would override PASSIVE's zero spin in libgomp
    cmd = [sys.executable, os.path.abspath(__file__), "--torch-worker",
           "--models", args.models, "--steps", str(args.steps), "--window", str(args.window),
           "--seed", str(args.seed), "--threads", str(args.threads), "--files"] + list(files)
    if args.channels_last:
        cmd.append("--channels-last")
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        sys.exit(proc.returncode)
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="mlp,cnn", help="comma-separated: mlp, cnn")
    parser.add_argument("--steps", type=int, default=0,
                        help="train this many steps instead of one epoch (no accuracy figure "
                             "worth quoting then)")
    parser.add_argument("--window", type=int, default=50, help="steps per timing window")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2, help="PyTorch's intra-op threads")
    parser.add_argument("--channels-last", action="store_true",
                        help="PyTorch's CNN in channels_last memory format (default NCHW)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="measure both systems this many times, alternating (TensorFlux, "
                             "then PyTorch, per round), and print the median ratio: this "
                             "machine's speed changes from one second to the next")
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
        try:
            import torch  # noqa: F401
        except ImportError:
            sys.stderr.write("PyTorch not found: install Debian's python3-torch\n")
            sys.exit(2)
        data = load(args.files)
        print(json.dumps({m: run_torch(m, data, args) for m in names}))
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
    ratios = {m: [] for m in names}
    for r in range(1, args.rounds + 1):
        ours = {m: run_tensorflux(m, data, args) for m in names}
        theirs = torch_subprocess(args, files)
        for m in names:
            a, b = ours[m], theirs[m]
            ratios[m].append(a["images_per_sec"] / b["images_per_sec"])
            print("%-5d %5s %5d %16.0f %16.0f %7.2f %10.4f %10.4f" % (
                r, m, BATCH[m], a["images_per_sec"], b["images_per_sec"], ratios[m][-1],
                a["test_accuracy"], b["test_accuracy"]), flush=True)
    load_end = os.getloadavg()[0]
    if args.rounds > 1:
        print("median ratio over %d rounds: %s" % (args.rounds, ", ".join(
            "%s %.2f" % (m, float(np.median(ratios[m]))) for m in names)))
    print("steps per model: %s; first %d skipped, median of %d-step windows; PyTorch %d threads, "
          "OMP_WAIT_POLICY=PASSIVE%s; load average %.2f at start, %.2f at end" % (
              ", ".join("%s %d" % (m, ours[m]["steps"]) for m in names), WARMUP, args.window,
              args.threads, ", channels_last" if args.channels_last else "", load_start, load_end))


if __name__ == "__main__":
    main()
