"""TensorFlow arguments that TensorFlux used to swallow or ignore, now implemented (issue 19):
each test checks the behaviour TF 2.15 has for it (values noted from runs of the oracle)."""

import glob
import os
import socket

import numpy as np
import pytest

import event_files
import tensorflux as tx


def run(fetches, feed=None):
    with tx.Session() as sess:
        sess.run(tx.global_variables_initializer())
        return sess.run(fetches, feed)


# ---------------------------------------------------------------- ops

def test_reduction_v1_spellings(graph):
    x = tx.constant([[1, 2], [3, 4]])
    # TF: reduce_sum(x, reduction_indices=[1], keep_dims=True) == [[3], [7]].
    np.testing.assert_array_equal(run(tx.reduce_sum(x, reduction_indices=[1], keep_dims=True)),
                                  [[3], [7]])
    np.testing.assert_array_equal(run(tx.reduce_max(x, reduction_indices=0)), [3, 4])
    assert run(tx.reduce_mean(x, keepdims=None)) == 2
    with pytest.raises(ValueError, match="both 'axis' and 'reduction_indices'"):
        tx.reduce_sum(x, axis=0, reduction_indices=0)
    with pytest.raises(ValueError, match="both 'keepdims' and 'keep_dims'"):
        tx.reduce_sum(x, keepdims=True, keep_dims=True)


def test_unconnected_gradients(graph):
    x = tx.constant([1.0, 2.0])
    v = tx.Variable([[1.0, 2.0]], name="v")
    y = tx.constant(2.0) * 3.0
    assert tx.gradients(y, [x]) == [None]
    gx, gv = tx.gradients(y, [x, v], unconnected_gradients="zero")
    gx2, = tx.gradients(y, [x], unconnected_gradients=tx.UnconnectedGradients.ZERO)
    out = run([gx, gv, gx2])
    np.testing.assert_array_equal(out[0], [0.0, 0.0])
    np.testing.assert_array_equal(out[1], [[0.0, 0.0]])
    np.testing.assert_array_equal(out[2], [0.0, 0.0])
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tx.gradients(y, [x], unconnected_gradients="bad")
    assert tx.AggregationMethod.DEFAULT == tx.AggregationMethod.ADD_N == 0


def test_make_tensor_proto_allow_broadcast():
    # TF: a one-element value fills the shape; any other must match it exactly.
    np.testing.assert_array_equal(
        tx.make_ndarray(tx.make_tensor_proto([3], shape=[3], allow_broadcast=True)), [3, 3, 3])
    np.testing.assert_array_equal(
        tx.make_ndarray(tx.make_tensor_proto([1, 2], shape=[2, 2])), [[1, 2], [2, 2]])
    with pytest.raises(TypeError, match="Expected Tensor's shape"):
        tx.make_tensor_proto([1, 2], shape=[2, 2], allow_broadcast=True)
    with pytest.raises(ValueError, match="not both allowed"):
        tx.make_tensor_proto(1, shape=[2], verify_shape=True, allow_broadcast=True)


def test_cross_entropy_takes_positional_labels_and_logits(graph):
    # TF 2.15 dropped the _sentinel: f(labels, logits) works.
    logits = np.array([[1.0, 2.0, 0.5]], np.float32)
    a = tx.nn.sigmoid_cross_entropy_with_logits(np.ones_like(logits), logits)
    b = tx.nn.sigmoid_cross_entropy_with_logits(labels=np.ones_like(logits), logits=logits)
    np.testing.assert_array_equal(*run([a, b]))


def test_unsupported_arguments_are_named(graph):
    cases = [
        (lambda: tx.matmul([[1]], [[1]], output_type=tx.int64), "output_type"),
        (lambda: tx.zeros([2], layout=object()), "layout"),
        (lambda: tx.Variable(1.0, use_resource=False), "use_resource"),
        (lambda: tx.Variable(1.0, synchronization=1), "synchronization"),
        (lambda: tx.get_variable("w", [1], partitioner=lambda *a: None), "partitioner"),
        (lambda: tx.layers.BatchNormalization(renorm=True), "renorm"),
        (lambda: tx.layers.BatchNormalization(virtual_batch_size=2), "virtual_batch_size"),
        (lambda: tx.summary.FileWriter("/nonexistent/never", session=object()), "session"),
        (lambda: tx.DType(1, handle_data=object()), "handle_data"),
    ]
    for fn, what in cases:
        with pytest.raises(NotImplementedError, match=what):
            fn()


# ---------------------------------------------------------------- variables

def test_variable_shape_and_caching_device(graph):
    v = tx.Variable(tx.zeros([2]), shape=tx.TensorShape([None]), name="v")
    assert v.shape.as_list() == [None]
    with pytest.raises(ValueError, match="shape"):
        tx.Variable(tx.zeros([2]), shape=[3])
    # caching_device: value() is the one read cached at creation (as TF), so a use inside
    # control_dependencies does not see a later assignment.
    c = tx.Variable(2.0, caching_device="/cpu:0", name="c")
    assert c.value() is c.value()
    with tx.control_dependencies([c.assign(3.0)]):
        y = c + 0.0
    with tx.Session() as sess:
        sess.run(c.initializer)
        assert sess.run(y) == 2.0


def test_constraint_is_applied_after_each_update(graph):
    def clip(w):
        return tx.clip_by_value(w, -1.0, 1.0)
    v = tx.Variable([0.5, -0.5], constraint=clip, name="v")
    assert v.constraint is clip
    loss = tx.reduce_sum(v * tx.constant([-10.0, 10.0]))
    train = tx.train.GradientDescentOptimizer(1.0).minimize(loss)
    with tx.Session() as sess:
        sess.run(v.initializer)
        sess.run(train)  # 0.5 + 10 and -0.5 - 10, clipped
        np.testing.assert_array_equal(sess.run(v), [1.0, -1.0])
    with tx.variable_scope("s", constraint=clip):
        w = tx.get_variable("w", [2])
    assert w.constraint is clip
    layer = tx.layers.Dense(2, kernel_constraint=clip)
    layer(tx.zeros([1, 3]))
    assert layer.kernel.constraint is clip and layer.bias.constraint is None


# ---------------------------------------------------------------- data

def _drain(ds):
    nxt = tx.data.make_one_shot_iterator(ds).get_next()
    out = []
    with tx.Session() as sess:
        while True:
            try:
                out.append(sess.run(nxt))
            except tx.errors.OutOfRangeError:
                return out


def test_tfrecord_num_parallel_reads_interleaves_like_tf(graph, tmp_path):
    paths = []
    for i, n in enumerate([3, 1, 2]):
        path = str(tmp_path / ("f%d" % i))
        with tx.io.TFRecordWriter(path) as w:
            for j in range(n):
                w.write(b"%d-%d" % (i, j))
        paths.append(path)
    assert _drain(tx.data.TFRecordDataset(paths)) == [b"0-0", b"0-1", b"0-2", b"1-0", b"2-0",
                                                       b"2-1"]
    # TF 2.15, num_parallel_reads=2: two files at a time, one record from each in turn.
    assert _drain(tx.data.TFRecordDataset(paths, num_parallel_reads=2)) == [
        b"0-0", b"1-0", b"0-1", b"0-2", b"2-0", b"2-1"]


def test_csv_exclude_cols_and_zip_args(graph, tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("1,2,3,4\n5,6,7,8\n")
    rows = _drain(tx.data.experimental.CsvDataset(str(path), [tx.int32, tx.int32],
                                                  exclude_cols=[0, 2]))
    assert [tuple(int(v) for v in r) for r in rows] == [(2, 4), (6, 8)]
    with pytest.raises(ValueError):
        tx.data.experimental.CsvDataset(str(path), [tx.int32], select_cols=[0],
                                        exclude_cols=[1])
    a, b = tx.data.Dataset.range(2), tx.data.Dataset.range(10, 12)
    assert [tuple(map(int, e)) for e in _drain(tx.data.Dataset.zip(a, b))] == [(0, 10),
                                                                              (1, 11)]
    with pytest.raises(TypeError, match="cannot be set"):
        tx.data.Dataset.zip(a, datasets=(a, b))
    named = tx.data.Dataset.range(3).map(lambda x: x * 2, name="doubled")
    assert named._variant_tensor.op.name.endswith("doubled")  # pylint: disable=protected-access


# ---------------------------------------------------------------- training

def test_server_start_false_serves_from_start():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = tx.train.Server({"local": ["127.0.0.1:%d" % port]}, start=False)
    assert server.target == "grpc://127.0.0.1:%d" % port
    with socket.socket() as probe:  # not listening yet
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    server.start()
    server.start()  # a second start() is a no-op
    try:
        with tx.Graph().as_default(), tx.Session(server.target) as sess:
            assert sess.run(tx.constant(2.0) * 3.0) == 6.0
    finally:
        server.stop()


def test_monitored_training_session_writes_tf_summaries(tmp_path):
    ckpt = str(tmp_path)
    tx.summary.FileWriterCache.clear()
    with tx.Graph().as_default():
        step = tx.train.get_or_create_global_step()
        w = tx.Variable(1.0, name="w")
        loss = tx.square(w)
        tx.summary.scalar("loss", loss)
        train = tx.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        with tx.train.MonitoredTrainingSession(
                checkpoint_dir=ckpt, save_summaries_steps=2, log_step_count_steps=2,
                save_checkpoint_steps=100,
                hooks=[tx.train.StopAtStepHook(last_step=5)]) as sess:
            while not sess.should_stop():
                sess.run(train)
    tx.summary.FileWriterCache.clear()
    (path,) = glob.glob(os.path.join(ckpt, "events.out.tfevents.*"))
    events = event_files.read_events(path)
    scalars = event_files.scalars(events)
    assert [s for s, _ in scalars["loss"]] == [1, 3, 5]  # first step, then every 2 steps
    assert [s for s, _ in scalars["global_step/sec"]] == [3, 5]
    logs = [(e.step, e.session_log.status) for e in events if e.HasField("session_log")]
    assert (1, tx.SessionLog.START) in logs
    assert [s for s, status in logs if status == tx.SessionLog.CHECKPOINT] == [0, 5]
    assert any(e.meta_graph_def for e in events)
    assert os.path.exists(os.path.join(ckpt, "graph.pbtxt"))
    assert os.path.exists(os.path.join(ckpt, "model.ckpt-5.meta"))


def test_scaffold_local_init_feed_dict(graph):
    p = tx.placeholder(tx.float32, [], name="p")
    local = tx.Variable(0.0, collections=[tx.GraphKeys.LOCAL_VARIABLES], name="local")
    init_local = local.assign(p, read_value=False)
    read = local.value()  # before the session finalizes the graph (as in TF)
    scaffold = tx.train.Scaffold(local_init_op=init_local, local_init_feed_dict={p: 7.0})
    with tx.train.MonitoredSession(
            tx.train.ChiefSessionCreator(scaffold=scaffold)) as sess:
        assert sess.run(read) == 7.0
