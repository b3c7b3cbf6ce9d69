"""A variable's device does not depend on which run signature the session placed first
(issue 6): a variable created under one tx.device scope, read by a raw ReadVariableOp under
another, trained by Adam under a third, on device_count={"CPU": 4}, with the steps run in different orders, soft
placement on and off. Optimizer slots and Adam's beta powers are colocated with their
variable (TF's colocate_vars_with), and the ops that take the variable run where it lives."""

import numpy as np
import pytest

import tensorflux as tx

CPU = ["/job:localhost/replica:0/task:0/device:CPU:%d" % i for i in range(4)]
W0 = np.array([1.0, -2.0, 0.5], np.float32)
LR, BETA1, BETA2, EPS = 0.1, 0.9, 0.999, 1e-8


def adam_reference(steps):
    """w after `steps` Adam steps on loss = sum(w * w), in float64."""
    w, m, v = W0.astype(np.float64), 0.0, 0.0
    for t in range(1, steps + 1):
        g = 2 * w
        m = BETA1 * m + (1 - BETA1) * g
        v = BETA2 * v + (1 - BETA2) * g * g
        lr_t = LR * np.sqrt(1 - BETA2 ** t) / (1 - BETA1 ** t)
        w = w - lr_t * m / (np.sqrt(v) + EPS)
    return w


def build(var_device, read_device, train_device):
    g = tx.Graph()
    with g.as_default():
        with tx.device(var_device):
            w = tx.Variable(W0, name="w")
        with tx.device(read_device):
            # A raw read takes the scope's device (w.read_value() would take w's).
            read = tx.raw_ops.ReadVariableOp(resource=w.handle, dtype=tx.float32, name="raw_read")
            doubled = read * 2.0
        with tx.device(train_device):
            loss = tx.reduce_sum(w * w)
            step = tx.train.AdamOptimizer(LR, BETA1, BETA2, EPS).minimize(loss)
        init = tx.global_variables_initializer()
    return g, w, doubled, step, init


def devices_of(meta):
    return {n.node_name: d.device for d in meta.step_stats.dev_stats for n in d.node_stats}


def run(order, soft, var_device=CPU[1], read_device=CPU[2], train_device=CPU[3]):
    """Runs the steps named in `order` ("init", "read", "train"); returns w, the last doubled
    value and where each traced node ran (a node that moved between steps fails the test)."""
    g, w, doubled, step, init = build(var_device, read_device, train_device)
    # The read asks for its scope's device; the Placer keeps it with the variable.
    assert g.get_operation_by_name("raw_read").device == (read_device or "")
    config = tx.ConfigProto(device_count={"CPU": 4}, allow_soft_placement=soft)
    placed, value = {}, None
    with tx.Session(graph=g, config=config) as sess:
        for name in order:
            meta = tx.RunMetadata()
            fetch = {"init": init, "read": doubled, "train": step}[name]
            out = sess.run(fetch, options=tx.RunOptions(trace_level=tx.RunOptions.FULL_TRACE),
                           run_metadata=meta)
            if name == "read":
                value = out
            for node, device in devices_of(meta).items():
                if "/_" not in node:  # _Send/_Recv names are per step graph
                    assert placed.setdefault(node, device) == device, (node, name)
        return sess.run(w), value, placed


ORDERS = [["init", "read", "train", "train", "read"],
          ["init", "train", "read", "train", "read"]]


@pytest.mark.parametrize("soft", [True, False], ids=["soft", "hard"])
@pytest.mark.parametrize("order", ORDERS, ids=["read_first", "train_first"])
def test_variable_stays_where_it_was_created(order, soft):
    w, doubled, placed = run(order, soft)
    np.testing.assert_allclose(w, adam_reference(2), rtol=1e-5)
    np.testing.assert_allclose(doubled, 2 * adam_reference(2), rtol=1e-5)
    for node in ["w", "w/Adam", "w/Adam_1", "beta1_power", "beta2_power",
                 "Adam/update_w/ResourceApplyAdam", "raw_read"]:
        assert placed[node] == CPU[1], node
    # Ops that take a value, not the variable, keep their scope's device.
    assert placed["mul"] == CPU[2]
    assert placed["mul_1"] == placed["gradients/mul_1_grad/Mul"] == CPU[3]


@pytest.mark.parametrize("order", ORDERS, ids=["read_first", "train_first"])
def test_without_device_scopes_everything_on_cpu0(order):
    w, _, placed = run(order, True, None, None, None)
    np.testing.assert_allclose(w, adam_reference(2), rtol=1e-5)
    assert set(placed.values()) == {CPU[0]}


def test_slots_are_colocated_with_their_variable(graph):
    with tx.device(CPU[1]):
        w = tx.Variable(W0, name="w")
    with tx.device(CPU[3]):
        tx.train.AdamOptimizer(LR).minimize(tx.reduce_sum(w * w))
    ops = {op.name: op for op in graph.get_operations()}
    for name in ["w/Adam", "w/Adam_1", "beta1_power", "beta2_power"]:
        assert ops[name].device == CPU[1], name
        assert ops[name].colocation_groups() == [b"loc:@w"], name


def test_hard_placement_still_rejects_an_impossible_request(graph):
    with tx.device("/device:CPU:7"):
        v = tx.Variable(W0, name="v")
    with tx.Session(config=tx.ConfigProto(device_count={"CPU": 4},
                                          allow_soft_placement=False)) as sess:
        with pytest.raises(tx.errors.InvalidArgumentError,
                           match="Cannot assign a device for operation 'v.*CPU:7"):
            sess.run(v.initializer)
