"""Reads TensorFlux-written files with TensorFlow and TensorBoard and compares the values.

    ~/.cache/tensorflux/oracle-venv/bin/python tools/oracle/reverse_check.py DIR [--json REPORT]

DIR is what tools/oracle/reverse_write.py wrote (its manifest.json holds TensorFlux's own
values). Run with the oracle venv's python (TensorFlow 2.15 CPU + tensorboard); TensorFlux is
not imported here. Checks, one line each (PASS / FAIL / KNOWN: a documented gap, not a failure):

  graph        tf.import_graph_def of each GraphDef (binary and text), run with the same feeds
               (and init/train ops first where listed): the same outputs
  saved_model  tf.compat.v1.saved_model.load + the signature's tensors, and TF 2's
               tf.saved_model.load(...).signatures[...] (eager, in a child process): the same
               outputs; the variables/ bundle read by tf.train.load_checkpoint: the same values
  checkpoint   tf.train.load_checkpoint on the SaveV2 kernel's bundle: every tensor, bit for bit;
               tx.train.Saver's own files (safetensors today: KNOWN until issue 21)
  tfrecord     tf.data.TFRecordDataset and tf.compat.v1.io.tf_record_iterator: the same records;
               tf.train.Example parsing and tf.io.parse_single_example: the same features
  events       TensorBoard's EventAccumulator (and the plugin accumulator `tensorboard --logdir`
               serves from): the same scalar/histogram tags, steps and values, the graph's nodes,
               the run metadata tags; EventFileLoader: file_version and session logs

Floats from computations (graphs, SavedModels) agree within rtol 1e-5 / atol 1e-6 (TensorFlow's
kernels sum in another order); stored values (checkpoints, records, event files) must be equal.
Exit status 0 when nothing FAILs, 1 otherwise.
"""

import argparse
import hashlib
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from manifest_codec import decode, example_features  # noqa: E402  (this folder)

RTOL, ATOL = 1e-5, 1e-6


class Results:
    def __init__(self):
        self.rows = []

    def add(self, area, name, status, detail):
        self.rows.append({"area": area, "name": name, "status": status, "detail": detail})
        print("%-5s %-11s %s: %s" % (status, area, name, detail), flush=True)

    def run(self, area, name, fn):
        """Runs fn() -> (status, detail); an exception is a FAIL with its message."""
        try:
            status, detail = fn()
        except Exception as e:  # pylint: disable=broad-except
            msg = ("%s: %s" % (type(e).__name__, e)).strip().replace("\n", " ")
            status, detail = "FAIL", msg[:600]
        self.add(area, name, status, detail)


def compare(want, got, exact=False):
    """(ok, max_abs_diff or None): same dtype and shape, then bytes equal (exact, or any non-float)
    or allclose (floats)."""
    got = np.asarray(got)
    if want.dtype == object:
        got_b = [bytes(v) for v in got.ravel()]
        return got.shape == want.shape and got_b == list(want.ravel()), None
    if got.dtype != want.dtype or got.shape != want.shape:
        raise AssertionError("dtype/shape %s%s, TensorFlux %s%s" % (got.dtype, list(got.shape),
                                                                    want.dtype, list(want.shape)))
    if exact or want.dtype.kind not in "fc":
        return got.tobytes() == want.tobytes(), None
    diff = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) \
        if want.size else 0.0
    ok = np.allclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True)
    return ok, diff


def compare_all(wanted, got_by_name, exact=False):
    """Compares each name's array; (status, detail)."""
    worst, bad = 0.0, []
    for name, w in wanted.items():
        ok, diff = compare(decode(w), got_by_name[name], exact)
        if diff is not None:
            worst = max(worst, diff)
        if not ok:
            bad.append("%s (max |diff| %s)" % (name, diff))
    detail = "%d values%s" % (len(wanted), "" if exact else ", max |diff| %.3g" % worst)
    if bad:
        return "FAIL", detail + "; differ: " + ", ".join(bad)
    return "PASS", detail


# ------------------------------------------------------------------ TensorFlow checks

def check_graph(tf, root, entry):
    from google.protobuf import text_format  # pylint: disable=import-outside-toplevel
    path = os.path.join(root, entry["file"])
    gd = tf.compat.v1.GraphDef()
    if entry["format"] == "text":
        with open(path, encoding="utf-8") as f:
            text_format.Parse(f.read(), gd)
    else:
        with open(path, "rb") as f:
            gd.ParseFromString(f.read())
    feeds = {k: decode(v) for k, v in entry["feeds"].items()}
    with tf.Graph().as_default() as g:
        tf.import_graph_def(gd, name="")
        with tf.compat.v1.Session(graph=g) as sess:
            extra = ""
            for i, op in enumerate(entry.get("run_first", [])):
                sess.run(op, feed_dict=feeds)
                if i == 0 and "loss_before" in entry:
                    before = sess.run("loss:0", feed_dict=feeds)
                    if not np.isclose(before, entry["loss_before"], rtol=RTOL, atol=ATOL):
                        return "FAIL", "loss before the step %r, TensorFlux %r" % (
                            float(before), entry["loss_before"])
                    extra = "; loss before the step %.6f (TensorFlux %.6f)" % (
                        before, entry["loss_before"])
            names = sorted(entry["fetches"])
            got = dict(zip(names, sess.run(names, feed_dict=feeds)))
    status, detail = compare_all(entry["fetches"], got)
    return status, "%d nodes, %d op types; %s%s" % (entry["nodes"], len(entry["ops"]), detail,
                                                    extra)


def check_saved_model(tf, root, entry):
    export_dir = os.path.join(root, entry["dir"])
    with tf.Graph().as_default() as g, tf.compat.v1.Session(graph=g) as sess:
        meta = tf.compat.v1.saved_model.load(sess, entry["tags"], export_dir)
        sig = meta.signature_def[entry["signature"]]
        feeds = {sig.inputs[a].name: decode(v) for a, v in entry["inputs"].items()}
        aliases = sorted(entry["outputs"])
        got = dict(zip(aliases, sess.run([sig.outputs[a].name for a in aliases],
                                         feed_dict=feeds)))
    status, detail = compare_all(entry["outputs"], got)
    return status, "signature %r (%s -> %s): %s" % (
        entry["signature"], ", ".join(sorted(sig.inputs)), ", ".join(aliases), detail)


def check_saved_model_tf2(root, entry):
    """The same SavedModel through TF 2's API (tf.saved_model.load, eager, the signature as a
    concrete function), in a child process: this one runs with v2 behavior disabled."""
    import subprocess  # pylint: disable=import-outside-toplevel
    import tempfile  # pylint: disable=import-outside-toplevel
    with tempfile.TemporaryDirectory() as tmp:
        inputs = os.path.join(tmp, "in.npz")
        outputs = os.path.join(tmp, "out.npz")
        np.savez(inputs, **{a: decode(v) for a, v in entry["inputs"].items()})
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--tf2-call",
                               os.path.join(root, entry["dir"]), entry["signature"], inputs,
                               outputs], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            return "FAIL", "tf.saved_model.load failed: " + proc.stderr.strip()[-500:]
        with np.load(outputs) as f:
            got = {k: f[k] for k in f.files}
    status, detail = compare_all(entry["outputs"], got)
    return status, "tf.saved_model.load(...).signatures[%r] (eager): %s" % (entry["signature"],
                                                                          detail)


def _tf2_call(export_dir, signature, inputs, outputs):
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    fn = tf.saved_model.load(export_dir).signatures[signature]
    with np.load(inputs) as f:
        feeds = {k: tf.constant(f[k]) for k in f.files}
    np.savez(outputs, **{k: v.numpy() for k, v in fn(**feeds).items()})
    return 0


def check_saved_model_variables(tf, root, entry):
    reader = tf.train.load_checkpoint(os.path.join(root, entry["dir"], "variables", "variables"))
    names = sorted(reader.get_variable_to_shape_map())
    if names != sorted(entry["variables"]):
        return "FAIL", "TensorFlow sees %s, TensorFlux wrote %s" % (names,
                                                                  sorted(entry["variables"]))
    got = {n: reader.get_tensor(n) for n in names}
    status, detail = compare_all(entry["variables"], got, exact=True)
    return status, "variables/variables: %s: %s" % (", ".join(names), detail)


def check_bundle(tf, root, entry):
    reader = tf.train.load_checkpoint(os.path.join(root, entry["prefix"]))
    dtypes = reader.get_variable_to_dtype_map()
    if sorted(dtypes) != sorted(entry["tensors"]):
        return "FAIL", "TensorFlow lists %s, TensorFlux wrote %s" % (sorted(dtypes),
                                                                   sorted(entry["tensors"]))
    got = {n: reader.get_tensor(n) for n in dtypes}
    status, detail = compare_all(entry["tensors"], got, exact=True)
    return status, "%s (bit for bit): %s" % (
        ", ".join("%s:%s" % (n, dtypes[n].name) for n in sorted(dtypes)), detail)


def check_saver(tf, root, entry):
    """tx.train.Saver's checkpoint. TensorFlux writes safetensors today (issue 21 makes the V2
    bundle the default): TensorFlow not reading it is KNOWN; reading it with equal values
    passes."""
    ckpt_dir = os.path.join(root, entry["dir"])
    latest = tf.train.latest_checkpoint(ckpt_dir)
    target = latest or os.path.join(root, entry["path"])
    try:
        reader = tf.train.load_checkpoint(target)
        got = {n: reader.get_tensor(n) for n in reader.get_variable_to_shape_map()}
    except Exception as e:  # pylint: disable=broad-except
        msg = str(e).strip().splitlines()[0][:200]
        return "KNOWN", ("files %s; tf.train.latest_checkpoint -> %r; TensorFlow cannot read "
                         "it: %s: %s (safetensors, not TF's V2 bundle, until issue 21)"
                         % (entry["files"], latest and os.path.basename(latest),
                            type(e).__name__, msg))
    return compare_all(entry["tensors"], got, exact=True)


def _records_tf_data(tf, path):
    ds = tf.data.TFRecordDataset(path)
    nxt = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
    out = []
    with tf.compat.v1.Session() as sess:
        while True:
            try:
                out.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                return out


def check_records(tf, root, entry, how):
    path = os.path.join(root, entry["file"])
    with tf.Graph().as_default():
        if how == "tf.data.TFRecordDataset":
            records = _records_tf_data(tf, path)
        else:
            records = list(tf.compat.v1.io.tf_record_iterator(path))
    lengths = [len(r) for r in records]
    digests = [hashlib.sha256(r).hexdigest() for r in records]
    if lengths != entry["lengths"] or digests != entry["sha256"]:
        return "FAIL", "lengths %s, TensorFlux wrote %s (or contents differ)" % (
            lengths, entry["lengths"])
    return "PASS", "%d records, lengths %s, same bytes (sha256)" % (len(records), lengths)


def check_examples(tf, root, entry):
    path = os.path.join(root, entry["file"])
    records = list(tf.compat.v1.io.tf_record_iterator(path))
    for i, (r, want) in enumerate(zip(records, entry["examples"])):
        got = example_features(tf.train.Example.FromString(r))
        if got != want:
            return "FAIL", "record %d: tf.train.Example %s, TensorFlux wrote %s" % (i, got, want)
    spec = {"image": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64),
            "name": tf.io.FixedLenFeature([], tf.string),
            "weights": tf.io.FixedLenFeature([3], tf.float32),
            "ids": tf.io.FixedLenFeature([3], tf.int64)}
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        ph = tf.compat.v1.placeholder(tf.string, [])
        op = tf.io.parse_single_example(ph, spec)
        for i, (r, want) in enumerate(zip(records, entry["parsed"])):
            got = {k: (np.array(v, dtype=object) if isinstance(v, bytes) else v)
                   for k, v in sess.run(op, feed_dict={ph: r}).items()}
            status, detail = compare_all(want, got, exact=True)
            if status != "PASS":
                return status, "record %d: parse_single_example: %s" % (i, detail)
    return "PASS", ("%d tf.train.Examples: features %s equal; parse_single_example gives "
                    "TensorFlux's values" % (len(records), sorted(entry["examples"][0])))


# ------------------------------------------------------------------ TensorBoard checks

def _accumulator(path):
    from tensorboard.backend.event_processing import event_accumulator  # noqa
    acc = event_accumulator.EventAccumulator(path, size_guidance={
        event_accumulator.SCALARS: 0, event_accumulator.HISTOGRAMS: 0,
        event_accumulator.COMPRESSED_HISTOGRAMS: 0, event_accumulator.IMAGES: 0,
        event_accumulator.AUDIO: 0, event_accumulator.TENSORS: 0})
    acc.Reload()
    return acc


def check_event_scalars(root, entry):
    acc = _accumulator(os.path.join(root, entry["file"]))
    tags = sorted(acc.Tags()["scalars"])
    if tags != sorted(entry["scalars"]):
        return "FAIL", "scalar tags %s, TensorFlux wrote %s" % (tags, sorted(entry["scalars"]))
    parts = []
    for tag in tags:
        got = [[e.step, e.value] for e in acc.Scalars(tag)]
        if got != entry["scalars"][tag]:
            return "FAIL", "%s: TensorBoard %s, TensorFlux %s" % (tag, got,
                                                                  entry["scalars"][tag])
        steps = [s for s, _ in got]
        parts.append("%s steps %s" % (tag, steps) if len(steps) <= 6 else
                     "%s %d points, steps %d..%d" % (tag, len(steps), steps[0], steps[-1]))
    return "PASS", "EventAccumulator.Scalars equal (steps and float32 values): " + "; ".join(
        parts)


def check_event_histograms(root, entry):
    acc = _accumulator(os.path.join(root, entry["file"]))
    tags = sorted(acc.Tags()["histograms"])
    if tags != sorted(entry["histograms"]):
        return "FAIL", "histogram tags %s, TensorFlux wrote %s" % (tags,
                                                                  sorted(entry["histograms"]))
    if not tags:
        return "PASS", "no histograms written, none read"
    n = 0
    for tag in tags:
        for ev, want in zip(acc.Histograms(tag), entry["histograms"][tag]):
            h = ev.histogram_value
            got = {"step": ev.step, "min": h.min, "max": h.max, "num": h.num, "sum": h.sum,
                   "sum_squares": h.sum_squares, "bucket_limit": list(h.bucket_limit),
                   "bucket": list(h.bucket)}
            if got != want:
                return "FAIL", "%s step %d: TensorBoard %s, TensorFlux %s" % (tag, ev.step, got,
                                                                             want)
            n += 1
        if len(acc.Histograms(tag)) != len(entry["histograms"][tag]):
            return "FAIL", "%s: %d histograms read, %d written" % (
                tag, len(acc.Histograms(tag)), len(entry["histograms"][tag]))
    return "PASS", "EventAccumulator.Histograms %s: %d histograms, all fields equal" % (tags, n)


def check_event_graph(root, entry):
    acc = _accumulator(os.path.join(root, entry["file"]))
    if entry["graph_nodes"] is None:
        return ("PASS" if not acc.Tags()["graph"] else "FAIL"), "no graph written"
    gd = acc.Graph()
    got = [[n.name, n.op] for n in gd.node]
    if got != entry["graph_nodes"]:
        return "FAIL", "graph of %d nodes, TensorFlux wrote %d" % (len(got),
                                                                  len(entry["graph_nodes"]))
    rm_tags = sorted(acc.Tags()["run_metadata"])
    want_rm = sorted(r["tag"] for r in entry["run_metadata"])
    if rm_tags != want_rm:
        return "FAIL", "run metadata tags %s, TensorFlux wrote %s" % (rm_tags, want_rm)
    stats = []
    for r in entry["run_metadata"]:
        meta = acc.RunMetadata(r["tag"])
        n = sum(len(d.node_stats) for d in meta.step_stats.dev_stats)
        if n != r["node_stats"]:
            return "FAIL", "run metadata %s: %d node stats, TensorFlux wrote %d" % (
                r["tag"], n, r["node_stats"])
        stats.append("%s: %d node stats" % (r["tag"], n))
    return "PASS", "EventAccumulator.Graph: %d nodes, same names and ops; run metadata %s" % (
        len(got), "; ".join(stats) or "none")


def check_event_plugin(root, entry):
    """The accumulator `tensorboard --logdir` serves from: legacy simple_value scalars become
    scalar-plugin tensors, histograms histogram-plugin tensors."""
    from tensorboard.backend.event_processing import plugin_event_accumulator as pea  # noqa
    from tensorboard.util import tensor_util  # pylint: disable=import-outside-toplevel
    acc = pea.EventAccumulator(os.path.join(root, entry["file"]),
                               size_guidance={pea.TENSORS: 0, pea.GRAPH: 1})
    acc.Reload()
    all_tags = set(acc.Tags()["tensors"])
    # The graph and each run metadata become graph-plugin tensors ("__run_graph__" with plugin
    # "graph_run_graph"; the run metadata's tag with plugin "graph_tagged_run_metadata").
    graph_tags = {t for t in all_tags
                  if acc.SummaryMetadata(t).plugin_data.plugin_name.startswith("graph")}
    want_graph = {r["tag"] for r in entry["run_metadata"]}
    if entry["graph_nodes"] is not None:
        want_graph.add("__run_graph__")
    if graph_tags != want_graph:
        return "FAIL", "graph plugin tags %s, TensorFlux wrote %s" % (sorted(graph_tags),
                                                                     sorted(want_graph))
    tags = all_tags - graph_tags
    want = set(entry["scalars"]) | set(entry["histograms"])
    if tags != want:
        return "FAIL", "tensor tags %s, TensorFlux wrote %s" % (sorted(tags), sorted(want))
    for tag, values in entry["scalars"].items():
        plugin = acc.SummaryMetadata(tag).plugin_data.plugin_name
        got = [[e.step, float(tensor_util.make_ndarray(e.tensor_proto))]
               for e in acc.Tensors(tag)]
        if plugin != "scalars" or got != values:
            return "FAIL", "%s: plugin %r, %s; TensorFlux %s" % (tag, plugin, got, values)
    for tag, values in entry["histograms"].items():
        plugin = acc.SummaryMetadata(tag).plugin_data.plugin_name
        counts = [float(tensor_util.make_ndarray(e.tensor_proto)[:, 2].sum())
                  for e in acc.Tensors(tag)]
        if plugin != "histograms" or counts != [h["num"] for h in values]:
            return "FAIL", "%s: plugin %r, counts %s; TensorFlux %s" % (
                tag, plugin, counts, [h["num"] for h in values])
    return "PASS", ("plugin_event_accumulator: %d tags as scalars/histograms plugin tensors, "
                    "same steps and values; graph plugin tags %s" % (len(tags),
                                                                     sorted(graph_tags)))


def check_event_raw(root, entry):
    from tensorboard.backend.event_processing import event_file_loader  # noqa
    events = list(event_file_loader.LegacyEventFileLoader(
        os.path.join(root, entry["file"])).Load())
    first = events[0].WhichOneof("what") if events else None
    if first != "file_version" or [events[0].file_version] != entry["file_version"]:
        return "FAIL", "first event %r, TensorFlux wrote file_version %s" % (first,
                                                                            entry["file_version"])
    logs = [{"step": e.step, "status": int(e.session_log.status)} for e in events
            if e.WhichOneof("what") == "session_log"]
    if logs != entry["session_logs"]:
        return "FAIL", "session logs %s, TensorFlux wrote %s" % (logs, entry["session_logs"])
    return "PASS", "EventFileLoader: %d events, first file_version %r, session logs %s" % (
        len(events), events[0].file_version, logs)


def check_demo_history(root, entry):
    acc = _accumulator(os.path.join(root, entry["file"]))
    got = [[e.step, e.value] for e in acc.Scalars("test_accuracy")]
    want = entry["history_test_accuracy"]
    ok = len(got) == len(want) and all(
        s == ws and abs(v - wv) <= 1e-7 * max(1.0, abs(wv)) for (s, v), (ws, wv) in zip(got, want))
    return ("PASS" if ok else "FAIL"), "test_accuracy in TensorBoard %s, history.json %s" % (
        got, want)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dir", help="reverse_write.py's output directory")
    p.add_argument("--json", default=None, help="write the results here (JSON)")
    p.add_argument("--tf2-call", action="store_true",
                   help="internal: DIR SIGNATURE IN.npz OUT.npz, a TF 2 signature call")
    p.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.tf2_call:
        return _tf2_call(args.dir, *args.rest)
    root = os.path.abspath(args.dir)
    with open(os.path.join(root, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)

    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    import tensorboard  # pylint: disable=import-outside-toplevel
    tf.compat.v1.disable_v2_behavior()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    print("TensorFlow %s, TensorBoard %s; TensorFlux %s" % (
        tf.__version__, tensorboard.__version__, manifest.get("tensorflux_version")), flush=True)
    res = Results()
    for e in manifest.get("graphs", []):
        res.run("graph", e["name"], lambda e=e: check_graph(tf, root, e))
    for e in manifest.get("saved_models", []):
        res.run("saved_model", e["name"], lambda e=e: check_saved_model(tf, root, e))
        res.run("saved_model", e["name"] + " via TF 2",
                lambda e=e: check_saved_model_tf2(root, e))
        res.run("saved_model", e["name"] + " variables",
                lambda e=e: check_saved_model_variables(tf, root, e))
    for e in manifest.get("checkpoints", []):
        fn = check_bundle if e["kind"] == "bundle" else check_saver
        res.run("checkpoint", e["name"], lambda e=e, fn=fn: fn(tf, root, e))
    for e in manifest.get("records", []):
        for how in ("tf.data.TFRecordDataset", "tf_record_iterator"):
            res.run("tfrecord", "%s via %s" % (e["name"], how),
                    lambda e=e, how=how: check_records(tf, root, e, how))
        if "examples" in e:
            res.run("tfrecord", e["name"] + " parsed", lambda e=e: check_examples(tf, root, e))
    event_entries = list(manifest.get("events", []))
    if "demo_events" in manifest:
        event_entries.append(manifest["demo_events"])
    for e in event_entries:
        res.run("events", e["name"] + " scalars", lambda e=e: check_event_scalars(root, e))
        res.run("events", e["name"] + " histograms", lambda e=e: check_event_histograms(root, e))
        res.run("events", e["name"] + " graph", lambda e=e: check_event_graph(root, e))
        res.run("events", e["name"] + " plugin", lambda e=e: check_event_plugin(root, e))
        res.run("events", e["name"] + " raw", lambda e=e: check_event_raw(root, e))
    if "demo_events" in manifest:
        res.run("events", "make demo's test_accuracy vs history.json",
                lambda: check_demo_history(root, manifest["demo_events"]))

    counts = {}
    for r in res.rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print("summary: %s" % ", ".join("%s %d" % kv for kv in sorted(counts.items())), flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"tensorflow": tf.__version__, "tensorboard": tensorboard.__version__,
                       "tensorflux": manifest.get("tensorflux_version"), "results": res.rows},
                      f, indent=1)
    return 1 if counts.get("FAIL") else 0


if __name__ == "__main__":
    sys.exit(main())
