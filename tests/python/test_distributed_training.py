"""Distributed training over gRPC (issue 7): a ps task and two worker tasks as in-process
tx.train.Server objects on free loopback ports; each worker is a thread with its own graph and
its own session on its task's master (between-graph replication), as separate processes would
be. Synchronous training (SyncReplicasOptimizer) equals the numpy mean-gradient computation;
asynchronous training applies every worker's gradient. Skipped when this build has no
tx.train.Server."""

import socket

import numpy as np
import pytest

import tensorflux as tx
from conftest import run_in_threads

pytestmark = pytest.mark.skipif(not hasattr(tx.train, "Server"),
                                reason="no tx.train.Server (the gRPC runtime) in this build")

K, LR, WORKERS = 3, 0.05, 2


def _free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


@pytest.fixture
def cluster():
    ps, w0, w1 = _free_ports(3)
    spec = tx.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ps],
                                 "worker": ["127.0.0.1:%d" % w0, "127.0.0.1:%d" % w1]})
    servers = {("ps", 0): tx.train.Server(spec, job_name="ps", task_index=0)}
    for i in range(WORKERS):
        servers[("worker", i)] = tx.train.Server(spec, job_name="worker", task_index=i)
    yield spec, servers
    for s in servers.values():
        s.stop()


def _data():
    rng = np.random.RandomState(7)
    return rng.randn(WORKERS, 4, 2), rng.randn(WORKERS, 4, 1), rng.randn(2, 1)



def test_sync_replicas_over_grpc_equal_the_mean_gradient(cluster):
    spec, servers = cluster
    xs, ys, w0 = _data()
    results = {}

    def worker(i):
        with tx.Graph().as_default():
            with tx.device(tx.train.replica_device_setter(
                    cluster=spec, worker_device="/job:worker/task:%d" % i)):
                step = tx.train.get_or_create_global_step()
                w = tx.Variable(w0, name="w")
                loss = tx.reduce_mean(tx.square(tx.matmul(tx.constant(xs[i]), w) - ys[i]))
                opt = tx.train.SyncReplicasOptimizer(tx.train.GradientDescentOptimizer(LR),
                                                     replicas_to_aggregate=WORKERS,
                                                     total_num_replicas=WORKERS)
                train = opt.minimize(loss, global_step=step)
            assert w.device == "/job:ps/task:0"
            hooks = [opt.make_session_run_hook(is_chief=(i == 0), num_tokens=0),
                     tx.train.StopAtStepHook(last_step=K)]
            target = servers[("worker", i)].target
            if i == 0:
                creator = tx.train.ChiefSessionCreator(master=target)
            else:
                creator = tx.train.WorkerSessionCreator(master=target, max_wait_secs=60,
                                                        recovery_wait_secs=0.2)
            runs = 0
            with tx.train.MonitoredSession(creator, hooks=hooks,
                                           stop_grace_period_secs=2) as sess:
                while not sess.should_stop():
                    sess.run(train, options=tx.RunOptions(timeout_in_ms=30000))
                    runs += 1
            results[i] = runs

    run_in_threads(worker, WORKERS)
    assert results == {0: K, 1: K}
    # The variables on the ps, read through a fresh session on worker 1's master.
    with tx.Graph().as_default():
        with tx.device("/job:ps/task:0"):
            step = tx.train.get_or_create_global_step()
            w = tx.Variable(w0, name="w")
        with tx.Session(servers[("worker", 1)].target) as sess:
            got_w, got_step = sess.run([w, step])
    assert got_step == K
    want = w0.copy()
    for _ in range(K):
        grads = [2 * xs[i].T @ (xs[i] @ want - ys[i]) / 4 for i in range(WORKERS)]
        want = want - LR * np.mean(grads, axis=0)
    np.testing.assert_allclose(got_w, want, rtol=1e-12)


def test_async_replicas_over_grpc_apply_every_gradient(cluster):
    spec, servers = cluster
    rng = np.random.RandomState(8)
    cs = rng.randn(WORKERS, 3)
    w0 = rng.randn(3)

    def graph(i):
        with tx.device(tx.train.replica_device_setter(
                cluster=spec, worker_device="/job:worker/task:%d" % i)):
            step = tx.train.get_or_create_global_step()
            w = tx.Variable(w0, name="w")
            train = tx.train.GradientDescentOptimizer(LR).minimize(tx.reduce_sum(w * cs[i]),
                                                                   global_step=step)
        return step, w, train

    with tx.Graph().as_default():
        _, _, _ = graph(0)
        with tx.Session(servers[("worker", 0)].target) as sess:
            sess.run(tx.global_variables_initializer())

    def worker(i):
        with tx.Graph().as_default():
            _, _, train = graph(i)
            with tx.Session(servers[("worker", i)].target) as sess:
                for _ in range(K):
                    sess.run(train)

    run_in_threads(worker, WORKERS)
    with tx.Graph().as_default():
        step, w, _ = graph(1)
        with tx.Session(servers[("worker", 1)].target) as sess:
            got_w, got_step = sess.run([w, step])
    assert got_step == WORKERS * K
    np.testing.assert_allclose(got_w, w0 - LR * K * cs.sum(0), rtol=1e-12)


def test_in_graph_towers_on_the_worker_tasks(cluster):
    """One client, one tower per worker task, variables on the ps, gradients averaged and
    applied once per step, batch norm synchronized across the tasks: the same values as the
    same graph on the local session's devices (numpy for the weights)."""
    spec, servers = cluster
    xs, ys, w0 = _data()

    def build(devices, ps_device):
        with tx.device(ps_device):
            step = tx.train.get_or_create_global_step()
        opt = tx.train.GradientDescentOptimizer(LR)
        tower_grads, hs = [], []
        for i in tx.train.towers(devices):
            with tx.device(ps_device):
                w = tx.get_variable("w", dtype=tx.float64, initializer=tx.constant(w0))
            hs.append(tx.matmul(tx.constant(xs[i]), w))
            loss = tx.reduce_mean(tx.square(hs[-1] - ys[i]))
            tower_grads.append(opt.compute_gradients(loss, var_list=[w]))
        normed = tx.nn.sync_batch_normalization(hs, offset=None, scale=None,
                                                variance_epsilon=1e-3)
        with tx.device(ps_device):
            train = opt.apply_gradients(tx.train.average_gradients(tower_grads),
                                        global_step=step)
        return step, w, train, tx.concat(normed, 0)

    def run(target, devices, ps_device, config=None):
        with tx.Graph().as_default():
            step, w, train, normed = build(devices, ps_device)
            with tx.Session(target, config=config) as sess:
                sess.run(tx.global_variables_initializer())
                for _ in range(K):
                    sess.run(train)
                return sess.run([step, w, normed])

    remote = run(servers[("worker", 0)].target,
                 ["/job:worker/task:%d" % i for i in range(WORKERS)], "/job:ps/task:0")
    local = run("", ["/device:CPU:%d" % i for i in range(WORKERS)], "/device:CPU:%d" % WORKERS,
                tx.ConfigProto(device_count={"CPU": WORKERS + 1}, allow_soft_placement=False))
    assert remote[0] == local[0] == K
    np.testing.assert_allclose(remote[1], local[1], rtol=1e-12)
    np.testing.assert_allclose(remote[2], local[2], rtol=1e-12)
    want = w0.copy()
    for _ in range(K):
        grads = [2 * xs[i].T @ (xs[i] @ want - ys[i]) / 4 for i in range(WORKERS)]
        want = want - LR * np.mean(grads, axis=0)
    np.testing.assert_allclose(remote[1], want, rtol=1e-12)
    h = np.concatenate([xs[i] @ want for i in range(WORKERS)], 0)
    np.testing.assert_allclose(remote[2], (h - h.mean(0)) / np.sqrt(h.var(0) + 1e-3),
                               rtol=1e-9, atol=1e-12)


def test_initialization_is_consistent_across_replicas(cluster):
    """Variables are created once, on the ps, from seeded initializers: before the chief has
    initialized them a worker's WorkerSessionCreator waits (and gives up at its deadline) instead
    of initializing them itself; the chief's MonitoredSession initializes them to the values a
    local session gets from the same seeds; worker 1 then reads exactly the chief's values,
    including an update the chief made after initializing (it did not initialize again)."""
    spec, servers = cluster

    def graph(i):
        tx.set_random_seed(11)
        with tx.device(tx.train.replica_device_setter(
                cluster=spec, worker_device="/job:worker/task:%d" % i)):
            tx.train.get_or_create_global_step()
            w = tx.get_variable("w", [3, 4], initializer=tx.glorot_uniform_initializer(seed=5))
            b = tx.Variable(tx.random_normal([4], seed=6), name="b")
            bump = b.assign_add(tx.ones([4]))
        assert w.device == b.device == "/job:ps/task:0"
        return w, b, bump

    with tx.Graph().as_default():
        w, b, _ = graph(0)
        with tx.Session() as sess:  # in process: soft placement moves the /job requests
            sess.run(tx.global_variables_initializer())
            want_w, want_b = sess.run([w, b])
    assert np.all(np.abs(want_w) <= np.sqrt(6 / 7)) and np.std(want_b) > 0  # a real draw

    def worker_session(max_wait_secs):
        return tx.train.MonitoredSession(tx.train.WorkerSessionCreator(
            master=servers[("worker", 1)].target, max_wait_secs=max_wait_secs,
            recovery_wait_secs=0.1))

    with tx.Graph().as_default():
        w, b, _ = graph(1)
        with pytest.raises(tx.errors.DeadlineExceededError, match="uninitialized"):
            worker_session(0.3)
    with tx.Graph().as_default():
        w, b, bump = graph(0)
        creator = tx.train.ChiefSessionCreator(master=servers[("worker", 0)].target)
        with tx.train.MonitoredSession(creator) as sess:
            chief_w, chief_b = sess.run([w, b])
            sess.run(bump)
    np.testing.assert_array_equal(chief_w, want_w)
    np.testing.assert_array_equal(chief_b, want_b)
    with tx.Graph().as_default():
        w, b, _ = graph(1)
        with worker_session(30) as sess:
            got_w, got_b = sess.run([w, b])
    np.testing.assert_array_equal(got_w, want_w)
    np.testing.assert_array_equal(got_b, want_b + 1)
