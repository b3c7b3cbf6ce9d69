"""TensorFlow's answers for the reduction ops on integer dtypes, empty inputs and keep_dims.

Run with the oracle virtualenv (TensorFlow 2.15 CPU), from the repository root:

    ~/.cache/tensorflux/oracle-venv/bin/python tools/oracle/reductions.py \
        [--out tests/data/oracle/reductions_fixes.json]

Covers Sum, Mean, Prod, Max, Min (every integer dtype: int8..int64, uint8..uint64; sums that
wrap, means whose sum or count does not fit the element type, truncation of negative means),
ArgMax / ArgMin (ties, both output types), All / Any, and empty reductions (a 0-size axis) of
every integer and float dtype, with and without keep_dims.

Writes one JSON object, keys sorted, one case per line, two runs giving the same bytes:

    {"tensorflow_version": "2.15.1",
     "inputs": {NAME: {"dtype": "int8", "shape": [..], "values": [..]}            # explicit
                       or {"dtype": .., "shape": [..], "fill": V}},                 # np.full
     "cases": {ID: {"op": "Sum", "input": NAME, "axis": null | int | [int..],
                    "keep_dims": bool, ("output_type": "int32"),
                    "dtype": .., "shape": [..], "values": [..]}                      # TF's output
               or {..., "error": "InvalidArgumentError"}}}                          # TF refused

Integer values are exact JSON integers; float values are numbers or "nan" / "inf" / "-inf".
tests/python/test_reductions_oracle.py reads the file (never TensorFlow itself).
"""

import argparse
import json
import os

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
tf.logging.set_verbosity(tf.logging.ERROR)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOATS = ["float16", "float32", "float64"]
NUMERIC_OPS = ["Sum", "Mean", "Prod", "Max", "Min"]
TF_OPS = {"Sum": tf.reduce_sum, "Mean": tf.reduce_mean, "Prod": tf.reduce_prod,
          "Max": tf.reduce_max, "Min": tf.reduce_min, "All": tf.reduce_all,
          "Any": tf.reduce_any}


def _values(a):
    flat = a.reshape(-1)
    if a.dtype.kind == "f":
        out = []
        for v in flat.astype(np.float64):
            out.append("nan" if np.isnan(v) else ("inf" if v == np.inf else
                                                   ("-inf" if v == -np.inf else float(v))))
        return out
    if a.dtype == np.bool_:
        return [bool(v) for v in flat]
    return [int(v) for v in flat]


def make_inputs():
    """NAME -> numpy array, seeded: the same arrays on every run."""
    rng = np.random.default_rng(19)
    inputs = {}
    for dt in INTS:
        info = np.iinfo(dt)
        signed = info.min < 0
        inputs["ones256_" + dt] = np.ones([256], dt)                  # mean 1, uint8 sum wraps
        inputs["max300_" + dt] = np.full([300], info.max, dt)          # sum wraps in every type
        inputs["big_2x700_" + dt] = np.full([2, 700], info.max // 2 + 1, dt)
        # Random values over the full range (the high bits matter for the wide sums).
        inputs["rand_3x5_" + dt] = rng.integers(info.min, info.max, size=[3, 5], dtype=dt,
                                                endpoint=True)
        inputs["rand_2x3x4_" + dt] = rng.integers(info.min, info.max, size=[2, 3, 4], dtype=dt,
                                                  endpoint=True)
        # Small values with ties for ArgMax/ArgMin and truncating means.
        lo = -9 if signed else 0
        inputs["small_4x6_" + dt] = rng.integers(lo, 10, size=[4, 6], dtype=dt)
        # Extremes: min and max together, a mean that truncates toward zero.
        ext = [info.min, info.min, info.max, 0, 1, info.max - 1]
        inputs["extremes_" + dt] = np.array(ext, dt)
        inputs["trunc_2x4_" + dt] = np.array(
            [[-7, 0, 7, 2], [-3, 2, 0, -4]] if signed else [[7, 0, 7, 2], [3, 2, 0, 4]], dt)
        inputs["threes10_" + dt] = np.full([10], 3, dt)                # products that wrap
        inputs["empty_0x3_" + dt] = np.zeros([0, 3], dt)
        inputs["empty_2x0x3_" + dt] = np.zeros([2, 0, 3], dt)
    for dt in FLOATS:
        inputs["empty_0x3_" + dt] = np.zeros([0, 3], dt)
        inputs["empty_2x0x3_" + dt] = np.zeros([2, 0, 3], dt)
    inputs["bool_3x4"] = rng.integers(0, 2, size=[3, 4]).astype(bool)
    inputs["bool_true_2x3"] = np.ones([2, 3], bool)
    inputs["empty_0x3_bool"] = np.zeros([0, 3], bool)
    inputs["empty_2x0x3_bool"] = np.zeros([2, 0, 3], bool)
    return inputs


def make_cases():
    """(ID, op, input NAME, axis, keep_dims, output_type) in a fixed order."""
    cases = []

    def add(op, name, axis, keep_dims=False, output_type=None):
        ax = "all" if axis is None else ("_".join(str(a) for a in axis)
                                         if isinstance(axis, list) else str(axis))
        cid = "%s/%s/axis=%s%s%s" % (op, name, ax, "/keep" if keep_dims else "",
                                     "/" + output_type if output_type else "")
        cases.append((cid, op, name, axis, keep_dims, output_type))

    for dt in INTS:
        for op in NUMERIC_OPS:
            add(op, "ones256_" + dt, None)
            add(op, "max300_" + dt, 0)
            add(op, "big_2x700_" + dt, 1)
            add(op, "big_2x700_" + dt, None, keep_dims=True)
            add(op, "rand_3x5_" + dt, 0)
            add(op, "rand_3x5_" + dt, 1, keep_dims=True)
            add(op, "rand_3x5_" + dt, -1)
            add(op, "rand_2x3x4_" + dt, [0, 2])
            add(op, "rand_2x3x4_" + dt, [1], keep_dims=True)
            add(op, "rand_2x3x4_" + dt, None)
            add(op, "extremes_" + dt, 0)
            add(op, "trunc_2x4_" + dt, 1)
            add(op, "trunc_2x4_" + dt, 0)
            add(op, "threes10_" + dt, None)
            add(op, "empty_0x3_" + dt, 0)
            add(op, "empty_0x3_" + dt, 1)
            add(op, "empty_0x3_" + dt, None)
            add(op, "empty_2x0x3_" + dt, 1, keep_dims=True)
            add(op, "empty_2x0x3_" + dt, [0, 1])
        for op in ["ArgMax", "ArgMin"]:
            add(op, "small_4x6_" + dt, 0)
            add(op, "small_4x6_" + dt, 1)
            add(op, "small_4x6_" + dt, -1, output_type="int32")
            add(op, "rand_2x3x4_" + dt, 1)
            add(op, "extremes_" + dt, 0, output_type="int32")
            add(op, "empty_0x3_" + dt, 1)
            add(op, "empty_0x3_" + dt, 0)          # TF refuses: the reduced dim is empty
    for dt in FLOATS:
        for op in NUMERIC_OPS:
            add(op, "empty_0x3_" + dt, 0)
            add(op, "empty_0x3_" + dt, None)
            add(op, "empty_2x0x3_" + dt, 1, keep_dims=True)
    for op in ["All", "Any"]:
        add(op, "bool_3x4", 0)
        add(op, "bool_3x4", 1, keep_dims=True)
        add(op, "bool_3x4", None)
        add(op, "bool_true_2x3", None)
        add(op, "empty_0x3_bool", 0)
        add(op, "empty_0x3_bool", None)
        add(op, "empty_2x0x3_bool", 1, keep_dims=True)
    return cases


def run_case(sess, x, op, axis, keep_dims, output_type):
    with tf.Graph().as_default():
        t = tf.constant(x)
        if op in ("ArgMax", "ArgMin"):
            fn = tf.argmax if op == "ArgMax" else tf.argmin
            y = fn(t, axis=axis, output_type=getattr(tf, output_type or "int64"))
        else:
            y = TF_OPS[op](t, axis=axis, keepdims=keep_dims)
        with tf.Session(config=sess) as s:
            try:
                return s.run(y), None
            except tf.errors.OpError as e:
                return None, type(e).__name__


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "oracle",
                                                  "reductions_fixes.json"))
    args = ap.parse_args()
    config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    inputs = make_inputs()
    cases = {}
    for cid, op, name, axis, keep_dims, output_type in make_cases():
        y, err = run_case(config, inputs[name], op, axis, keep_dims, output_type)
        c = {"op": op, "input": name, "axis": axis, "keep_dims": keep_dims}
        if output_type:
            c["output_type"] = output_type
        if err:
            c["error"] = err
        else:
            y = np.asarray(y)
            c.update(dtype=y.dtype.name, shape=list(y.shape), values=_values(y))
        cases[cid] = c
    enc = {}
    for name, a in inputs.items():
        if a.size > 0 and np.all(a == a.reshape(-1)[0]) and a.size > 8:
            enc[name] = {"dtype": a.dtype.name, "shape": list(a.shape),
                         "fill": _values(a.reshape(-1)[:1])[0]}
        else:
            enc[name] = {"dtype": a.dtype.name, "shape": list(a.shape), "values": _values(a)}
    # One entry per line: reviewable diffs, deterministic bytes.
    lines = ['{"tensorflow_version": %s,' % json.dumps(tf.__version__), ' "inputs": {']
    items = sorted(enc.items())
    lines += ['  %s: %s%s' % (json.dumps(k), json.dumps(v, sort_keys=True),
                              "," if i + 1 < len(items) else "") for i, (k, v) in enumerate(items)]
    lines += [' },', ' "cases": {']
    items = sorted(cases.items())
    lines += ['  %s: %s%s' % (json.dumps(k), json.dumps(v, sort_keys=True),
                              "," if i + 1 < len(items) else "") for i, (k, v) in enumerate(items)]
    lines += [' }}', '']
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print("%d cases (%d refused by TensorFlow) -> %s" % (
        len(cases), sum(1 for c in cases.values() if "error" in c),
        os.path.relpath(args.out, ROOT)))


if __name__ == "__main__":
    main()
