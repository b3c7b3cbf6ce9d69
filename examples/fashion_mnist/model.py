"""The Fashion-MNIST models and input pipeline shared by train.py, the benchmarks (bench/peer,
the distributed training benchmark) and the end-to-end test.

Shapes and layout: images are float32 [N, 28, 28, 1] NHWC with pixels scaled to [0, 1]; labels are
int32 [N] class ids in [0, 10); logits are float32 [N, 10].
"""

import os

import tensorflux as tx

DATA_DIR = "/usr/share/datasets/fashion-mnist"
FILES = {"train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
         "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}
CLASS_NAMES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot")
NUM_TRAIN, NUM_TEST = 60000, 10000


def data_files(data_dir, split):
    """(images path, labels path) of `split` ('train' or 'test') in data_dir. Raises
    FileNotFoundError naming every missing file and the Debian package that provides them."""
    paths = tuple(os.path.join(data_dir, name) for name in FILES[split])
    _require(paths)
    return paths


def require_all_files(data_dir):
    """Raises data_files' FileNotFoundError naming every missing file of both splits."""
    _require([os.path.join(data_dir, name) for split in ("train", "test")
              for name in FILES[split]])


def _require(paths):
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing:
        raise FileNotFoundError(
            "Fashion-MNIST not found: missing %s (install Debian's dataset-fashion-mnist package, "
            "which scripts/setup does, or pass --data-dir)" % ", ".join(missing))


def dataset(data_dir, split, batch_size, num_shards=1, shard_index=0, shuffle_seed=None,
            repeat=False, drop_remainder=False, take=None):
    """tx.data pipeline over the IDX files: IdxDataset(images) zip IdxDataset(labels) ->
    [take: the split's first `take` examples] -> shard (num_shards, shard_index) -> shuffle
    (whole shard, reshuffled each epoch; skipped when shuffle_seed is None) -> [repeat] ->
    batch -> map (uint8 -> float32 / 255, [N,28,28,1]; labels int32) -> prefetch.
    Elements: (float32 [B, 28, 28, 1], int32 [B])."""
    images_path, labels_path = data_files(data_dir, split)
    ds = tx.data.Dataset.zip((tx.data.experimental.IdxDataset(images_path),
                              tx.data.experimental.IdxDataset(labels_path)))
    if take is not None:
        ds = ds.take(take)
    if num_shards > 1:
        ds = ds.shard(num_shards, shard_index)
    if shuffle_seed is not None:
        ds = ds.shuffle((NUM_TRAIN if split == "train" else NUM_TEST) // num_shards + 1,
                        seed=shuffle_seed, reshuffle_each_iteration=True)
    if repeat:
        ds = ds.repeat()
    ds = ds.batch(batch_size, drop_remainder=drop_remainder)

    def normalize(images, labels):
        images = tx.cast(images, tx.float32) * (1.0 / 255.0)
        return tx.reshape(images, [-1, 28, 28, 1]), tx.cast(labels, tx.int32)

    return ds.map(normalize).prefetch(2)


def cnn_logits(images, training, dropout_rate=0.3, l2_scale=0.0, seed=None):
    """Conv2D(32, 3x3, SAME)+ReLU -> MaxPool 2 -> Conv2D(64, 3x3, SAME)+ReLU -> MaxPool 2 ->
    Flatten -> Dense(128)+ReLU -> Dropout(dropout_rate, only when `training` is true) -> Dense(10).
    Glorot-uniform kernels, zero biases; l2_scale > 0 adds tx.nn.l2_loss-style penalties on the
    kernels to the REGULARIZATION_LOSSES collection (tx.losses.get_regularization_loss()).
    images: float32 [N, 28, 28, 1]; training: a Python bool or a bool scalar tensor. Variables are
    created under the current variable scope (reuse it for more towers). Returns float32 [N, 10]."""
    init = tx.glorot_uniform_initializer(seed=seed)
    reg = tx.contrib.layers.l2_regularizer(l2_scale) if l2_scale > 0 else None
    conv = dict(padding="same", activation=tx.nn.relu, kernel_initializer=init,
                kernel_regularizer=reg)
    x = tx.layers.conv2d(images, 32, 3, name="conv1", **conv)
    x = tx.layers.max_pooling2d(x, 2, 2, name="pool1")
    x = tx.layers.conv2d(x, 64, 3, name="conv2", **conv)
    x = tx.layers.max_pooling2d(x, 2, 2, name="pool2")
    x = tx.layers.flatten(x, name="flatten")
    x = tx.layers.dense(x, 128, activation=tx.nn.relu, kernel_initializer=init,
                        kernel_regularizer=reg, name="dense1")
    x = tx.layers.dropout(x, rate=dropout_rate, training=training, seed=seed, name="dropout")
    return tx.layers.dense(x, 10, kernel_initializer=init, kernel_regularizer=reg, name="logits")


def mlp_logits(images, seed=None):
    """784-256-ReLU-10 on float32 [N, 28, 28, 1] (or [N, 784]) images; Glorot-uniform kernels.
    Returns float32 [N, 10]."""
    init = tx.glorot_uniform_initializer(seed=seed)
    x = tx.reshape(images, [-1, 784])
    x = tx.layers.dense(x, 256, activation=tx.nn.relu, kernel_initializer=init, name="hidden")
    return tx.layers.dense(x, 10, kernel_initializer=init, name="logits")
