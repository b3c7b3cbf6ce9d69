"""Reductions against TensorFlow's recorded answers (tests/data/oracle/reductions_fixes.json,
written by tools/oracle/reductions.py): Sum, Mean, Prod, Max, Min, ArgMax, ArgMin on every
integer dtype (wrapping sums and products, means accumulated wider than the element type,
truncation), All / Any, and empty reductions of integer, float and bool inputs with and without
keep_dims. Integer and bool results must match bit for bit; floats here are only 0, 1, +-inf
and NaN, compared exactly too. TensorFlow is not imported."""

import json
import os

import numpy as np
import pytest

import tensorflux as tx
from conftest import TEST_DATA_DIR

with open(os.path.join(TEST_DATA_DIR, "oracle", "reductions_fixes.json")) as _f:
    ORACLE = json.load(_f)

_FNS = {"Sum": tx.reduce_sum, "Mean": tx.reduce_mean, "Prod": tx.reduce_prod,
        "Max": tx.reduce_max, "Min": tx.reduce_min, "All": tx.reduce_all,
        "Any": tx.reduce_any}
_SPECIAL = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}


def _array(spec):
    dt = np.dtype(spec["dtype"])
    if "fill" in spec:
        return np.full(spec["shape"], spec["fill"], dt)
    vals = [_SPECIAL.get(v, v) if isinstance(v, str) else v for v in spec["values"]]
    return np.array(vals, dtype=dt).reshape(spec["shape"])


def _build(case, x):
    if case["op"] in ("ArgMax", "ArgMin"):
        fn = tx.argmax if case["op"] == "ArgMax" else tx.argmin
        return fn(tx.constant(x), axis=case["axis"],
                  output_type=getattr(tx, case.get("output_type", "int64")))
    return _FNS[case["op"]](tx.constant(x), axis=case["axis"], keepdims=case["keep_dims"])


@pytest.mark.parametrize("case_id", sorted(ORACLE["cases"]))
def test_reduction_matches_tensorflow(graph, case_id):
    case = ORACLE["cases"][case_id]
    x = _array(ORACLE["inputs"][case["input"]])
    y = _build(case, x)
    with tx.Session(graph=tx.get_default_graph()) as sess:
        if "error" in case:
            with pytest.raises(getattr(tx.errors, case["error"])):
                sess.run(y)
            return
        got = sess.run(y)
    want = _array(case)
    assert y.shape.as_list() == list(want.shape)  # static shape as TF's
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(got, want)  # NaN == NaN here
    else:
        assert got.tolist() == want.tolist(), (x, got, want)
