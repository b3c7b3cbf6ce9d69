"""tx.io: TFRecord files (framing checked against a pure-Python CRC-32C), tf.train.Example
writing and parsing (parse_example / parse_single_example), errors, IDX reading of Fashion-MNIST
against a gzip + numpy reading, and TF Serving's half_plus_two fed real Examples."""

import gzip
import os
import struct

import numpy as np
import pytest

import tensorflux as tx
from conftest import TEST_DATA_DIR
from event_files import tfrecord_records


def _write(path, examples):
    with tx.io.TFRecordWriter(str(path)) as w:
        for e in examples:
            w.write(tx.io.make_example(e).SerializeToString())


EXAMPLES = [
    {"x": [1.0, 2.0], "label": 3, "tags": [b"a", b"b"]},
    {"x": np.array([3.5, -1.0], np.float32), "label": np.int64(7)},
    {"x": [0.25, 0.5], "label": [0], "tags": ["c"]},
]
SPEC = {"x": tx.io.FixedLenFeature([2], tx.float32),
        "label": tx.io.FixedLenFeature([], tx.int64),
        "tags": tx.io.VarLenFeature(tx.string),
        "weight": tx.io.FixedLenFeature([1], tx.float32, default_value=[0.5])}


def test_writer_framing_and_iterator(tmp_path):
    path = tmp_path / "ex.tfrecord"
    _write(path, EXAMPLES)
    raw = tfrecord_records(path)  # framing and CRCs checked record by record in pure Python
    assert raw == list(tx.io.tf_record_iterator(str(path)))
    ex = tx.train.Example.FromString(raw[0])
    assert list(ex.features.feature["x"].float_list.value) == [1.0, 2.0]
    assert list(ex.features.feature["label"].int64_list.value) == [3]
    assert list(ex.features.feature["tags"].bytes_list.value) == [b"a", b"b"]


def test_parse_example_dense_sparse_defaults(tmp_path):
    path = tmp_path / "ex.tfrecord"
    _write(path, EXAMPLES)
    records = list(tx.io.tf_record_iterator(str(path)))
    with tx.Graph().as_default():
        serialized = tx.placeholder(tx.string, [None])
        parsed = tx.io.parse_example(serialized, SPEC)
        assert parsed["x"].shape.as_list() == [None, 2]
        with tx.Session() as sess:
            out = sess.run(parsed, {serialized: np.array(records, object)})
    np.testing.assert_array_equal(out["x"], [[1, 2], [3.5, -1], [0.25, 0.5]])
    np.testing.assert_array_equal(out["label"], [3, 7, 0])
    np.testing.assert_array_equal(out["weight"], [[0.5], [0.5], [0.5]])
    tags = out["tags"]
    assert isinstance(tags, tx.SparseTensorValue)
    np.testing.assert_array_equal(tags.indices, [[0, 0], [0, 1], [2, 0]])
    assert list(tags.values) == [b"a", b"b", b"c"]
    np.testing.assert_array_equal(tags.dense_shape, [3, 2])


def test_parse_single_example():
    rec = tx.io.make_example(EXAMPLES[0]).SerializeToString()
    with tx.Graph().as_default():
        parsed = tx.io.parse_single_example(tx.constant(rec), SPEC)
        assert parsed["x"].shape.as_list() == [2]
        with tx.Session() as sess:
            out = sess.run(parsed)
    np.testing.assert_array_equal(out["x"], [1, 2])
    assert out["label"] == 3
    np.testing.assert_array_equal(out["tags"].indices, [[0], [1]])
    np.testing.assert_array_equal(out["tags"].dense_shape, [2])


@pytest.mark.parametrize("example, words", [
    ({"label": 1}, ["record 0", "required feature 'x'"]),
    ({"x": [1.0, 2.0, 3.0], "label": 1}, ["record 0", "feature 'x'", "3 values"]),
    ({"x": [1, 2], "label": 1}, ["record 0", "feature 'x'", "found a int64"]),
])
def test_parse_errors_name_record_and_feature(example, words):
    rec = tx.io.make_example(example).SerializeToString()
    with tx.Graph().as_default():
        parsed = tx.io.parse_example(tx.constant([rec]), SPEC)
        with tx.Session() as sess:
            with pytest.raises(tx.errors.InvalidArgumentError) as e:
                sess.run(parsed["x"])
    for w in words:
        assert w in str(e.value)


def test_spec_errors_at_graph_construction():
    with tx.Graph().as_default():
        with pytest.raises(ValueError, match="default_value"):
            tx.io.parse_example(tx.constant([b""]),
                                {"x": tx.io.FixedLenFeature([2], tx.float32, [1.0, 2.0, 3.0])})
        with pytest.raises(ValueError, match="float32, int64 or string"):
            tx.io.parse_example(tx.constant([b""]), {"x": tx.io.VarLenFeature(tx.int32)})


def test_corrupt_tfrecord_is_data_loss(tmp_path):
    path = tmp_path / "ex.tfrecord"
    _write(path, EXAMPLES)
    data = bytearray(path.read_bytes())
    first = 16 + struct.unpack_from("<Q", data, 0)[0]
    data[first + 14] ^= 1  # a data byte of the second record
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(data))
    with pytest.raises(tx.errors.DataLossError, match="offset %d" % first):
        list(tx.io.tf_record_iterator(str(bad)))
    it = tx.io.tf_record_iterator(str(bad), skip_corrupt=True)
    assert len(list(it)) == 2 and it.corrupt_records == 1
    bad.write_bytes(bytes(data[:first + 5]))
    with pytest.raises(tx.errors.DataLossError, match="truncated record"):
        list(tx.io.tf_record_iterator(str(bad)))


def test_read_idx_fashion_mnist():
    d = "/usr/share/datasets/fashion-mnist/"
    if not os.path.exists(d + "t10k-images-idx3-ubyte.gz"):
        pytest.skip("no Fashion-MNIST files")
    images = tx.io.read_idx(d + "t10k-images-idx3-ubyte.gz")
    labels = tx.io.read_idx(d + "t10k-labels-idx1-ubyte.gz")
    with gzip.open(d + "t10k-images-idx3-ubyte.gz") as f:
        ref = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
    with gzip.open(d + "t10k-labels-idx1-ubyte.gz") as f:
        ref_labels = np.frombuffer(f.read(), np.uint8, offset=8)
    assert images.dtype == np.uint8 and images.shape == (10000, 28, 28)
    np.testing.assert_array_equal(images, ref)
    np.testing.assert_array_equal(labels, ref_labels)


def test_serving_half_plus_two_parses_examples():
    # TF Serving's half_plus_two: x and x2 come from ParseExample over the string placeholder
    # tf_example (x required, x2 default 0); y = 0.5 x + 2, y3 = 0.5 x2 + 3.
    export_dir = os.path.join(TEST_DATA_DIR, "tf-graphs", "serving_half_plus_two_cpu")
    recs = [tx.io.make_example({"x": [1.0], "x2": [4.0]}).SerializeToString(),
            tx.io.make_example({"x": [5.0]}).SerializeToString()]
    with tx.Session(graph=tx.Graph()) as sess:
        tx.saved_model.loader.load(sess, ["serve"], export_dir)
        y, y3 = sess.run(["y:0", "y3:0"], {"tf_example:0": np.array(recs, object)})
    np.testing.assert_array_equal(y, [[2.5], [4.5]])
    np.testing.assert_array_equal(y3, [[5.0], [3.0]])


def test_decode_csv():
    rows = [b"1.5,2,abc", b",7,\"q,r\"", b"3,4,"]
    with tx.Graph().as_default():
        records = tx.placeholder(tx.string, [None])
        cols = tx.io.decode_csv(records, [[0.25], tx.constant([], tx.int32), ["none"]])
        assert [c.dtype for c in cols] == [tx.float32, tx.int32, tx.string]
        with tx.Session() as sess:
            a, b, c = sess.run(cols, {records: np.array(rows, object)})
            np.testing.assert_array_equal(a, [1.5, 0.25, 3.0])
            np.testing.assert_array_equal(b, [2, 7, 4])
            assert list(c) == [b"abc", b"q,r", b"none"]
            with pytest.raises(tx.errors.InvalidArgumentError, match="record 1"):
                sess.run(cols, {records: np.array([b"1,2,x", b"1,,x"], object)})
            with pytest.raises(tx.errors.InvalidArgumentError, match="not a valid float"):
                sess.run(cols, {records: np.array([b"z,2,x"], object)})


def test_empty_list_constant_of_integer_type():
    # tx.constant([], tx.int32): numpy reads [] as float64; an empty list has no float to reject.
    with tx.Graph().as_default(), tx.Session() as sess:
        v = sess.run(tx.constant([], tx.int32))
    assert v.dtype == np.int32 and v.shape == (0,)
