"""The peers' trainers, run in bench/peer/peer.py's worker processes (each peer in the Python
that has it: Debian's python3 for PyTorch 1.13, the peer virtualenv for PyTorch 2.x, the oracle
virtualenv for TensorFlow 2.15). Each trains the models of peer.py's docstring on the batches it
is given: train(batch_indices) -> seconds per step, accuracy() -> test accuracy.
This module imports neither torch nor tensorflow at import time."""

import os
import time
import warnings

import numpy as np


class SessionTrainer:
    """A graph-mode trainer (TensorFlux, or TensorFlow's tf.compat.v1): subclasses set self.sess,
    self.x, self.y (placeholders), self.train_op, self.n_correct and self.data."""

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
    """PyTorch eager, or torch.compile'd (compile=True; PyTorch 2.x on CPU needs a C++ compiler,
    the first steps compile and fall in the warm-up)."""

    def __init__(self, name, data, seed, threads, channels_last=False, compile=False):
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
        self.forward = torch.compile(self.net) if compile else self.net

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
            self.loss_fn(self.forward(xb), yb).backward()
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


class TensorFlowTrainer(SessionTrainer):
    """TensorFlow 2.15 as a TF 1.x user runs it: tf.compat.v1 graph mode, a Session with
    `threads` intra-op threads and `inter_op` inter-op threads, oneDNN on (TF's default on x86),
    the model built with tf.compat.v1.layers exactly as examples/fashion_mnist/model.py builds
    it in TensorFlux, fed from numpy."""

    def __init__(self, name, data, seed, threads, inter_op=1):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        warnings.filterwarnings("ignore", message=".*is deprecated", category=UserWarning)
        import tensorflow.compat.v1 as tf

        tf.disable_v2_behavior()
        self.data = data
        graph = tf.Graph()
        with graph.as_default():
            tf.set_random_seed(seed)
            init = tf.glorot_uniform_initializer(seed=seed)
            self.x = tf.placeholder(tf.float32, [None, 28, 28, 1], name="x")
            self.y = tf.placeholder(tf.int32, [None], name="y")
            if name == "mlp":
                h = tf.reshape(self.x, [-1, 784])
                h = tf.layers.dense(h, 256, activation=tf.nn.relu, kernel_initializer=init)
            else:
                conv = dict(padding="same", activation=tf.nn.relu, kernel_initializer=init)
                h = tf.layers.conv2d(self.x, 32, 3, **conv)
                h = tf.layers.max_pooling2d(h, 2, 2)
                h = tf.layers.conv2d(h, 64, 3, **conv)
                h = tf.layers.max_pooling2d(h, 2, 2)
                h = tf.layers.flatten(h)
                h = tf.layers.dense(h, 128, activation=tf.nn.relu, kernel_initializer=init)
            logits = tf.layers.dense(h, 10, kernel_initializer=init)
            loss = tf.losses.sparse_softmax_cross_entropy(self.y, logits)
            self.train_op = tf.train.AdamOptimizer(1e-3, epsilon=1e-8).minimize(loss)
            self.n_correct = tf.reduce_sum(tf.cast(
                tf.equal(tf.argmax(logits, 1, output_type=tf.int32), self.y), tf.int32))
            init_op = tf.global_variables_initializer()
        config = tf.ConfigProto(intra_op_parallelism_threads=threads,
                                inter_op_parallelism_threads=inter_op)
        self.sess = tf.Session(graph=graph, config=config)
        self.sess.run(init_op)

