"""tx.summary: summary ops run in a session, FileWriter's event files read back record by record
(CRC-checked by the TFRecord reader) and compared with the values fed."""

import glob
import os
import re
import socket

import numpy as np
import pytest

import event_files
import tensorflux as tx


@pytest.fixture
def graph():
    with tx.Graph().as_default() as g:
        yield g


def _events(logdir):
    files = glob.glob(os.path.join(str(logdir), "events.out.tfevents.*"))
    assert len(files) == 1, files
    return list(tx.train.summary_iterator(files[0]))


def test_scalar_histogram_merge_all(graph, tmp_path):
    x = tx.placeholder(tx.float32, [None], name="x")
    with tx.name_scope("train"):
        s1 = tx.summary.scalar("avg", tx.reduce_mean(x))
    s2 = tx.summary.histogram("values", x)
    merged = tx.summary.merge_all()
    assert set(tx.get_collection(tx.GraphKeys.SUMMARIES)) == {s1, s2}
    data = np.array([0.5, -1.0, 2.0, 1e-3], np.float32)
    with tx.Session() as sess:
        out = sess.run(merged, {x: data})
    s = tx.Summary()
    s.ParseFromString(out)
    by_tag = {v.tag: v for v in s.value}
    assert set(by_tag) == {"train/avg", "values"}
    assert by_tag["train/avg"].simple_value == pytest.approx(data.mean(), rel=1e-6)
    h = by_tag["values"].histo
    assert h.num == 4 and h.min == -1.0 and h.max == 2.0
    assert h.sum == pytest.approx(float(data.astype(np.float64).sum()), rel=1e-12)
    assert h.sum_squares == pytest.approx(float((data.astype(np.float64) ** 2).sum()), rel=1e-12)
    limits = np.array(h.bucket_limit)
    counts = np.array(h.bucket)
    lower = np.concatenate([[-np.inf], limits[:-1]])
    expect = [np.sum((data >= lo) & (data < hi)) for lo, hi in zip(lower, limits)]
    np.testing.assert_array_equal(counts, expect)


def test_histogram_nan_names_tag(graph):
    x = tx.placeholder(tx.float32, [2])
    h = tx.summary.histogram("acts", x)
    with tx.Session() as sess:
        with pytest.raises(tx.errors.InvalidArgumentError, match="histogram for: acts"):
            sess.run(h, {x: np.array([1.0, np.nan], np.float32)})


def test_scalar_needs_a_scalar(graph):
    with pytest.raises(ValueError, match="needs a scalar"):
        tx.summary.scalar("v", tx.constant([1.0, 2.0]))


def test_file_writer_round_trip(graph, tmp_path):
    loss = tx.placeholder(tx.float32, [], name="loss_value")
    summ = tx.summary.scalar("loss", loss)
    logdir = tmp_path / "run" / "sub"
    with tx.summary.FileWriter(str(logdir), graph=graph, filename_suffix=".t") as w:
        assert w.filename.endswith(".t")
        with tx.Session() as sess:
            for step, value in enumerate([2.5, 1.25, 0.5]):
                w.add_summary(sess.run(summ, {loss: value}), global_step=step)
        w.add_scalars({"images_per_sec": 1234.5, "learning_rate": 1e-3}, global_step=3)
        w.add_session_log(tx.SessionLog(status=tx.SessionLog.CHECKPOINT,
                                        checkpoint_path="/x/model.ckpt-3"), global_step=3)
    events = _events(logdir)
    assert events[0].file_version == "brain.Event:2"
    g = tx.GraphDef()
    g.ParseFromString(events[1].graph_def)
    assert "loss_value" in {n.name for n in g.node}
    scalars = [(e.step, e.summary.value[0].tag, e.summary.value[0].simple_value)
               for e in events[2:5]]
    assert scalars == [(0, "loss", 2.5), (1, "loss", 1.25), (2, "loss", 0.5)]
    extra = {v.tag: v.simple_value for v in events[5].summary.value}
    assert extra == {"images_per_sec": 1234.5, "learning_rate": pytest.approx(1e-3)}
    assert events[6].session_log.checkpoint_path == "/x/model.ckpt-3"
    assert all(e.wall_time > 1.6e9 for e in events)


def test_file_writer_flushes_at_max_queue(graph, tmp_path):
    w = tx.summary.FileWriter(str(tmp_path), max_queue=2, flush_secs=1e9)
    w.add_scalars({"a": 1.0}, 0)
    w.add_scalars({"a": 2.0}, 1)  # the second add reaches max_queue: flushed without close()
    assert [e.step for e in _events(tmp_path)[1:]] == [0, 1]
    w.close()
    with pytest.raises(RuntimeError, match="closed"):
        w.add_scalars({"a": 3.0}, 2)


def test_event_file_checked_in_python(graph, tmp_path):
    assert event_files.crc32c(b"123456789") == 0xE3069283  # CRC-32C's check value
    assert event_files.crc32c(b"") == 0
    tx.constant(1.0, name="c")
    with tx.summary.FileWriter(str(tmp_path), graph=graph) as w:
        w.add_scalars({"loss": 2.5, "accuracy": 0.25}, 1)
        w.add_scalars({"loss": 1.5}, 2)
    (path,) = event_files.event_files(tmp_path)
    events = event_files.read_events(path)
    assert len(events) == 4
    assert event_files.scalars(events) == {"loss": [(1, 2.5), (2, 1.5)], "accuracy": [(1, 0.25)]}
    assert [n.name for n in event_files.graph_def(events).node] == ["c"]


# Byte offsets into the second record (the first event after the file_version header): its
# length, the length's CRC, its data, and the data's CRC.
@pytest.mark.parametrize("where,what", [(0, "length CRC"), (9, "length CRC"),
                                        (14, "data CRC"), (-2, "data CRC")])
def test_corrupt_event_file_is_data_loss(graph, tmp_path, where, what):
    with tx.summary.FileWriter(str(tmp_path)) as w:
        w.add_scalars({"a": 1.0}, 0)
        path = w.filename
    raw = bytearray(open(path, "rb").read())
    second = 16 + int.from_bytes(raw[:8], "little")
    raw[second + where if where >= 0 else len(raw) + where] ^= 0x01
    open(path, "wb").write(bytes(raw))
    with pytest.raises(tx.errors.DataLossError, match="%s.*%s" % (os.path.basename(path), what)):
        list(tx.train.summary_iterator(path))
    with pytest.raises(ValueError, match="%s mismatch at offset %d" % (what, second)):
        event_files.tfrecord_records(path)


def test_add_summary_type_error(graph, tmp_path):
    with tx.summary.FileWriter(str(tmp_path)) as w:
        with pytest.raises(TypeError, match="Summary proto"):
            w.add_summary(3.0)


def _stamp(path):
    return os.path.basename(path).split(".")[3]


@pytest.mark.parametrize("suffix", [None, ".v1"])
def test_two_writers_in_one_second_keep_their_events(graph, tmp_path, suffix):
    # Two FileWriters of one directory opened in the same second: each gets its own file
    # ("events.out.tfevents.<seconds>.<host>.<pid>.<n><suffix>", TF 2.15's summary writers'
    # scheme) and neither truncates the other's events.
    for attempt in range(5):
        logdir = tmp_path / str(attempt)
        w1 = tx.summary.FileWriter(str(logdir), filename_suffix=suffix)
        w2 = tx.summary.FileWriter(str(logdir), filename_suffix=suffix)
        if _stamp(w1.filename) == _stamp(w2.filename):
            break
        w1.close()
        w2.close()
    assert w1.filename != w2.filename
    w1.add_scalars({"a": 1.0}, 1)
    w2.add_scalars({"b": 2.0}, 2)
    w1.close()
    w2.close()
    files = sorted(glob.glob(os.path.join(str(logdir), "events.out.tfevents.*")))
    assert files == sorted([w1.filename, w2.filename])
    pattern = r"events\.out\.tfevents\.\d{10}\.%s\.%d\.\d+%s$" % (
        re.escape(socket.gethostname()), os.getpid(), re.escape(suffix or ""))
    for w in (w1, w2):
        assert re.search(pattern, w.filename), w.filename
    assert event_files.scalars(event_files.read_events(w1.filename)) == {"a": [(1, 1.0)]}
    assert event_files.scalars(event_files.read_events(w2.filename)) == {"b": [(2, 2.0)]}
