"""Writes TensorFlux artifacts for the reverse oracle (TensorFlow reads what TensorFlux writes).

    PYTHONPATH=build/python /usr/bin/python3 tools/oracle/reverse_write.py OUT \
        [--demo-steps N | --demo-run DIR] [--server-bin build/bin/tensorflux-server]

Run with the Python TensorFlux was built for (Debian's), never with the oracle's venv. Writes
under OUT:

  graphs/*.pb, *.pbtxt         GraphDefs (binary and text), each with feeds and TensorFlux's outputs
  saved_model/                 a TF 1.x SavedModel (saved_model.pb + variables/ bundle written by
                               the SaveV2 kernel), with a serving signature and its outputs
  checkpoints/bundle.*         a tensor bundle written by the SaveV2 kernel (one tensor per dtype)
  checkpoints/saver/           what tx.train.Saver writes today (safetensors + `checkpoint`)
  records/*.tfrecord           tx.io.TFRecordWriter files (raw bytes, serialized tf.train.Examples)
  events/                      a tx.summary.FileWriter's event file (graph, scalars, histograms,
                               run metadata, a session log)
  demo/                        with --demo-steps/--demo-run: the Fashion-MNIST demo's run
                               directory (its event file and frozen model.pb)
  manifest.json                what each file holds, as TensorFlux computed or wrote it

tools/oracle/reverse_check.py (run with the oracle venv's python) reads the files with TensorFlow
and TensorBoard and compares with manifest.json.

Arrays in manifest.json are {"dtype", "shape", "data"}: data is the flat list of values (floats
exact: every float32/float16 is a Python float exactly), base64 strings for bytes.
"""

import argparse
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys

import numpy as np

import tensorflux as tx
from manifest_codec import encode, example_features  # tools/oracle (this folder)

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_SEED = 19


# ------------------------------------------------------------------ manifest helpers

def rel(out, path):
    return os.path.relpath(path, out)


# ------------------------------------------------------------------ (a) GraphDefs

def _ops_zoo(rng):
    """A frozen graph of many common ops (constants + one placeholder); returns (graph, feeds,
    fetch names)."""
    g = tx.Graph()
    with g.as_default():
        x = tx.placeholder(tx.float32, [None, 8, 8, 3], name="x")
        k = tx.constant(rng.standard_normal((3, 3, 3, 4)).astype(np.float32), name="k")
        conv = tx.nn.conv2d(x, k, strides=[1, 1, 1, 1], padding="SAME", name="conv")
        act = tx.nn.relu(tx.nn.bias_add(conv, tx.constant(
            rng.standard_normal(4).astype(np.float32)), name="bias"), name="relu")
        pool = tx.nn.max_pool(act, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID",
                              name="maxpool")
        avg = tx.nn.avg_pool(act, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME",
                             name="avgpool")
        flat = tx.reshape(tx.concat([pool, avg], axis=3), [-1, 4 * 4 * 8], name="flat")
        w = tx.constant(rng.standard_normal((128, 5)).astype(np.float32) * 0.1, name="w")
        logits = tx.matmul(flat, w, name="logits")
        tx.nn.softmax(logits, name="probs")
        tx.argmax(logits, axis=1, name="classes")
        tx.reduce_mean(tx.square(logits), axis=[0, 1], name="mean_sq")
        tx.reduce_max(tx.transpose(logits), axis=1, name="max_t")
        tx.tanh(tx.sigmoid(logits) - 0.5, name="tanh_sig")
        t = tx.strided_slice(logits, [0, 1], [2, 4], name="slice")
        tx.tile(tx.pad(t, [[1, 0], [0, 2]]), [2, 1], name="tile_pad")
        idx = tx.constant(np.array([2, 0, 1], np.int32), name="idx")
        tx.gather(logits, idx, axis=1, name="gather")
        tx.one_hot(tx.cast(idx, tx.int64), depth=4, name="one_hot")
        tx.stack(tx.split(logits, 5, axis=1), axis=0, name="split_stack")
        tx.where(tx.greater(logits, 0.0), logits, -logits, name="abs_where")
        tx.exp(tx.log(tx.abs(logits) + 1.0), name="exp_log")
        tx.cast(logits * 10.0, tx.int32, name="to_int")
        tx.reduce_sum(tx.cast(tx.equal(tx.argmax(logits, 1), tx.constant(
            np.array([0, 1, 2, 3], np.int64))), tx.float32), name="hits")
    feeds = {"x:0": rng.standard_normal((4, 8, 8, 3)).astype(np.float32)}
    fetches = ["probs:0", "classes:0", "mean_sq:0", "max_t:0", "tanh_sig:0", "slice:0",
               "tile_pad:0", "gather:0", "one_hot:0", "split_stack:0", "abs_where:0",
               "exp_log:0", "to_int:0", "hits:0", "flat:0"]
    return g, feeds, fetches


def _train_graph(rng):
    """Variables + one GradientDescent step (the gradient ops too); TensorFlow runs `init`, then
    `train` once, then the fetches."""
    g = tx.Graph()
    with g.as_default():
        x = tx.placeholder(tx.float32, [None, 6], name="x")
        y = tx.placeholder(tx.int32, [None], name="y")
        w = tx.Variable(rng.standard_normal((6, 16)).astype(np.float32) * 0.3, name="w1")
        b = tx.Variable(np.zeros(16, np.float32), name="b1")
        w2 = tx.Variable(rng.standard_normal((16, 3)).astype(np.float32) * 0.3, name="w2")
        h = tx.nn.relu(tx.matmul(x, w) + b)
        logits = tx.matmul(h, w2, name="logits")
        loss = tx.reduce_mean(tx.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits), name="loss")
        tx.train.GradientDescentOptimizer(0.5).minimize(loss, name="train")
        init = tx.group(*[v.initializer for v in tx.global_variables()], name="init")
        for v, name in ((w, "w1_value"), (b, "b1_value"), (w2, "w2_value")):
            tx.identity(v.read_value(), name=name)
    feeds = {"x:0": rng.standard_normal((5, 6)).astype(np.float32),
             "y:0": np.array([0, 2, 1, 1, 0], np.int32)}
    return g, feeds, ["loss:0", "w1_value:0", "b1_value:0", "w2_value:0"], init


def write_graphs(out, rng, manifest):
    os.makedirs(os.path.join(out, "graphs"), exist_ok=True)
    entries = []

    g, feeds, fetches = _ops_zoo(rng)
    with tx.Session(graph=g) as sess:
        values = sess.run(fetches, feed_dict=feeds)
    gd = g.as_graph_def()
    for fmt in ("binary", "text"):
        name = "ops_zoo.pb" if fmt == "binary" else "ops_zoo.pbtxt"
        path = tx.train.write_graph(gd, os.path.join(out, "graphs"), name,
                                    as_text=(fmt == "text"))
        entries.append({"name": "ops_zoo (%s)" % fmt, "file": rel(out, path), "format": fmt,
                        "nodes": len(gd.node), "ops": sorted({n.op for n in gd.node}),
                        "feeds": {k: encode(v) for k, v in feeds.items()},
                        "fetches": {k: encode(v) for k, v in zip(fetches, values)}})

    g, feeds, fetches, init = _train_graph(rng)
    with tx.Session(graph=g) as sess:
        sess.run(init)
        loss0 = sess.run("loss:0", feed_dict=feeds)
        sess.run("train", feed_dict=feeds)
        values = sess.run(fetches, feed_dict=feeds)
    gd = g.as_graph_def()
    path = tx.train.write_graph(g, os.path.join(out, "graphs"), "train_step.pb", as_text=False)
    entries.append({"name": "train_step (binary)", "file": rel(out, path), "format": "binary",
                    "nodes": len(gd.node), "ops": sorted({n.op for n in gd.node}),
                    "run_first": ["init", "train"],
                    "loss_before": float(loss0),
                    "feeds": {k: encode(v) for k, v in feeds.items()},
                    "fetches": {k: encode(v) for k, v in zip(fetches, values)}})
    manifest["graphs"] = entries


# ------------------------------------------------------------------ (b) SavedModel

def _add_saver_ops(variables):
    """TF 1.x Saver-style save/restore ops for resource `variables` under name scope "save"
    (SaveV2 / RestoreV2 + AssignVariableOp); returns the SaverDef fields."""
    names = sorted(variables)
    with tx.name_scope("save"):
        prefix = tx.placeholder_with_default("model", [], name="Const")
        tensor_names = tx.constant(names, name="SaveV2/tensor_names")
        slices = tx.constant([""] * len(names), name="SaveV2/shape_and_slices")
        save = tx.raw_ops.SaveV2(prefix=prefix, tensor_names=tensor_names,
                                 shape_and_slices=slices,
                                 tensors=[variables[n].read_value() for n in names],
                                 name="SaveV2")
        with tx.control_dependencies([save]):
            saved = tx.identity(prefix, name="control_dependency")
        restored = tx.raw_ops.RestoreV2(
            prefix=prefix, tensor_names=tensor_names, shape_and_slices=slices,
            dtypes=[variables[n].dtype for n in names], name="RestoreV2")
        assigns = [tx.raw_ops.AssignVariableOp(resource=variables[n].handle, value=t,
                                               name="AssignVariableOp_%d" % i)
                   for i, (n, t) in enumerate(zip(names, restored))]
        restore_all = tx.group(*assigns, name="restore_all")
    return prefix, saved, restore_all


def write_saved_model(out, rng, manifest):
    """A SavedModel v1 assembled from TensorFlux's protos and kernels (TensorFlux has no
    SavedModelBuilder yet: issue 21): the graph, a SaverDef, a serving signature, and
    variables/variables.{index,data-00000-of-00001} written by the graph's SaveV2 op."""
    export_dir = os.path.join(out, "saved_model")
    os.makedirs(os.path.join(export_dir, "variables"), exist_ok=True)
    g = tx.Graph()
    with g.as_default():
        x = tx.placeholder(tx.float32, [None, 4], name="x")
        kernel = tx.Variable(rng.standard_normal((4, 3)).astype(np.float32), name="dense/kernel")
        bias = tx.Variable(rng.standard_normal(3).astype(np.float32), name="dense/bias")
        scale = tx.Variable(np.float64(1.5), name="scale")
        logits = tx.add(tx.matmul(x, kernel), bias, name="logits")
        probs = tx.nn.softmax(logits * tx.cast(scale, tx.float32), name="probabilities")
        classes = tx.argmax(probs, axis=1, name="classes")
        init = tx.group(*[v.initializer for v in (kernel, bias, scale)], name="init")
        variables = {"dense/kernel": kernel, "dense/bias": bias, "scale": scale}
        prefix, saved, restore_all = _add_saver_ops(variables)
    inputs = {"x": rng.standard_normal((3, 4)).astype(np.float32)}
    with tx.Session(graph=g) as sess:
        sess.run(init)
        var_path = os.path.join(export_dir, "variables", "variables")
        sess.run(saved, feed_dict={prefix: var_path})
        p, c = sess.run([probs, classes], feed_dict={x: inputs["x"]})
        var_values = dict(zip(sorted(variables),
                              sess.run([variables[n].read_value() for n in sorted(variables)])))

    sm = tx.saved_model_pb2.SavedModel(saved_model_schema_version=1)
    mg = sm.meta_graphs.add()
    mg.meta_info_def.tags.append("serve")
    mg.graph_def.CopyFrom(g.as_graph_def())
    mg.saver_def.filename_tensor_name = prefix.name
    mg.saver_def.save_tensor_name = saved.name
    mg.saver_def.restore_op_name = restore_all.name
    mg.saver_def.max_to_keep = 5
    mg.saver_def.keep_checkpoint_every_n_hours = 10000.0
    mg.saver_def.version = 2  # TF's SaverDef.V2 (an int32 in TensorFlux's proto)
    sig = mg.signature_def["serving_default"]
    sig.method_name = "tensorflow/serving/predict"
    for alias, t in (("x", x),):
        sig.inputs[alias].name = t.name
        sig.inputs[alias].dtype = t.dtype.as_datatype_enum
        sig.inputs[alias].tensor_shape.CopyFrom(t.shape.as_proto())
    for alias, t in (("probabilities", probs), ("classes", classes)):
        sig.outputs[alias].name = t.name
        sig.outputs[alias].dtype = t.dtype.as_datatype_enum
        sig.outputs[alias].tensor_shape.CopyFrom(t.shape.as_proto())
    with open(os.path.join(export_dir, "saved_model.pb"), "wb") as f:
        f.write(sm.SerializeToString())

    # TensorFlux reads its own SavedModel back (a sanity check before TensorFlow does).
    with tx.Graph().as_default(), tx.Session() as sess:
        tx.saved_model.load(sess, ["serve"], export_dir)
        back = sess.run(["probabilities:0", "classes:0"], feed_dict={"x:0": inputs["x"]})
    np.testing.assert_array_equal(back[0], p)
    np.testing.assert_array_equal(back[1], c)

    manifest["saved_models"] = [{
        "name": "dense_softmax (v1, tags serve)", "dir": rel(out, export_dir),
        "tags": ["serve"], "signature": "serving_default",
        "inputs": {k: encode(v) for k, v in inputs.items()},
        "outputs": {"probabilities": encode(p), "classes": encode(c)},
        "variables": {k: encode(v) for k, v in var_values.items()}}]


# ------------------------------------------------------------------ (e) checkpoints

_BUNDLE_DTYPES = [
    ("float32", lambda r: np.array([[1.5, -0.0, np.inf], [np.nan, 3.25e-39, -7.0]], np.float32)),
    ("float64", lambda r: r.standard_normal((2, 3, 2))),
    ("float16", lambda r: np.array([0.5, -65504.0, 6e-8, np.inf], np.float16)),
    ("int8", lambda r: np.array([-128, 0, 127], np.int8)),
    ("int16", lambda r: np.array([-32768, 1, 32767], np.int16)),
    ("int32", lambda r: r.integers(-2**31, 2**31 - 1, (4, 2), dtype=np.int32)),
    ("int64", lambda r: np.array([-2**63, 0, 2**63 - 1], np.int64)),
    ("uint8", lambda r: np.arange(0, 256, 51, dtype=np.uint8)),
    ("uint16", lambda r: np.array([0, 65535], np.uint16)),
    ("uint32", lambda r: np.array([0, 2**32 - 1], np.uint32)),
    ("uint64", lambda r: np.array([0, 2**64 - 1], np.uint64)),
    ("bool", lambda r: np.array([[True, False], [False, True]])),
    ("scalar", lambda r: np.float32(42.0)),
    ("empty", lambda r: np.zeros((0, 3), np.float32)),
]


def write_checkpoints(out, rng, manifest):
    ckpt_dir = os.path.join(out, "checkpoints")
    os.makedirs(ckpt_dir, exist_ok=True)
    tensors = {"t_" + name: make(rng) for name, make in _BUNDLE_DTYPES}
    names = sorted(tensors)
    prefix = os.path.join(ckpt_dir, "bundle")
    with tx.Graph().as_default(), tx.Session() as sess:
        save = tx.raw_ops.SaveV2(prefix=prefix, tensor_names=names,
                                 shape_and_slices=[""] * len(names),
                                 tensors=[tx.constant(tensors[n]) for n in names])
        sess.run(save)
    entries = [{"name": "SaveV2 kernel bundle", "kind": "bundle", "prefix": rel(out, prefix),
                "tensors": {n: encode(tensors[n]) for n in names}}]

    # tx.train.Saver's default format today.
    saver_dir = os.path.join(ckpt_dir, "saver")
    os.makedirs(saver_dir)
    with tx.Graph().as_default(), tx.Session() as sess:
        v = tx.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="v")
        sess.run(v.initializer)
        path = tx.train.Saver().save(sess, os.path.join(saver_dir, "model"), global_step=1)
    entries.append({"name": "tx.train.Saver().save", "kind": "saver", "dir": rel(out, saver_dir),
                    "path": rel(out, path), "files": sorted(os.listdir(saver_dir)),
                    "tensors": {"v": encode(np.arange(6, dtype=np.float32).reshape(2, 3))}})
    manifest["checkpoints"] = entries


# ------------------------------------------------------------------ (c) TFRecords

def write_records(out, rng, manifest):
    rec_dir = os.path.join(out, "records")
    os.makedirs(rec_dir, exist_ok=True)
    entries = []
    raw = [b"", b"a", bytes(range(256)), rng.bytes(100000), b"\x00" * 7, "ünïcode".encode()]
    path = os.path.join(rec_dir, "raw.tfrecord")
    with tx.io.TFRecordWriter(path) as w:
        for r in raw:
            w.write(r)
    entries.append({"name": "raw bytes", "file": rel(out, path),
                    "lengths": [len(r) for r in raw],
                    "sha256": [hashlib.sha256(r).hexdigest() for r in raw]})

    path = os.path.join(rec_dir, "examples.tfrecord")
    examples, records = [], []
    for i in range(4):
        img = rng.integers(0, 256, (4, 4), dtype=np.uint8)
        ex = tx.io.make_example({"image": img.tobytes(), "label": i, "name": "item-%d" % i,
                                 "weights": rng.standard_normal(3).astype(np.float32),
                                 "ids": np.array([i, -i, 2**40 + i], np.int64)})
        records.append(ex.SerializeToString())
        examples.append(example_features(ex))
    with tx.io.TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    # TensorFlux's own parsing of the records (what TensorFlow's parse_single_example must match).
    spec = {"image": tx.io.FixedLenFeature([], tx.string),
            "label": tx.io.FixedLenFeature([], tx.int64),
            "name": tx.io.FixedLenFeature([], tx.string),
            "weights": tx.io.FixedLenFeature([3], tx.float32),
            "ids": tx.io.FixedLenFeature([3], tx.int64)}
    parsed = []
    with tx.Graph().as_default(), tx.Session() as sess:
        ph = tx.placeholder(tx.string, [], name="record")
        op = tx.io.parse_single_example(ph, spec)
        for r in records:
            vals = sess.run(op, feed_dict={ph: r})
            parsed.append({k: encode(v) for k, v in vals.items()})
    entries.append({"name": "tf.train.Example records", "file": rel(out, path),
                    "lengths": [len(r) for r in records],
                    "sha256": [hashlib.sha256(r).hexdigest() for r in records],
                    "examples": examples, "parsed": parsed})
    manifest["records"] = entries


# ------------------------------------------------------------------ (d) event files

def read_events(path):
    """What TensorFlux reads back from an event file (tx.summary.summary_iterator): the values
    TensorBoard must see."""
    scalars, histos, tags_rm, logs, graph_nodes, versions = {}, {}, [], [], None, []
    for ev in tx.summary.summary_iterator(path):
        kind = ev.WhichOneof("what")
        if kind == "file_version":
            versions.append(ev.file_version)
        elif kind == "graph_def":
            gd = tx.GraphDef()
            gd.ParseFromString(ev.graph_def)
            graph_nodes = [[n.name, n.op] for n in gd.node]
        elif kind == "summary":
            for v in ev.summary.value:
                vk = v.WhichOneof("value")
                if vk == "simple_value":
                    scalars.setdefault(v.tag, []).append([ev.step, v.simple_value])
                elif vk == "histo":
                    h = v.histo
                    histos.setdefault(v.tag, []).append({
                        "step": ev.step, "min": h.min, "max": h.max, "num": h.num, "sum": h.sum,
                        "sum_squares": h.sum_squares, "bucket_limit": list(h.bucket_limit),
                        "bucket": list(h.bucket)})
        elif kind == "tagged_run_metadata":
            meta = tx.RunMetadata()
            meta.ParseFromString(ev.tagged_run_metadata.run_metadata)
            tags_rm.append({"tag": ev.tagged_run_metadata.tag, "step": ev.step,
                            "node_stats": sum(len(d.node_stats)
                                              for d in meta.step_stats.dev_stats)})
        elif kind == "session_log":
            logs.append({"step": ev.step, "status": int(ev.session_log.status)})
    return {"file_version": versions, "scalars": scalars, "histograms": histos,
            "run_metadata": tags_rm, "session_logs": logs, "graph_nodes": graph_nodes}


def write_events(out, rng, manifest):
    logdir = os.path.join(out, "events")
    g = tx.Graph()
    computed = {}
    with g.as_default():
        x = tx.placeholder(tx.float32, [None], name="x")
        mean = tx.reduce_mean(x, name="mean")
        tx.summary.scalar("loss", mean)
        with tx.name_scope("layer1"):
            tx.summary.histogram("activations", x)
        merged = tx.summary.merge_all()
        writer = tx.summary.FileWriter(logdir, graph=g)
        writer.add_session_log(tx.summary.SessionLog(status=tx.summary.SessionLog.START), 0)
        with tx.Session(graph=g) as sess:
            for step in range(0, 50, 10):
                vals = (rng.standard_normal(200) * (1 + step / 10)).astype(np.float32)
                if step == 20:
                    meta = tx.RunMetadata()
                    s, m = sess.run([merged, mean], feed_dict={x: vals},
                                    options=tx.RunOptions(trace_level=tx.RunOptions.FULL_TRACE),
                                    run_metadata=meta)
                    writer.add_run_metadata(meta, "step_%d" % step, global_step=step)
                else:
                    s, m = sess.run([merged, mean], feed_dict={x: vals})
                computed.setdefault("loss", []).append([step, float(m)])
                writer.add_summary(s, global_step=step)
                writer.add_scalars({"learning_rate": 0.1 / (1 + step), "images_per_second":
                                    1000.0 + step}, step)
        writer.close()
    path = writer.filename
    got = read_events(path)
    # The scalar written is the session's float32 mean, bit for bit.
    assert got["scalars"]["loss"] == computed["loss"], (got["scalars"]["loss"], computed)
    got.update(name="tx.summary.FileWriter", file=rel(out, path))
    manifest["events"] = [got]


# ------------------------------------------------------------------ the demo's run

def run_demo(out, steps, server_bin):
    """examples/fashion_mnist/train.py (what `make demo` runs last), stopped at `steps`; its
    run directory becomes OUT/demo."""
    run_dir = os.path.join(out, "demo")
    cmd = [sys.executable, os.path.join(_REPO, "examples", "fashion_mnist", "train.py"),
           "--out", run_dir, "--max-steps", str(steps), "--eval-examples", "1000"]
    if server_bin:
        cmd += ["--server-bin", server_bin]
    print("running: %s" % " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    return run_dir


def describe_demo(out, run_dir, manifest):
    events = sorted(glob.glob(os.path.join(run_dir, "events.out.tfevents.*")))
    if len(events) != 1:
        raise SystemExit("expected one event file in %s, found %d" % (run_dir, len(events)))
    entry = read_events(events[0])
    entry.update(name="make demo's event file (examples/fashion_mnist/train.py)",
                 file=rel(out, events[0]) if events[0].startswith(out) else events[0])
    with open(os.path.join(run_dir, "history.json"), encoding="utf-8") as f:
        history = json.load(f)
    entry["history_test_accuracy"] = [[h["step"], h["test_accuracy"]] for h in history
                                      if "test_accuracy" in h]
    manifest["demo_events"] = entry

    model_pb = os.path.join(run_dir, "model.pb")
    images = tx.io.read_idx("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz")
    feed = images[:16].astype(np.float32).reshape(16, 28, 28, 1)
    with tx.Graph().as_default() as g, tx.Session() as sess:
        gd = tx.GraphDef()
        with open(model_pb, "rb") as f:
            gd.ParseFromString(f.read())
        tx.import_graph_def(gd, name="")
        probs = sess.run("probabilities:0", feed_dict={"images:0": feed})
    del g
    manifest["graphs"].append({
        "name": "make demo's frozen model.pb", "format": "binary",
        "file": rel(out, model_pb) if model_pb.startswith(out) else model_pb,
        "nodes": len(gd.node), "ops": sorted({n.op for n in gd.node}),
        "feeds": {"images:0": encode(feed)}, "fetches": {"probabilities:0": encode(probs)}})


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", help="output directory (emptied first)")
    p.add_argument("--demo-steps", type=int, default=None,
                   help="run the Fashion-MNIST demo's train.py for this many steps into OUT/demo")
    p.add_argument("--demo-run", default=None,
                   help="a finished train.py --out directory to describe instead")
    p.add_argument("--server-bin", default=None, help="tensorflux-server for the demo's cluster")
    args = p.parse_args(argv)
    out = os.path.abspath(args.out)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    rng = np.random.default_rng(_SEED)
    manifest = {"tensorflux_version": tx.__version__}
    write_graphs(out, rng, manifest)
    write_saved_model(out, rng, manifest)
    write_checkpoints(out, rng, manifest)
    write_records(out, rng, manifest)
    write_events(out, rng, manifest)
    run_dir = args.demo_run
    if args.demo_steps:
        run_dir = run_demo(out, args.demo_steps, args.server_bin)
    if run_dir:
        describe_demo(out, os.path.abspath(run_dir), manifest)
    with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    print("wrote %s" % os.path.join(out, "manifest.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
