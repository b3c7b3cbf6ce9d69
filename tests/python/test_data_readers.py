"""File source datasets: tx.data.TFRecordDataset (records written by tx.io.TFRecordWriter, parsed
with parse_single_example in map), TextLineDataset (plain and gzip), experimental.IdxDataset on
Fashion-MNIST against a gzip + numpy reading; a corrupt record is DataLossError from get_next."""

import gzip
import os

import numpy as np
import pytest

import tensorflux as tx
from conftest import drain_one_shot as _drain


def _write(path, labels):
    with tx.io.TFRecordWriter(str(path)) as w:
        for i in labels:
            w.write(tx.io.make_example({"x": [float(i), 2.0 * i], "label": i}).SerializeToString())


def test_tfrecord_dataset_parse_and_batch(tmp_path):
    _write(tmp_path / "a.tfrecord", [0, 1, 2])
    _write(tmp_path / "b.tfrecord", [3, 4])
    spec = {"x": tx.io.FixedLenFeature([2], tx.float32),
            "label": tx.io.FixedLenFeature([], tx.int64)}
    with tx.Graph().as_default():
        ds = tx.data.TFRecordDataset([str(tmp_path / "a.tfrecord"), str(tmp_path / "b.tfrecord")])
        assert ds.output_types == tx.string
        ds = ds.map(lambda rec: tx.io.parse_single_example(rec, spec)).batch(2)
        batches = _drain(ds)
    assert [list(b["label"]) for b in batches] == [[0, 1], [2, 3], [4]]
    np.testing.assert_array_equal(batches[1]["x"], [[2, 4], [3, 6]])


def test_tfrecord_dataset_corrupt_record_is_data_loss(tmp_path):
    _write(tmp_path / "a.tfrecord", [0, 1])
    data = bytearray((tmp_path / "a.tfrecord").read_bytes())
    data[-3] ^= 0x40  # the last record's data CRC
    (tmp_path / "bad.tfrecord").write_bytes(bytes(data))
    with tx.Graph().as_default():
        nxt = tx.data.make_one_shot_iterator(
            tx.data.TFRecordDataset(str(tmp_path / "bad.tfrecord"))).get_next()
        with tx.Session() as sess:
            sess.run(nxt)
            with pytest.raises(tx.errors.DataLossError,
                               match=r"corrupted record at \d+ in file '.*bad.tfrecord'"):
                sess.run(nxt)


def test_text_line_dataset_plain_and_gzip(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"one\r\ntwo\n")
    with gzip.open(tmp_path / "b.txt.gz", "wb") as f:
        f.write(b"three\nfour")
    with tx.Graph().as_default():
        lines = _drain(tx.data.TextLineDataset([str(tmp_path / "a.txt"),
                                                str(tmp_path / "b.txt.gz")]))
    assert lines == [b"one", b"two", b"three", b"four"]


def test_idx_dataset_fashion_mnist():
    d = "/usr/share/datasets/fashion-mnist/"
    if not os.path.exists(d + "t10k-images-idx3-ubyte.gz"):
        pytest.skip("no Fashion-MNIST files")
    with gzip.open(d + "t10k-images-idx3-ubyte.gz") as f:
        ref = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
    with gzip.open(d + "t10k-labels-idx1-ubyte.gz") as f:
        ref_labels = np.frombuffer(f.read(), np.uint8, offset=8)
    with tx.Graph().as_default():
        images = tx.data.experimental.IdxDataset(d + "t10k-images-idx3-ubyte.gz")
        labels = tx.data.experimental.IdxDataset(d + "t10k-labels-idx1-ubyte.gz")
        assert images.output_types == tx.uint8 and images.output_shapes.as_list() == [28, 28]
        assert labels.output_shapes.as_list() == []
        first = _drain(images.take(3))
        all_labels = np.concatenate(_drain(labels.batch(4096)))
    np.testing.assert_array_equal(np.stack(first), ref[:3])
    np.testing.assert_array_equal(all_labels, ref_labels)


def _gzip_members(path, data, cuts):
    """`data` as consecutive gzip members (python's gzip, appending), split at `cuts`."""
    path.unlink(missing_ok=True)
    for a, b in zip([0] + cuts, cuts + [len(data)]):
        with gzip.open(path, "ab") as f:
            f.write(data[a:b])


def test_gzip_tfrecord_and_idx_from_python_gzip_members(tmp_path):
    # Files written by python's gzip in several members (as `cat a.gz b.gz` would make) read
    # like the plain bytes; a stream cut short is DataLossError naming the file.
    _write(tmp_path / "r.tfrecord", range(300))
    raw = (tmp_path / "r.tfrecord").read_bytes()
    _gzip_members(tmp_path / "r.tfrecord.gz", raw, [100, len(raw) // 2])
    values = np.arange(4 * 3 * 5, dtype=np.float32).reshape(4, 3, 5) * 1.5 - 7
    idx = b"\x00\x00\x0d\x03" + np.array([4, 3, 5], ">u4").tobytes() + values.astype(">f4").tobytes()
    _gzip_members(tmp_path / "v.idx.gz", idx, [10, 77])
    with tx.Graph().as_default():
        recs = _drain(tx.data.TFRecordDataset(str(tmp_path / "r.tfrecord.gz"), "GZIP"))
        items = _drain(tx.data.experimental.IdxDataset(str(tmp_path / "v.idx.gz")))
        plain = _drain(tx.data.TFRecordDataset(str(tmp_path / "r.tfrecord")))
    assert len(recs) == 300 and recs == plain
    np.testing.assert_array_equal(np.stack(items), values)

    gz = (tmp_path / "r.tfrecord.gz").read_bytes()
    (tmp_path / "cut.tfrecord.gz").write_bytes(gz[:len(gz) - 20])
    (tmp_path / "cut.idx.gz").write_bytes(gzip.compress(idx)[:-6])
    for name, make in [("cut.tfrecord.gz", tx.data.TFRecordDataset),
                       ("cut.idx.gz", tx.data.experimental.IdxDataset)]:
        with tx.Graph().as_default():
            nxt = tx.data.make_one_shot_iterator(make(str(tmp_path / name))).get_next()
            with tx.Session() as sess:
                with pytest.raises(tx.errors.DataLossError, match=name + "'"):
                    while True:
                        sess.run(nxt)


def test_idx_dataset_bad_header(tmp_path):
    (tmp_path / "bad.idx").write_bytes(b"\x01\x00\x08\x01\x00\x00\x00\x01\x05")
    with pytest.raises(ValueError, match="not an IDX file"):
        tx.data.experimental.IdxDataset(str(tmp_path / "bad.idx"))


def test_csv_dataset(tmp_path):
    (tmp_path / "a.csv").write_bytes(b"x,n,name\n1.5,2,abc\n,7,\"q,r\"\n")
    (tmp_path / "b.csv").write_bytes(b"x,n,name\n3,4,\n")
    with tx.Graph().as_default():
        ds = tx.data.experimental.CsvDataset(
            [str(tmp_path / "a.csv"), str(tmp_path / "b.csv")],
            [[0.25], tx.int32, ["none"]], header=True)
        assert ds.output_types == (tx.float32, tx.int32, tx.string)
        rows = _drain(ds)
    assert [(float(a), int(b), c) for a, b, c in rows] == [
        (1.5, 2, b"abc"), (0.25, 7, b"q,r"), (3.0, 4, b"none")]
    (tmp_path / "bad.csv").write_bytes(b"1,2,a\n1,x,b\n")
    with tx.Graph().as_default():
        nxt = tx.data.make_one_shot_iterator(tx.data.experimental.CsvDataset(
            str(tmp_path / "bad.csv"), [[0.0], [0], [""]])).get_next()
        with tx.Session() as sess:
            sess.run(nxt)
            with pytest.raises(tx.errors.InvalidArgumentError, match="bad.csv' line 2"):
                sess.run(nxt)
