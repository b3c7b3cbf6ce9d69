"""Dataset.cache(filename): the first complete pass is written to '<filename>.tfxcache' and read
back by later iterators (the source is deleted to prove it); partial passes leave no cache; a
corrupt cache file is DataLossError."""

import os

import numpy as np
import pytest

import tensorflux as tx
from conftest import drain_one_shot as _drain


LABELS = [3, 0, 7, 5]
SPEC = {"x": tx.io.FixedLenFeature([2], tx.float32),
        "label": tx.io.FixedLenFeature([], tx.int64)}


def _write_source(path):
    with tx.io.TFRecordWriter(str(path)) as w:
        for i in LABELS:
            w.write(tx.io.make_example({"x": [float(i), 0.5 * i], "label": i}).SerializeToString())


def _cached(src, prefix):
    """(record, label int64, x float32[2]) read from the TFRecord file `src`, cached under
    `prefix`."""
    def parse(rec):
        f = tx.io.parse_single_example(rec, SPEC)
        return rec, f["label"], f["x"]
    return tx.data.TFRecordDataset(str(src)).map(parse).cache(str(prefix))


def _check(out):
    assert [int(lab) for _, lab, _ in out] == LABELS
    for (rec, lab, x) in out:
        assert isinstance(rec, bytes) and len(rec) > 20
        assert x.dtype == np.float32
        np.testing.assert_array_equal(x, [lab, 0.5 * lab])


def test_file_cache_is_read_back_without_the_source(graph, tmp_path):
    src = tmp_path / "src.tfrecord"
    _write_source(src)
    prefix = tmp_path / "cache"
    ds = _cached(src, prefix)
    _check(_drain(ds))  # first pass: reads the source, writes the cache
    assert sorted(os.listdir(tmp_path)) == ["cache.tfxcache", "src.tfrecord"]
    os.remove(src)
    _check(_drain(ds))  # later passes read the file only
    two = _drain(ds.repeat(2))
    _check(two[:4])
    _check(two[4:])
    assert [r for r, _, _ in two[:4]] == [r for r, _, _ in two[4:]]
    # A new graph (as another process would) with the same filename uses the same file.
    with tx.Graph().as_default():
        _check(_drain(_cached(src, prefix)))


def test_file_cache_repeat_in_one_iterator_and_partial_pass(graph, tmp_path):
    ds = tx.data.Dataset.range(6).shuffle(6).cache(str(tmp_path / "c"))
    # take(3) stops the writing pass early: no cache (and no temporary file) is left.
    first3 = _drain(ds.take(3))
    assert len(first3) == 3 and os.listdir(tmp_path) == []
    out = _drain(ds.repeat(3))  # epoch 1 writes; epochs 2 and 3 read it
    assert sorted(out[:6]) == list(range(6))
    assert out[:6] == out[6:12] == out[12:]
    assert os.listdir(tmp_path) == ["c.tfxcache"]
    assert _drain(ds) == out[:6]  # reshuffling shuffle under the cache: the same order


def _write_cache(tmp_path):
    ds = tx.data.Dataset.range(5).map(lambda x: x * x).cache(str(tmp_path / "c"))
    assert _drain(ds) == [0, 1, 4, 9, 16]
    return ds, tmp_path / "c.tfxcache"


def test_corrupt_cache_file_is_data_loss(graph, tmp_path):
    ds, path = _write_cache(tmp_path)
    good = path.read_bytes()
    bad = bytearray(good)
    bad[len(good) // 2] ^= 0x10  # a byte inside some record: its CRC fails
    path.write_bytes(bytes(bad))
    with pytest.raises(tx.errors.DataLossError, match="c.tfxcache"):
        _drain(ds)
    # Cut at the start of the end record (a file whose writer died): DATA_LOSS, not a short pass.
    end = good.rfind(b"E5") - 12
    path.write_bytes(good[:end])
    with pytest.raises(tx.errors.DataLossError, match="ends before its end record"):
        _drain(ds)
    path.write_bytes(good[:-3])  # a truncated record
    with pytest.raises(tx.errors.DataLossError, match="c.tfxcache"):
        _drain(ds)
    path.write_bytes(b"")
    with pytest.raises(tx.errors.DataLossError, match="c.tfxcache"):
        _drain(ds)


def test_cache_file_of_another_dataset(graph, tmp_path):
    _, path = _write_cache(tmp_path)
    # Two components against a one-component file: the header says so.
    with tx.Graph().as_default():
        pairs = tx.data.Dataset.range(5).map(lambda x: (x, x)).cache(str(tmp_path / "c"))
        with pytest.raises(tx.errors.DataLossError, match="bad header"):
            _drain(pairs)
    with tx.Graph().as_default():
        floats = tx.data.Dataset.range(5, output_type=tx.float32).cache(str(tmp_path / "c"))
        with pytest.raises(tx.errors.InvalidArgumentError, match="c.tfxcache' element 0.*float"):
            _drain(floats)
    assert path.exists()


def test_cache_file_in_a_missing_directory(graph, tmp_path):
    ds = tx.data.Dataset.range(3).cache(str(tmp_path / "no" / "such" / "c"))
    with pytest.raises(tx.errors.OpError, match="no/such"):
        _drain(ds)
