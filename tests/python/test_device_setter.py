"""tx.train.ClusterSpec and tx.train.replica_device_setter: the device strings given to
variables, their own ops and the compute ops (round-robin and greedy-by-size strategies,
merging with explicit devices, a cluster), and such a graph trained in a local session (the
/job:ps and /job:worker requests fall back to local devices by soft placement)."""

import numpy as np
import pytest

import tensorflux as tx


def test_cluster_spec():
    spec = tx.train.ClusterSpec({"worker": ["w0:1", "w1:1"], "ps": ["p0:1"]})
    assert spec.jobs == ["ps", "worker"]
    assert spec.num_tasks("worker") == 2
    assert spec.task_address("worker", 1) == "w1:1"
    assert spec.task_indices("ps") == [0]
    assert spec.as_dict() == {"ps": ["p0:1"], "worker": ["w0:1", "w1:1"]}
    assert spec == tx.train.ClusterSpec(spec)
    sparse = tx.train.ClusterSpec({"worker": {1: "w1:1", 3: "w3:1"}})
    assert sparse.num_tasks("worker") == 2
    assert sparse.job_tasks("worker") == [None, "w1:1", None, "w3:1"]
    assert sparse.as_dict() == {"worker": {1: "w1:1", 3: "w3:1"}}
    assert not tx.train.ClusterSpec({})
    with pytest.raises(ValueError, match="No such job in cluster: 'chief'"):
        spec.num_tasks("chief")
    with pytest.raises(ValueError, match="No task with index 2 in job 'worker'"):
        spec.task_address("worker", 2)
    with pytest.raises(TypeError):
        tx.train.ClusterSpec(["w0:1"])
    with pytest.raises(TypeError):
        tx.train.ClusterSpec({"worker": "w0:1"})


def test_round_robin_variables_their_ops_and_compute():
    with tx.Graph().as_default():
        setter = tx.train.replica_device_setter(ps_tasks=2, worker_device="/job:worker/task:3")
        with tx.device(setter):
            a = tx.Variable(tx.zeros([2]), name="a")
            b = tx.Variable(tx.zeros([2]), name="b")
            c = tx.Variable(tx.zeros([2]), name="c")
            y = a + b * c
        assert a.device == "/job:ps/task:0"
        assert b.device == "/job:ps/task:1"
        assert c.device == "/job:ps/task:0"
        assert a.initializer.device == "/job:ps/task:0"       # its Assign
        assert b.value().op.device == "/job:ps/task:1"        # its read
        assert y.op.device == "/job:worker/task:3"
        assert a.initial_value.op.device == "/job:worker/task:3"


def test_default_strategy_is_greedy_by_size_and_round_robin_is_available():
    """The issue's rule: by default variables spread over the ps tasks greedy by size; a big
    variable then a small one, then another small one: round-robin would put the third on
    task 0 with the big one, greedy puts it on task 1."""
    with tx.Graph().as_default():
        with tx.device(tx.train.replica_device_setter(ps_tasks=2)):
            big = tx.Variable(tx.zeros([1000]), name="big")
            small = [tx.Variable(tx.zeros([10]), name="s%d" % i) for i in range(3)]
        assert big.device == "/job:ps/task:0"
        assert [v.device for v in small] == ["/job:ps/task:1"] * 3
    with tx.Graph().as_default():
        rr = tx.train.RoundRobinStrategy(2)
        with tx.device(tx.train.replica_device_setter(ps_tasks=2, ps_strategy=rr)):
            vs = [tx.Variable(tx.zeros([n]), name="v%d" % n) for n in (1000, 10, 10)]
        assert [v.device for v in vs] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]


def test_greedy_load_balancing_by_size_and_explicit_devices():
    with tx.Graph().as_default():
        greedy = tx.train.GreedyLoadBalancingStrategy(2)
        setter = tx.train.replica_device_setter(ps_tasks=2, ps_strategy=greedy)
        with tx.device(setter):
            big = tx.Variable(tx.zeros([100]), name="big")        # 400 bytes -> task 0
            s1 = tx.Variable(tx.zeros([10]), name="s1")           # task 1 (0 < 400)
            s2 = tx.Variable(tx.zeros([10]), name="s2")           # task 1 (40 < 400)
            s3 = tx.Variable(tx.zeros([10], tx.float64), name="s3")  # task 1 (80 < 400)
            with tx.device("/job:ps/task:7"):
                pinned = tx.Variable(tx.zeros([1]), name="pinned")
            with tx.device("/device:CPU:1"):
                merged = tx.Variable(tx.zeros([1]), name="merged")
        assert [v.device for v in (big, s1, s2, s3)] == [
            "/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:1", "/job:ps/task:1"]
        assert pinned.device == "/job:ps/task:7"  # the op's own task wins (load 164 on task 1)
        # No job of its own: the strategy picks task 1 (168 < 400), the device stays.
        assert merged.device == "/job:ps/task:1/device:CPU:1"
    assert tx.train.byte_size_load_fn(s3.op) == 80


def test_setter_from_cluster_and_no_ps():
    cluster = tx.train.ClusterSpec({"ps": ["p0:1", "p1:1", "p2:1"], "worker": ["w0:1"]})
    with tx.Graph().as_default():
        with tx.device(tx.train.replica_device_setter(cluster=cluster)):
            vs = [tx.Variable(0.0, name="v%d" % i) for i in range(4)]
        assert [v.device for v in vs] == ["/job:ps/task:%d" % i for i in (0, 1, 2, 0)]
    assert tx.train.replica_device_setter(cluster={"worker": ["w0:1"]}) is None
    assert tx.train.replica_device_setter(ps_tasks=0) is None
    with pytest.raises(TypeError):
        tx.train.replica_device_setter(ps_tasks=1, ps_strategy=3)


def test_placed_graph_trains_in_a_local_session():
    """Optimizer slots and updates follow their variable to its ps task, so the colocation
    groups agree and the graph places (soft placement maps the ps/worker requests locally)."""
    with tx.Graph().as_default():
        with tx.device(tx.train.replica_device_setter(ps_tasks=2)):
            w = tx.Variable([1.0, 2.0], name="w")
            b = tx.Variable(0.5, name="b")
            step = tx.train.get_or_create_global_step()
            loss = tx.reduce_sum(tx.square(w)) + b * b
            opt = tx.train.AdamOptimizer(0.1)
            train = opt.minimize(loss, global_step=step)
        assert opt.get_slot(w, "m").device == w.device
        assert opt.get_slot(b, "v").device == b.device
        assert b.device != w.device
        with tx.Session(config=tx.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(tx.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            assert sess.run(step) == 3
            np.testing.assert_allclose(sess.run(w), _adam([1.0, 2.0], 3), rtol=1e-5)


def _adam(w, steps, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (TF's update with the bias-corrected rate) on sum(w^2), in float64."""
    w = np.array(w, np.float64)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t in range(1, steps + 1):
        g = 2 * w
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(v) + eps)
    return w


def test_cluster_spec_as_cluster_def_round_trip():
    spec = tx.train.ClusterSpec({"ps": ["p0:1"], "worker": {0: "w0:1", 2: "w2:1"}})
    cluster_def = spec.as_cluster_def()
    assert [j.name for j in cluster_def.job] == ["ps", "worker"]
    assert dict(cluster_def.job[1].tasks) == {0: "w0:1", 2: "w2:1"}
    back = tx.train.ClusterSpec(cluster_def)
    assert back == spec
    assert back.task_address("worker", 2) == "w2:1"
