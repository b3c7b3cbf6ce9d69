"""Devices from Python: tx.DeviceSpec, nested tx.device scopes (TF 1.x merging), ConfigProto
device_count / allow_soft_placement / log_device_placement through tx.Session, RunOptions
log_device_placement, list_devices / device_lib.list_local_devices, tx.test.is_gpu_available,
tx.colocate_with, and import_graph_def / saved_model loader clear_devices."""

import numpy as np
import pytest

import tensorflux as tx
from tensorflux.client import device_lib

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


@pytest.fixture
def graph():
    g = tx.Graph()
    with g.as_default():
        yield g


def test_device_spec_parse_and_canonical_form():
    s = tx.DeviceSpec.from_string("/job:worker/replica:1/task:2/device:GPU:3")
    assert (s.job, s.replica, s.task, s.device_type, s.device_index) == ("worker", 1, 2, "GPU", 3)
    assert tx.DeviceSpec.from_string("/cpu:1").to_string() == "/device:CPU:1"
    assert tx.DeviceSpec.from_string("gpu:0").to_string() == "/device:GPU:0"
    assert tx.DeviceSpec.from_string("/device:CPU:*").device_index is None
    assert tx.DeviceSpec.from_string("/device:GPU").to_string() == "/device:GPU:*"
    assert tx.DeviceSpec.from_string("").to_string() == ""
    assert tx.DeviceSpec(job="ps", task=0, device_type="cpu").to_string() == "/job:ps/task:0/device:CPU:*"
    merged = tx.DeviceSpec.from_string("/job:w/device:CPU:0")
    merged.merge_from(tx.DeviceSpec.from_string("/gpu:1"))
    assert merged.to_string() == "/job:w/device:GPU:1"
    assert merged == tx.DeviceSpec.from_string("/job:w/gpu:1")
    for bad in ["/gpu:x", "/foo:0", "cpu", "/job:a/job:b", "/cpu:0/gpu:0"]:
        with pytest.raises(ValueError, match="Invalid device specification"):
            tx.DeviceSpec.from_string(bad)


def test_device_scopes_merge_as_tf(graph):
    with tx.device("/job:worker"):
        with tx.device("/gpu:0"):
            a = tx.constant(1.0, name="a")
            with tx.device("/cpu:1"):  # the inner type and index win
                b = tx.constant(1.0, name="b")
        with tx.device("/task:3"):
            c = tx.constant(1.0, name="c")
        with tx.device(""):  # no change
            d = tx.constant(1.0, name="d")
        with tx.device(None):  # clears the enclosing scopes
            e = tx.constant(1.0, name="e")
            with tx.device("/cpu:0"):
                f = tx.constant(1.0, name="f")
    assert a.op.device == "/job:worker/device:GPU:0"
    assert b.op.device == "/job:worker/device:CPU:1"
    assert c.op.device == "/job:worker/task:3"
    assert d.op.device == "/job:worker"
    assert e.op.device == ""
    assert f.op.device == "/device:CPU:0"
    with tx.device(tx.DeviceSpec(job="ps", device_type="CPU", device_index=0)):
        g = tx.constant(1.0, name="g")
    assert g.op.device == "/job:ps/device:CPU:0"


def test_device_functions(graph):
    seen = []

    def by_type(op):
        seen.append((op.name, op.device))
        return "/cpu:1" if op.type == "Const" else None

    with tx.device("/job:ps"):
        with tx.device(by_type):
            x = tx.constant(1.0, name="x")
            with tx.device("/device:CPU:0"):  # inner: the function sees this device
                y = tx.identity(x, name="y")
            z = tx.identity(x, name="z")
    assert x.op.device == "/job:ps/device:CPU:1"
    assert y.op.device == "/job:ps"  # the function replaced CPU:0 by its None
    assert z.op.device == "/job:ps"
    assert ("y", "/device:CPU:0") in seen
    with tx.device(lambda op: tx.DeviceSpec(device_type="GPU", device_index=2)):
        w = tx.constant(1.0, name="w")
    assert w.op.device == "/device:GPU:2"


def test_bad_device_scope(graph):
    with pytest.raises(ValueError, match="'/gpu:one'"):
        with tx.device("/gpu:one"):
            pass
    with pytest.raises(TypeError):
        with tx.device(3):
            pass
    with tx.device(lambda op: "/nope:0"):
        with pytest.raises(ValueError, match="'/nope:0'"):
            tx.constant(1.0)


def test_colocate_with(graph):
    with tx.device("/cpu:1"):
        a = tx.constant(1.0, name="a")
    n = tx.constant(1.0, name="n")
    with tx.device("/job:w"):
        with tx.colocate_with(a):
            b = tx.identity(a, name="b")  # a's device; the /job:w scope does not apply
            with tx.colocate_with(n.op):
                c = tx.identity(b, name="c")
            with tx.colocate_with(None, ignore_existing=True):
                d = tx.identity(b, name="d")
        with tx.colocate_with(n):
            with tx.device("/cpu:0"):  # a scope opened inside applies
                e = tx.identity(n, name="e")
    assert b.op.get_attr("_class") == [b"loc:@a"]
    assert b.op.device == "/device:CPU:1"
    assert b.op.colocation_groups() == [b"loc:@a"]
    assert a.op.colocation_groups() == [b"loc:@a"]
    assert c.op.get_attr("_class") == [b"loc:@a", b"loc:@n"]
    assert c.op.device == "/device:CPU:1"
    assert "_class" not in d.op.node_def.attr and d.op.device == ""
    assert e.op.get_attr("_class") == [b"loc:@n"] and e.op.device == "/device:CPU:0"
    with pytest.raises(ValueError, match="ignore_existing"):
        with tx.colocate_with(None):
            pass
    # The Placer keeps a class together: q asks for CPU:1, so p (in q's class) goes there too.
    p = tx.constant(np.float32(2.0), name="p")
    with tx.colocate_with(p):
        with tx.device("/cpu:1"):
            q = tx.multiply(p, p, name="q")
    with tx.Session(config=tx.ConfigProto(device_count={"CPU": 2})) as sess:
        meta = tx.RunMetadata()
        assert sess.run(q, options=tx.RunOptions(trace_level=tx.RunOptions.FULL_TRACE),
                        run_metadata=meta) == 4.0
        assert [d.device for d in meta.step_stats.dev_stats] == [CPU1]


def test_variable_on_second_cpu(graph):
    with tx.device("/cpu:1"):
        v = tx.Variable(np.array([1.0, 2.0], np.float32), name="v")
        doubled = v * 2.0
    config = tx.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=False)
    with tx.Session(config=config) as sess:
        assert [d.name for d in sess.list_devices()] == [CPU0, CPU1]
        assert sess.list_devices()[1].device_type == "CPU"
        assert sess.list_devices()[1].memory_limit_bytes > 0
        sess.run(v.initializer)
        meta = tx.RunMetadata()
        out = sess.run(doubled, options=tx.RunOptions(trace_level=tx.RunOptions.FULL_TRACE),
                       run_metadata=meta)
        np.testing.assert_array_equal(out, [2.0, 4.0])
        assert [d.device for d in meta.step_stats.dev_stats] == [CPU1]


def test_soft_placement_default_and_hard_error(graph, capfd):
    with tx.device("/device:GPU:0"):
        x = tx.constant(np.array([3.0], np.float32), name="x")
        y = tx.add(x, x, name="y")
    with tx.Session() as sess:
        np.testing.assert_array_equal(sess.run(y), [6.0])
    err = capfd.readouterr().err
    assert "{{node y}} (op AddV2) asked for '/device:GPU:0' but no devices matching that " \
        "specification are registered in this process; placed on " + CPU0 in err
    with tx.Session(config=tx.ConfigProto(allow_soft_placement=False)) as sess:
        with pytest.raises(tx.errors.InvalidArgumentError) as info:
            sess.run(y)
    msg = str(info.value)
    assert "Cannot assign a device for operation" in msg
    assert "'/device:GPU:0'" in msg
    assert "Devices with a kernel for it: " + CPU0 in msg


def test_log_device_placement(graph, capfd):
    a = tx.constant(np.float32(2.0), name="a")
    b = tx.multiply(a, a, name="b")
    with tx.Session(config=tx.ConfigProto(log_device_placement=True)) as sess:
        assert sess.run(b) == 4.0
    err = capfd.readouterr().err
    assert "Device mapping:" in err
    assert "b: (Mul): " + CPU0 + "\n" in err
    assert "a: (Const): " + CPU0 + "\n" in err
    with tx.Session() as sess:
        sess.run(b)
        assert capfd.readouterr().err == ""
        sess.run(b, options=tx.RunOptions(log_device_placement=True))
        assert "b: (Mul): " + CPU0 + "\n" in capfd.readouterr().err


def test_thread_options_and_bad_device_count(graph):
    x = tx.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = tx.matmul(x, x, transpose_b=True)
    config = tx.ConfigProto(inter_op_parallelism_threads=2, intra_op_parallelism_threads=1,
                            device_count={"CPU": 4})
    with tx.Session(config=config) as sess:
        assert len(sess.list_devices()) == 4
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        np.testing.assert_array_equal(sess.run(y), a @ a.T)
    with pytest.raises(tx.errors.InvalidArgumentError, match="device_count"):
        tx.Session(config=tx.ConfigProto(device_count={"CPU": 0}))


def test_local_devices_and_gpu_check():
    names = [d.name for d in device_lib.list_local_devices()]
    assert names[0] == "/device:CPU:0"
    three = device_lib.list_local_devices(tx.ConfigProto(device_count={"CPU": 3}))
    assert [d.name for d in three] == ["/device:CPU:0", "/device:CPU:1", "/device:CPU:2"]
    assert all(d.device_type == "CPU" and d.incarnation != 0 for d in three)
    has_gpu = any(d.device_type == "GPU" for d in device_lib.list_local_devices())
    assert tx.test.is_gpu_available() == has_gpu
    assert (tx.test.gpu_device_name() != "") == has_gpu
    with pytest.raises(TypeError):
        device_lib.list_local_devices({"CPU": 2})


def _graph_def_with_devices():
    g = tx.Graph()
    with g.as_default():
        with tx.device("/device:GPU:0"):
            x = tx.constant(np.float32(5.0), name="x")
            tx.negative(x, name="neg")
    return g.as_graph_def()


def test_import_clear_devices(graph):
    gd = _graph_def_with_devices()
    assert {n.device for n in gd.node} == {"/device:GPU:0"}
    with tx.device("/job:localhost"):
        tx.import_graph_def(gd, name="kept")
        tx.import_graph_def(gd, name="cleared", clear_devices=True)
    assert graph.get_operation_by_name("kept/neg").device == "/job:localhost/device:GPU:0"
    assert graph.get_operation_by_name("cleared/neg").device == "/job:localhost"
    with tx.Session(config=tx.ConfigProto(allow_soft_placement=False)) as sess:
        assert sess.run("cleared/neg:0") == -5.0
        with pytest.raises(tx.errors.InvalidArgumentError, match="GPU"):
            sess.run("kept/neg:0")
