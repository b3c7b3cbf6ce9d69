"""Step tracing from Python (TF 1.x's API): RunOptions(trace_level=...) and RunMetadata filled by
Session.run, and tx.timeline.Timeline(step_stats).generate_chrome_trace_format(), checked
against the step's stats and its wall-clock interval."""

import json
import time

import numpy as np
import pytest

from conftest import IMPORT_ERROR

if IMPORT_ERROR:
    pytest.skip(IMPORT_ERROR, allow_module_level=True)

import tensorflux as tx  # noqa: E402

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def _mlp_step():
    x = tx.placeholder(tx.float32, [3, 4], name="x")
    w = tx.constant(np.arange(8, dtype=np.float32).reshape(4, 2), name="w")
    mm = tx.matmul(x, w, name="mm")
    out = tx.reduce_sum(tx.nn.relu(mm, name="relu"), name="total")
    return x, out


def _traced_run(sess, fetch, feed=None, level=None):
    meta = tx.RunMetadata()
    opts = tx.RunOptions(trace_level=tx.RunOptions.FULL_TRACE if level is None else level)
    t0 = time.time_ns()
    value = sess.run(fetch, feed_dict=feed, options=opts, run_metadata=meta)
    t1 = time.time_ns()
    return value, meta, t0, t1


def _nodes(meta):
    return {n.node_name: n for d in meta.step_stats.dev_stats for n in d.node_stats}


def test_full_trace_fills_step_stats(graph):
    x, total = _mlp_step()
    xv = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    with tx.Session() as sess:
        value, meta, t0, t1 = _traced_run(sess, total, {x: xv})
    want = np.maximum(xv.astype(np.float64) @ np.arange(8).reshape(4, 2), 0).sum()
    assert value == pytest.approx(want, rel=1e-6)
    assert [d.device for d in meta.step_stats.dev_stats] == [CPU0]
    names = [n.node_name for n in meta.step_stats.dev_stats[0].node_stats]
    assert len(names) == len(set(names))
    nodes = _nodes(meta)
    for name in ("w", "mm", "relu", "total"):
        assert name in nodes
    for n in nodes.values():
        assert t0 <= n.scheduled_nanos <= n.all_start_nanos
        assert 0 <= n.op_start_rel_nanos <= n.op_end_rel_nanos <= n.all_end_rel_nanos
        assert n.all_start_nanos + n.all_end_rel_nanos <= t1
        assert n.all_start_micros == n.all_start_nanos // 1000
    mm = nodes["mm"]
    assert mm.timeline_label.startswith("mm = MatMul(") and mm.timeline_label.endswith(", w)")
    (out,) = mm.output
    assert out.slot == 0
    assert out.tensor_description.dtype == tx.float32.as_datatype_enum
    assert [d.size for d in out.tensor_description.shape.dim] == [3, 2]
    alloc = out.tensor_description.allocation_description
    assert alloc.requested_bytes == 3 * 2 * 4
    assert alloc.allocator_name == "cpu" and alloc.allocated_bytes == 24
    (mem,) = [m for m in mm.memory if m.allocator_name == "cpu"]
    assert mem.total_bytes >= 24 and mem.peak_bytes >= 24 and mem.live_bytes == 24
    assert [len(o.tensor_description.shape.dim) for o in nodes["total"].output] == [0]


def test_trace_levels(graph):
    x, total = _mlp_step()
    feed = {x: np.ones((3, 4), np.float32)}
    with tx.Session() as sess:
        for level in (tx.RunOptions.SOFTWARE_TRACE, tx.RunOptions.HARDWARE_TRACE):
            _, meta, _, _ = _traced_run(sess, total, feed, level)
            assert _nodes(meta)["mm"].output[0].tensor_description.allocation_description \
                .requested_bytes == 24
        _, meta, _, _ = _traced_run(sess, total, feed, tx.RunOptions.NO_TRACE)
        assert len(meta.step_stats.dev_stats) == 0
        meta = tx.RunMetadata()
        sess.run(total, feed_dict=feed, run_metadata=meta)
        assert len(meta.step_stats.dev_stats) == 0


def _parse(text):
    trace = json.loads(text)
    ops, flows, counters, processes = {}, {}, [], {}
    for e in trace["traceEvents"]:
        if e["ph"] == "X":
            assert e["args"]["name"] not in ops, e
            ops[e["args"]["name"]] = e
        elif e["ph"] in ("s", "f"):
            flows.setdefault(e["id"], []).append(e)
        elif e["ph"] == "C":
            counters.append(e)
        elif e["ph"] == "M" and e["name"] == "process_name":
            processes[e["pid"]] = e["args"]["name"]
    return trace, ops, flows, counters, processes


def _inside(ev, x):
    return (ev["pid"], ev["tid"]) == (x["pid"], x["tid"]) and \
        x["ts"] <= ev["ts"] <= x["ts"] + x["dur"]


def _check_trace_against_step(text, meta, t0, t1):
    trace, ops, flows, _, _ = _parse(text)
    origin = trace["otherData"]["origin_nanos"]
    nodes = _nodes(meta)
    assert set(ops) == set(nodes)  # every node run, once
    for name, e in ops.items():
        n = nodes[name]
        assert e["dur"] >= 0
        start = origin + round(e["ts"] * 1000)
        assert start == n.all_start_nanos
        assert round(e["dur"] * 1000) == n.all_end_rel_nanos
        assert t0 <= start and start + n.all_end_rel_nanos <= t1
        assert e["args"]["op"] == n.timeline_label.split(" = ")[1].split("(")[0]
    for fid, pair in flows.items():
        assert [e["ph"] for e in pair] == ["s", "f"], pair
        assert pair[0]["name"] == pair[1]["name"]
        assert any(_inside(pair[0], x) for x in ops.values()), pair
        assert any(_inside(pair[1], x) for x in ops.values()), pair
    return trace, ops, flows


def test_timeline_of_a_step(graph):
    x, total = _mlp_step()
    with tx.Session() as sess:
        _, meta, t0, t1 = _traced_run(sess, total, {x: np.ones((3, 4), np.float32)})
    tl = tx.timeline.Timeline(meta.step_stats)
    text = tl.generate_chrome_trace_format()
    _, ops, _ = _check_trace_against_step(text, meta, t0, t1)
    assert ops["mm"]["name"] == "MatMul" and ops["mm"]["args"]["input1"] == "w"
    _, _, flows, counters, processes = _parse(tl.generate_chrome_trace_format(show_dataflow=False))
    assert flows == {} and counters == []
    assert list(processes.values()) == [CPU0 + " Compute"]
    # show_memory: the tensors the step's nodes allocated, counted per allocator.
    _, _, _, counters, processes = _parse(tl.generate_chrome_trace_format(show_memory=True))
    assert processes[0] == "Allocators" and CPU0 + " Tensors" in processes.values()
    values = [c["args"]["cpu"] for c in counters if c["name"] == "cpu"]
    assert values and min(values) >= 0 and values[-1] == 0 and max(values) >= 24
    assert tx.client.timeline.Timeline is tx.timeline.Timeline


def test_timeline_errors():
    with pytest.raises(TypeError, match="StepStats"):
        tx.timeline.Timeline(b"not a message")
    with pytest.raises(ValueError, match="op_time"):
        tx.timeline.Timeline(tx.RunMetadata().step_stats).generate_chrome_trace_format(
            op_time="wall")
    empty = json.loads(tx.timeline.Timeline(tx.RunMetadata().step_stats)
                       .generate_chrome_trace_format())
    assert empty["traceEvents"] == []


def test_two_device_step_has_send_recv_flows(graph):
    with tx.device("/cpu:0"):
        a = tx.constant(np.arange(6, dtype=np.float32), name="a")
        b = tx.square(a, name="b")
    with tx.device("/cpu:1"):
        c = tx.multiply(b, 2.0, name="c")
    config = tx.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=False)
    with tx.Session(config=config) as sess:
        value, meta, t0, t1 = _traced_run(sess, c)
    np.testing.assert_array_equal(value, np.arange(6) ** 2 * 2)
    # One DeviceStepStats per device, each node once.
    assert sorted(d.device for d in meta.step_stats.dev_stats) == [CPU0, CPU1]
    device_of = {n.node_name: d.device for d in meta.step_stats.dev_stats for n in d.node_stats}
    assert device_of["b"] == CPU0 and device_of["c"] == CPU1
    sends = [n for d in meta.step_stats.dev_stats for n in d.node_stats
             if " = _Send(" in n.timeline_label or " = _HostSend(" in n.timeline_label]
    recvs = [n for d in meta.step_stats.dev_stats for n in d.node_stats
             if " = _Recv(" in n.timeline_label or " = _HostRecv(" in n.timeline_label]
    assert sends and len(sends) == len(recvs)
    text = tx.timeline.Timeline(meta.step_stats).generate_chrome_trace_format()
    _, ops, flows = _check_trace_against_step(text, meta, t0, t1)
    _, _, _, _, processes = _parse(text)
    assert sorted(processes.values()) == [CPU0 + " Compute", CPU1 + " Compute"]
    for s in sends:
        tensor = ops[s.node_name]["args"]["tensor_name"]
        assert ops[s.node_name]["args"]["recv_device"] == CPU1
        pairs = [p for p in flows.values() if p[0]["name"] == tensor]
        assert len(pairs) == 1, tensor
        src, dst = pairs[0]
        assert _inside(src, ops[s.node_name])
        recv = [r for r in recvs if ops[r.node_name]["args"]["tensor_name"] == tensor]
        assert len(recv) == 1 and _inside(dst, ops[recv[0].node_name])
        assert ops[recv[0].node_name]["args"]["send_device"] == CPU0
