"""Fashion-MNIST MLP in TF 1.x style: 784-256-ReLU-10, Adam (lr 1e-3), batch 128, 5 epochs.

    PYTHONPATH=build/python /usr/bin/python3 examples/fashion_mnist/mlp.py [--epochs N]

Reads the IDX files of Debian's dataset-fashion-mnist package (/usr/share/datasets/fashion-mnist/
*.gz, installed by scripts/setup; another directory through
FASHION_MNIST_DIR) with gzip + numpy, scales pixels to [0, 1], trains with tx.layers.dense and
tx.train.AdamOptimizer, and prints per-epoch loss and training speed (images/s over the steps
after the first 20, as PyTorch's figure in docs/PERFORMANCE.md is measured). The last line is
`test_accuracy=0.xxxx` (at least 0.865 expected; PyTorch 1.13 reaches 0.869 with the same model
and settings). Exit status 2 when the data is missing.
"""

import argparse
import os
import sys
import time

import numpy as np

import tensorflux as tx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from idx import read_idx  # noqa: E402  pylint: disable=wrong-import-position

DATA_DIR = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
FILES = {"train_x": "train-images-idx3-ubyte.gz", "train_y": "train-labels-idx1-ubyte.gz",
         "test_x": "t10k-images-idx3-ubyte.gz", "test_y": "t10k-labels-idx1-ubyte.gz"}


def load(data_dir=DATA_DIR):
    missing = [n for n in FILES.values() if not os.path.exists(os.path.join(data_dir, n))]
    if missing:
        sys.stderr.write(
            "Fashion-MNIST not found in %s (missing %s).\nInstall Debian's dataset-fashion-mnist "
            "package (scripts/setup does) or set FASHION_MNIST_DIR.\n"
            % (data_dir, ", ".join(missing)))
        sys.exit(2)
    d = {k: read_idx(os.path.join(data_dir, n)) for k, n in FILES.items()}
    scale = np.float32(1.0 / 255.0)
    return (d["train_x"].reshape(-1, 784).astype(np.float32) * scale,
            d["train_y"].astype(np.int32),
            d["test_x"].reshape(-1, 784).astype(np.float32) * scale,
            d["test_y"].astype(np.int32))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    train_x, train_y, test_x, test_y = load()
    tx.set_random_seed(args.seed)
    x = tx.placeholder(tx.float32, [None, 784], name="x")
    y = tx.placeholder(tx.int32, [None], name="y")
    hidden = tx.layers.dense(x, 256, activation=tx.nn.relu)
    logits = tx.layers.dense(hidden, 10)
    loss = tx.losses.sparse_softmax_cross_entropy(y, logits)
    train_op = tx.train.AdamOptimizer(args.learning_rate).minimize(loss)
    correct = tx.equal(tx.argmax(logits, 1, output_type=tx.int32), y)
    n_correct = tx.reduce_sum(tx.cast(correct, tx.int32))

    rng = np.random.default_rng(args.seed)
    n, bs = len(train_x), args.batch_size
    warmup, timed_images, timed_seconds = 20, 0, 0.0
    with tx.Session() as sess:
        sess.run(tx.global_variables_initializer())
        step = 0
        for epoch in range(args.epochs):
            order = rng.permutation(n)
            total, batches = 0.0, 0
            for start in range(0, n, bs):
                idx = order[start:start + bs]
                t0 = time.perf_counter()
                _, l = sess.run([train_op, loss], {x: train_x[idx], y: train_y[idx]})
                if step >= warmup:
                    timed_seconds += time.perf_counter() - t0
                    timed_images += len(idx)
                step += 1
                total += l
                batches += 1
            print("epoch %d: mean loss %.4f, %.0f images/s" % (
                epoch + 1, total / batches, timed_images / max(timed_seconds, 1e-9)))
        right = sum(sess.run(n_correct, {x: test_x[i:i + 10000], y: test_y[i:i + 10000]})
                    for i in range(0, len(test_x), 10000))
    print("training: %.0f images/s (steps after the first %d)" % (
        timed_images / max(timed_seconds, 1e-9), warmup))
    print("test_accuracy=%.4f" % (right / len(test_x)))


if __name__ == "__main__":
    main()
