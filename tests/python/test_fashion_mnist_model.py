"""examples/fashion_mnist/model.py's input pipeline (IdxDataset zip -> shard -> shuffle -> batch ->
map -> prefetch) on Debian's Fashion-MNIST files, against the files read with gzip + numpy."""

import os
import sys

import numpy as np
import pytest

import tensorflux as tx
from conftest import drain_one_shot

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                                "fashion_mnist"))
import model  # noqa: E402  pylint: disable=wrong-import-position
from idx import read_idx  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.skipif(
    not os.path.isdir(model.DATA_DIR), reason="Debian's dataset-fashion-mnist is not installed")


def _numpy_test_split():
    images_path, labels_path = model.data_files(model.DATA_DIR, "test")
    return read_idx(images_path), read_idx(labels_path)


def test_sharded_pipeline_equals_numpy():
    images, labels = _numpy_test_split()
    with tx.Graph().as_default():
        ds = model.dataset(model.DATA_DIR, "test", 512, num_shards=3, shard_index=2)
        assert ds.output_types == (tx.float32, tx.int32)
        assert ds.output_shapes[0].as_list() == [None, 28, 28, 1]
        batches = drain_one_shot(ds)
    assert [len(b[1]) for b in batches] == [512] * 6 + [3333 - 6 * 512]
    got_x = np.concatenate([b[0] for b in batches])
    got_y = np.concatenate([b[1] for b in batches])
    assert got_y.dtype == np.int32
    np.testing.assert_array_equal(got_y, labels[2::3])
    np.testing.assert_array_equal(got_x[..., 0],
                                  images[2::3].astype(np.float32) * np.float32(1.0 / 255.0))


def test_shuffled_pipeline_keeps_each_image_with_its_label():
    images, labels = _numpy_test_split()
    with tx.Graph().as_default():
        ds = model.dataset(model.DATA_DIR, "test", 100, num_shards=5, shard_index=0,
                           shuffle_seed=3, drop_remainder=True)
        assert ds.output_shapes[0].as_list() == [100, 28, 28, 1]
        batches = drain_one_shot(ds)
    got_x = np.concatenate([b[0] for b in batches])
    got_y = np.concatenate([b[1] for b in batches])
    assert len(got_y) == 2000
    # A permutation of shard 0 (not the file order), every image still with its own label.
    assert not np.array_equal(got_y, labels[0::5])
    assert sorted(got_y.tolist()) == sorted(labels[0::5].tolist())
    pixels = np.rint(got_x[..., 0] * 255.0).astype(np.uint8)
    got_pairs = sorted((img.tobytes(), int(lab)) for img, lab in zip(pixels, got_y))
    want_pairs = sorted((img.tobytes(), int(lab)) for img, lab in zip(images[0::5], labels[0::5]))
    assert got_pairs == want_pairs

def test_missing_files_name_the_package(tmp_path):
    with pytest.raises(FileNotFoundError, match="dataset-fashion-mnist"):
        model.dataset(str(tmp_path), "train", 64)
