"""tx.train.Server in this process and tx.Session("grpc://..."): graphs built with the Python
API run through a server's master (variables, optimizer steps, device requests over the tasks
of a two-task cluster), with the same values as the in-process session."""

import numpy as np
import pytest

import tensorflux as tx


def _train_steps(target, steps=3):
    """w (requested on the last task) trained by gradient descent on a least-squares loss; the
    values of w after each step."""
    g = tx.Graph()
    with g.as_default():
        x = tx.placeholder(tx.float32, [None, 2], name="x")
        y = tx.placeholder(tx.float32, [None, 1], name="y")
        with tx.device("/job:worker/task:1"):
            w = tx.Variable([[0.5], [-0.25]], name="w")
        pred = tx.matmul(x, w)
        loss = tx.reduce_mean(tx.square(pred - y))
        train = tx.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = tx.global_variables_initializer()
    xs = np.array([[1, 2], [3, -1], [0.5, 0.25]], np.float32)
    ys = np.array([[1], [2], [-1]], np.float32)
    out = []
    with tx.Session(target, graph=g) as sess:
        sess.run(init)
        for _ in range(steps):
            sess.run(train, {x: xs, y: ys})
            out.append(sess.run(w))
    return out, xs, ys


@pytest.fixture
def cluster():
    """Two in-process servers, tasks 0 and 1 of job "worker", on free ports."""
    import socket
    ports = []
    for _ in range(2):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        ports.append(s.getsockname()[1])
        s.close()
    spec = {"worker": ["127.0.0.1:%d" % p for p in ports]}
    servers = [tx.train.Server(spec, job_name="worker", task_index=i) for i in range(2)]
    yield servers
    for s in servers:
        s.stop()


def test_server_target_and_local_server():
    server = tx.train.Server.create_local_server()
    assert server.target.startswith("grpc://127.0.0.1:")
    assert not server.target.endswith(":0")
    with tx.Graph().as_default():
        a = tx.constant([1.0, 2.0])
        b = a * 3
        with tx.Session(server.target) as sess:
            np.testing.assert_array_equal(sess.run(b), [3.0, 6.0])
            names = [d.name for d in sess.list_devices()]
            assert names == ["/job:localhost/replica:0/task:0/device:CPU:0"]
    server.stop()


def test_training_over_two_tasks_matches_local(cluster):
    remote, xs, ys = _train_steps(cluster[0].target)
    local, _, _ = _train_steps("")
    for r, l in zip(remote, local):
        np.testing.assert_allclose(r, l, rtol=1e-6)
    # By hand (float64): w <- w - 0.1 * 2/n * X^T (X w - y).
    w = np.array([[0.5], [-0.25]])
    for step in range(3):
        w = w - 0.1 * 2 / len(xs) * xs.T.astype(np.float64) @ (xs @ w - ys)
        np.testing.assert_allclose(remote[step], w, rtol=1e-5)


def test_errors_come_back_with_their_types(cluster):
    with tx.Graph().as_default():
        x = tx.placeholder(tx.float32, [2], name="x")
        y = x + 1
        with tx.Session(cluster[1].target) as sess:
            np.testing.assert_array_equal(sess.run(y, {x: [1, 2]}), [2, 3])
            with pytest.raises(tx.errors.InvalidArgumentError):
                sess.run(y)  # x not fed
            with pytest.raises(tx.errors.InvalidArgumentError):
                sess.run(y, {x: [1, 2, 3]})  # incompatible with x's shape


def test_unreachable_master_is_unavailable():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with tx.Graph().as_default():
        c = tx.constant(1.0)
        with pytest.raises(tx.errors.UnavailableError):
            with tx.Session("grpc://127.0.0.1:%d" % port) as sess:
                sess.run(c)


def test_traced_step_has_every_task(cluster):
    """FULL_TRACE over the cluster: step stats of both tasks' devices, a Chrome trace naming
    them, and the partition graphs with the cross-task _Send/_Recv."""
    import json
    with tx.Graph().as_default():
        x = tx.placeholder(tx.float32, [3], name="x")
        with tx.device("/job:worker/task:1"):
            y = tx.square(x)
        z = y + 1.0
        with tx.Session(cluster[0].target) as sess:
            meta = tx.RunMetadata()
            out = sess.run(z, {x: [1, 2, 3]},
                           options=tx.RunOptions(trace_level=tx.RunOptions.FULL_TRACE,
                                                 output_partition_graphs=True),
                           run_metadata=meta)
            np.testing.assert_array_equal(out, [2, 5, 10])
    devices = {d.device for d in meta.step_stats.dev_stats if d.node_stats}
    assert devices == {"/job:worker/replica:0/task:0/device:CPU:0",
                       "/job:worker/replica:0/task:1/device:CPU:0"}
    trace = json.loads(tx.timeline.Timeline(meta.step_stats).generate_chrome_trace_format())
    names = json.dumps(trace)
    assert "task:1" in names and "task:0" in names
    ops = [n.op for g in meta.partition_graphs for n in g.node]
    assert ops.count("_Send") >= 2 and ops.count("_Recv") >= 2


def test_feeds_and_fetches_of_every_kind_round_trip(cluster):
    """Feeds through Identity on each task come back unchanged: strings with NULs, an empty
    array, a scalar, int64 and a 1 MiB float array (sent from their buffers, master_coding.h)."""
    rng = np.random.default_rng(3)
    values = [
        np.array([b"", b"a\x00b", b"z" * 5000], dtype=object),
        np.zeros((0, 3), np.float32),
        np.array(True),
        np.arange(-3, 3, dtype=np.int64).reshape(2, 3),
        rng.standard_normal((512, 512)).astype(np.float32),
    ]
    dtypes = [tx.string, tx.float32, tx.bool, tx.int64, tx.float32]
    with tx.Graph().as_default():
        feeds, fetches = [], []
        for task in range(2):
            with tx.device("/job:worker/task:%d" % task):
                for v, dt in zip(values, dtypes):
                    p = tx.placeholder(dt, v.shape)
                    feeds.append(p)
                    fetches.append(tx.identity(p))
        with tx.Session(cluster[0].target) as sess:
            out = sess.run(fetches, dict(zip(feeds, values + values)))
    for got, want in zip(out, values + values):
        assert got.shape == want.shape
        if want.dtype == object:
            assert list(got.ravel()) == list(want.ravel())
        else:
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_large_tensors_cross_tasks_intact_step_after_step(cluster):
    """A 3 MiB variable on task 1 read by task 0 every step: its first transfer takes the unary
    RecvTensor, the later ones RecvTensorStream (recv_tensor_stream.h: in pieces copied as they
    arrive); every step's values arrive intact."""
    n = 3 * 2**20 // 4 + 3  # not a multiple of the piece size
    init = np.arange(n, dtype=np.float32) * 0.5
    with tx.Graph().as_default():
        with tx.device("/job:worker/task:1"):
            v = tx.Variable(init, name="big")
            bump = v.assign_add(tx.ones([n]))
        with tx.device("/job:worker/task:0"):
            doubled = v * 2.0
        with tx.Session(cluster[0].target) as sess:
            sess.run(tx.global_variables_initializer())
            for step in range(4):
                np.testing.assert_array_equal(sess.run(doubled), (init + step) * 2)
                sess.run(bump)
