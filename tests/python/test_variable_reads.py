"""Resource-variable reads under control dependencies, against TensorFlow (issue 19).

The cases are tests/python/oracle_cases/variable_reads.py; TensorFlow's values are
tests/data/oracle/variable_reads.json (tools/oracle/variable_reads.py). Every implicit read of
a resource variable (an operator, convert_to_tensor, tx.matmul(x, v), value()) made inside
`tx.control_dependencies([...])` is a new ReadVariableOp under those dependencies, so it sees
the update they order before it."""

import json
import os

import numpy as np
import pytest

import tensorflux as tx
from conftest import TEST_DATA_DIR
from oracle_cases import variable_reads

with open(os.path.join(TEST_DATA_DIR, "oracle", "variable_reads.json")) as _f:
    _ORACLE = json.load(_f)["cases"]


@pytest.fixture(scope="module")
def ours():
    return variable_reads.run(tx)


def test_same_cases_as_the_oracle(ours):
    assert sorted(ours) == sorted(_ORACLE)


@pytest.mark.parametrize("case", sorted(_ORACLE))
def test_case_matches_tensorflow(ours, case):
    want = _ORACLE[case]
    got = ours[case]
    if want is None:
        assert got is None, "%s: TF has no gradient here, TensorFlux gives %r" % (case, got)
    else:
        assert got is not None, case
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-6, err_msg=case)


def test_implicit_read_is_a_new_op_under_the_dependencies(graph):
    v = tx.Variable(2.0, name="v")
    assign = v.assign(3.0, read_value=False)
    with tx.control_dependencies([assign]):
        y = v + 0.0
    read = y.op.inputs[0].op
    assert read.type == "ReadVariableOp"
    assert read is not v.value().op and read is not v._as_graph_element().op
    assert assign in read.control_inputs
    # Two uses are two reads (as TF); sess.run(v) fetches the read made with the variable.
    assert v.value().op is not v.value().op
    assert v._as_graph_element().op.name == "v/Read/ReadVariableOp"


def test_implicit_read_ignores_colocation_and_stays_on_the_handles_device(graph):
    with tx.device("/cpu:0"):
        v = tx.Variable(1.0, name="v")
    c = tx.constant(1.0, name="c")
    with tx.colocate_with(c.op), tx.device("/cpu:1"):
        y = v * 2.0
    read = y.op.inputs[0].op
    assert read.type == "ReadVariableOp"
    assert read.colocation_groups() == [b"loc:@" + read.name.encode()]
    assert read.device == v.handle.device
