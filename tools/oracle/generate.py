"""Regenerates the op conformance reference data with TensorFlow (the oracle).

Run by scripts/oracle inside the oracle's virtualenv (TensorFlow 2.15, CPU):
  python tools/oracle/generate.py [--out tests/data/oracle/conformance] [--family NAME ...]

For every family in tests/conformance/cases it runs each case in tf.compat.v1 graph mode with
v2 behaviour disabled, one intra-op and one inter-op thread and TensorFlow's own (Eigen) CPU
kernels (TF_ENABLE_ONEDNN_OPTS=0), so reductions have one order and the bytes are the same on
every run, and writes <family>.npz (inputs, outputs, upstream gradients, gradients) and
<family>.json (per case: status, static shapes, output dtypes, inputs with gradients, or the
error TensorFlow raised). Families whose data did not change keep their files untouched.
"""

import argparse
import os
import sys

import numpy as np

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import tensorflow.compat.v1 as tf  # noqa: E402
from tensorflow.python.framework import op_def_library  # noqa: E402
from tensorflow.python.framework import op_def_registry  # noqa: E402

from conformance import cases as cases_pkg  # noqa: E402
from conformance import runner, store  # noqa: E402

tf.disable_v2_behavior()
tf.logging.set_verbosity(tf.logging.ERROR)


def _attr_value(v):
    """A python value for an AttrValue default (the kinds OpDefs use as defaults)."""
    which = v.WhichOneof("value")
    if which == "list":
        lv = v.list
        for field in ("s", "i", "f", "b", "type", "shape"):
            if getattr(lv, field):
                return list(getattr(lv, field))
        return []
    if which == "s":
        return v.s
    if which == "shape":
        return tf.TensorShape(v.shape)
    return getattr(v, which)


def _apply(op, **kw):
    # TF's Python wrappers pass every attr; _apply_op_helper does not fill OpDef defaults.
    for a in op_def_registry.get(op).attr:
        if a.name not in kw and a.type not in ("type", "list(type)") and a.HasField(
                "default_value"):
            kw[a.name] = _attr_value(a.default_value)
    _, _, op_obj, _ = op_def_library._apply_op_helper(op, name="op", **kw)  # noqa: SLF001
    return op_obj


def tf_system():
    config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    return runner.System("tensorflow", tf, _apply, op_def_registry.get, tf.errors.OpError,
                         session_config=config)


def generate_family(system, family, cases):
    meta, arrays = {}, {}
    for case in cases:
        inputs = case.arrays() if case.program is None else {}
        m, values = runner.run_case(system, case, inputs)
        for i in case.unspecified:  # uninitialized memory in TF: not data (table.Case)
            key = "out/%d" % i
            if key in values:
                values[key] = np.zeros_like(values[key])
        if case.program is None:
            for k, v in runner.flatten_inputs(inputs).items():
                arrays["%s/%s" % (case.id, k)] = v
        for k, v in values.items():
            arrays["%s/%s" % (case.id, k)] = v
        meta[case.id] = m
    return {"tensorflow": tf.__version__, "family": family, "cases": meta}, arrays


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "oracle", "conformance"))
    ap.add_argument("--family", action="append")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    system = tf_system()
    all_cases = cases_pkg.cases_by_family()
    for family, cases in all_cases.items():
        if args.family and family not in args.family:
            continue
        meta, arrays = generate_family(system, family, cases)
        store.write_json(os.path.join(args.out, family + ".json"), meta)
        store.write_npz(os.path.join(args.out, family + ".npz"), arrays)
        errors = sum(1 for c in meta["cases"].values() if c["status"] != "ok")
        print("%-12s %4d cases (%d refused by TensorFlow)" % (family, len(cases), errors))


if __name__ == "__main__":
    main()
