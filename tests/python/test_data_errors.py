"""Errors of file datasets on later reads, and tx.data.experimental.ignore_errors().

A TFRecordDataset iterator that hit a corrupt or truncated record keeps raising DataLossError on
every later get_next (the same message, with TensorFlow's wording and offsets: "corrupted record
at N" where N is the record's start for a bad length and its data's start for a bad data CRC,
"truncated record at N" with the record's start), never a quiet end of data. Facts from
TensorFlow 2.15 (tf.compat.v1, one-shot and initializable iterators) these tests follow:
- the messages and offsets above, also for a GZIP file (offsets in the uncompressed stream);
- ignore_errors() drops the error and skips the rest of the failing file: with one file the
  data ends after the records before the bad one; with more files it goes on with the next;
- ignore_errors() over a map whose function fails drops just those elements;
- a missing file is NotFoundError on every get_next.
Deliberate differences (docs/TF_DIFFERENCES.md, "tf.data: file errors"): TF goes on with the next
file after a DataLossError (and so ends quietly after the last one) where this iterator repeats
the error; TF ends quietly at a record whose 12-byte header is cut, here it is DataLossError;
under ignore_errors() TF retries a missing file forever, here the file is skipped."""

import gzip

import numpy as np
import pytest

import tensorflux as tx

RECORDS = [b"alpha", b"bravo-two", b"charlie", b"delta"]
STARTS = [0, 21, 46, 69]  # each record is 16 bytes of framing + its data
SECOND = STARTS[1]


def _good(tmp_path):
    path = tmp_path / "good.tfrecord"
    with tx.io.TFRecordWriter(str(path)) as w:
        for r in RECORDS:
            w.write(r)
    return path.read_bytes()


def _flip(data, at):
    b = bytearray(data)
    b[at] ^= 0x40
    return bytes(b)


# name -> (how the good file is damaged, records before the error, TF's message prefix)
CASES = {
    "data": (lambda g: _flip(g, SECOND + 12 + 2), 1, "corrupted record at 33"),
    "data_crc": (lambda g: _flip(g, SECOND + 12 + len(RECORDS[1])), 1, "corrupted record at 33"),
    "length_crc": (lambda g: _flip(g, SECOND + 8), 1, "corrupted record at 21"),
    "length": (lambda g: _flip(g, SECOND), 1, "corrupted record at 21"),
    "cut_data": (lambda g: g[:SECOND + 12 + 3], 1, "truncated record at 21"),
    "cut_footer": (lambda g: g[:SECOND + 12 + len(RECORDS[1]) + 2], 1, "truncated record at 21"),
    "cut_header": (lambda g: g[:SECOND + 5], 1, "truncated record at 21"),  # TF: quiet end
    "cut_last": (lambda g: g[:-1], 3, "truncated record at 69"),
}


def _make(tmp_path, name):
    path = tmp_path / (name + ".tfrecord")
    path.write_bytes(CASES[name][0](_good(tmp_path)))
    return str(path)


def _read(ds, n, initializable=False, runs=1):
    """n get_next results per run: values, or (error class name, message)."""
    with tx.Graph().as_default():
        ds = ds()
        it = (tx.data.make_initializable_iterator(ds) if initializable
              else tx.data.make_one_shot_iterator(ds))
        nxt = it.get_next()
        out = []
        with tx.Session() as sess:
            for _ in range(runs):
                if initializable:
                    sess.run(it.initializer)
                for _ in range(n):
                    try:
                        out.append(sess.run(nxt))
                    except tx.errors.OpError as e:
                        out.append((type(e).__name__, e.message))
        return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_data_loss_is_repeated_on_later_reads(tmp_path, name):
    path = _make(tmp_path, name)
    _, before, where = CASES[name]
    got = _read(lambda: tx.data.TFRecordDataset(path), before + 4)
    assert got[:before] == RECORDS[:before]
    errors = got[before:]
    for e in errors:
        assert isinstance(e, tuple) and e[0] == "DataLossError", errors
        assert where + " in file '" + path + "'" in e[1], e[1]
    assert len({e[1] for e in errors}) == 1, errors  # the same error every time


@pytest.mark.parametrize("name", ["data", "cut_data"])
def test_initializer_starts_a_fresh_pass(tmp_path, name):
    path = _make(tmp_path, name)
    got = _read(lambda: tx.data.TFRecordDataset(path), 3, initializable=True, runs=2)
    assert got[0] == got[3] == b"alpha"
    assert all(isinstance(e, tuple) and e[0] == "DataLossError" for e in got[1:3] + got[4:])


def test_gzip_offsets_are_in_the_uncompressed_stream(tmp_path):
    raw = CASES["data"][0](_good(tmp_path))
    path = tmp_path / "data.tfrecord.gz"
    path.write_bytes(gzip.compress(raw, mtime=0))
    got = _read(lambda: tx.data.TFRecordDataset(str(path), "GZIP"), 3)
    assert got[0] == b"alpha"
    for e in got[1:]:
        assert e[0] == "DataLossError" and "corrupted record at 33 in file" in e[1], e


def test_a_later_file_is_not_read_after_a_data_loss(tmp_path):
    bad = _make(tmp_path, "data")
    good = str(tmp_path / "good.tfrecord")
    got = _read(lambda: tx.data.TFRecordDataset([bad, good]), 4)
    assert got[0] == b"alpha"
    assert all(e[0] == "DataLossError" for e in got[1:])  # TF would go on with `good`


@pytest.mark.parametrize("name", sorted(CASES))
def test_ignore_errors_skips_the_rest_of_the_file(tmp_path, name):
    path = _make(tmp_path, name)
    before = CASES[name][1]
    ignoring = tx.data.experimental.ignore_errors()
    got = _read(lambda: tx.data.TFRecordDataset(path).apply(ignoring), before + 2)
    assert got[:before] == RECORDS[:before]
    assert [e[0] for e in got[before:]] == ["OutOfRangeError"] * 2
    # With a second file, reading goes on with it (as TF).
    good = str(tmp_path / "good.tfrecord")
    got = _read(lambda: tx.data.TFRecordDataset([path, good]).apply(ignoring),
                before + len(RECORDS) + 1)
    assert got[:-1] == RECORDS[:before] + RECORDS
    assert got[-1][0] == "OutOfRangeError"


def test_ignore_errors_through_map_and_prefetch(tmp_path):
    path = _make(tmp_path, "cut_last")
    got = _read(lambda: tx.data.TFRecordDataset(path).map(tx.identity).prefetch(2).apply(
        tx.data.experimental.ignore_errors(log_warning=True)), 4)
    assert got[:3] == RECORDS[:3]
    assert got[3][0] == "OutOfRangeError"


def test_missing_file(tmp_path):
    good = str(tmp_path / "good.tfrecord")
    _good(tmp_path)
    missing = str(tmp_path / "missing.tfrecord")
    got = _read(lambda: tx.data.TFRecordDataset([missing, good]), 3)
    assert [e[0] for e in got] == ["NotFoundError"] * 3  # as TF: the same error again
    got = _read(lambda: tx.data.TFRecordDataset([missing, good]).apply(
        tx.data.experimental.ignore_errors()), len(RECORDS) + 1)
    assert got[:-1] == RECORDS and got[-1][0] == "OutOfRangeError"  # TF retries forever


def test_ignore_errors_drops_failing_map_elements():
    # TF's own example: 1/x checked for Inf drops the element 0.
    got = _read(lambda: tx.data.Dataset.from_tensor_slices(np.array([1., 2., 0., 4.], np.float32))
                .map(lambda x: tx.debugging.check_numerics(1. / x, "error"))
                .apply(tx.data.experimental.ignore_errors()), 4)
    assert got[:3] == [1.0, 0.5, 0.25]
    assert got[3][0] == "OutOfRangeError"


def test_apply_needs_a_dataset():
    with tx.Graph().as_default():
        ds = tx.data.Dataset.range(3)
        assert ds.apply(lambda d: d.take(2)).output_types == tx.int64
        with pytest.raises(TypeError, match="must return"):
            ds.apply(lambda d: 5)


def test_text_line_dataset_truncated_gzip_is_sticky(tmp_path):
    path = tmp_path / "lines.txt.gz"
    path.write_bytes(gzip.compress(b"".join(b"line %d\n" % i for i in range(2000)))[:-40])
    got = _read(lambda: tx.data.TextLineDataset(str(path)), 2005)
    errors = [e for e in got if isinstance(e, tuple)]
    assert errors and all(e[0] == "DataLossError" for e in errors), errors[:2]
    assert len({e[1] for e in errors}) == 1  # the same error, never an end of data
