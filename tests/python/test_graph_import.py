"""tx.import_graph_def: TF semantics, and graphs written by TensorFlow giving the values their
README states (tests/data/tf-graphs)."""

import os

import numpy as np
import pytest

import tensorflux as tx
from tensorflux import saved_model_pb2


def read_graph_def(data_dir, rel):
    gd = tx.GraphDef()
    with open(os.path.join(data_dir, "tf-graphs", rel), "rb") as f:
        gd.ParseFromString(f.read())
    return gd


def read_saved_model_graph(data_dir, rel):
    sm = saved_model_pb2.SavedModel()
    with open(os.path.join(data_dir, "tf-graphs", rel), "rb") as f:
        sm.ParseFromString(f.read())
    return sm.meta_graphs[0].graph_def


def test_serving_matrix_half_plus_two(graph, data_dir):
    gd = read_saved_model_graph(data_dir, "serving_matrix_half_plus_two/saved_model.pb")
    tx.import_graph_def(gd, name="")
    x = graph.get_tensor_by_name("x:0")
    y = graph.get_tensor_by_name("y:0")
    assert x.dtype == tx.float32 and x.shape.as_list() == [None, 3, 3]
    assert y.shape.as_list() == [None, 3, 3]
    feed = np.arange(9, dtype=np.float32).reshape(1, 3, 3)
    with tx.Session() as sess:
        got = sess.run(y, {x: feed})
    np.testing.assert_array_equal(
        got, [[[2, 2.5, 3], [3.5, 4, 4.5], [5, 5.5, 6]]])
    assert got.dtype == np.float32


def test_rust_addition(graph, data_dir):
    gd = read_graph_def(data_dir, "rust_addition/model.pb")
    z, = tx.import_graph_def(gd, return_elements=["z:0"])
    assert z.name == "import/z:0"
    with tx.Session() as sess:
        got = sess.run(z, {"import/x:0": np.array([2], np.int32),
                           "import/y:0": np.array([40], np.int32)})
    np.testing.assert_array_equal(got, [42])
    assert got.dtype == np.int32


def test_rust_multiplication_legacy_scalar_shape_means_unknown(graph, data_dir):
    gd = read_graph_def(data_dir, "rust_multiplication/multiplication.pb")
    assert gd.versions.producer < 22
    a, b, c = tx.import_graph_def(gd, return_elements=["a:0", "b:0", "c:0"], name="m")
    assert a.shape.ndims is None  # `shape {}` at producer 9 means unknown, not scalar
    with tx.Session() as sess:
        got = sess.run(c, {a: [1.0, 2.0, 3.0], b: [4.0, 5.0, 6.0]})
    np.testing.assert_array_equal(got, [4.0, 10.0, 18.0])


def test_input_map_and_return_elements(graph, data_dir):
    gd = read_saved_model_graph(data_dir, "serving_matrix_half_plus_two/saved_model.pb")
    mine = tx.placeholder(tx.float32, [1, 3, 3], name="mine")
    doubled = mine * 2.0
    y, y_op = tx.import_graph_def(gd, input_map={"x:0": doubled}, return_elements=["y:0", "y"])
    assert isinstance(y_op, tx.Operation) and y_op is y.op
    assert y.shape.as_list() == [1, 3, 3]
    with tx.Session() as sess:
        got = sess.run(y, {mine: np.ones((1, 3, 3))})
    np.testing.assert_array_equal(got, np.full((1, 3, 3), 3.0))
    with pytest.raises(ValueError):
        tx.import_graph_def(gd, input_map={"nope:0": doubled})
    with pytest.raises(ValueError):
        tx.import_graph_def(gd, return_elements=["nope:0"])


def test_prefixes_are_unique_and_nested(graph, data_dir):
    gd = read_graph_def(data_dir, "rust_addition/model.pb")
    tx.import_graph_def(gd)
    tx.import_graph_def(gd)
    with graph.name_scope("outer"):
        tx.import_graph_def(gd, name="net")
    names = {op.name for op in graph.get_operations()}
    assert {"import/z", "import_1/z", "outer/net/z"} <= names
    tx.import_graph_def(gd, name="")
    assert "z" in {op.name for op in graph.get_operations()}
    with pytest.raises(ValueError):
        tx.import_graph_def(gd, name="")


def test_round_trip_through_graph_def(graph):
    x = tx.placeholder(tx.float32, [None, 2], name="x")
    w = tx.constant([[1.0], [2.0]], name="w")
    with tx.control_dependencies([w]):
        y = tx.matmul(x, w, name="y") + 0.5
    gd = graph.as_graph_def()
    g2 = tx.Graph()
    with g2.as_default():
        tx.import_graph_def(gd, name="")
        assert [n.name for n in g2.as_graph_def().node] == [n.name for n in gd.node]
        # The matmul reads w as data, so only the constant 0.5 gets the control edge.
        assert g2.get_operation_by_name("y").control_inputs == []
        assert g2.get_operation_by_name("add/y").control_inputs == [g2.get_operation_by_name("w")]
        with tx.Session() as sess:
            got = sess.run(y.name, {"x:0": [[1.0, 1.0]]})
    np.testing.assert_array_equal(got, [[3.5]])


def test_import_errors(graph):
    gd = tx.GraphDef()
    n = gd.node.add(name="a", op="NoSuchOp")
    with pytest.raises(ValueError) as info:
        tx.import_graph_def(gd)
    assert "NoSuchOp" in str(info.value)
    gd = tx.GraphDef()
    gd.node.add(name="a", op="Identity", input=["b"])
    gd.node.add(name="b", op="Identity", input=["a"])
    for nd in gd.node:
        nd.attr["T"].type = tx.float32.as_datatype_enum
    with pytest.raises(ValueError) as info:
        tx.import_graph_def(gd)
    assert "cycle" in str(info.value)
    gd = tx.GraphDef()
    gd.node.add(name="a", op="Identity", input=["missing"])
    with pytest.raises(ValueError):
        tx.import_graph_def(gd)
    gd = tx.GraphDef()
    n = gd.node.add(name="p", op="Placeholder")  # missing dtype attr
    with pytest.raises(ValueError) as info:
        tx.import_graph_def(gd)
    assert "p" in str(info.value)
    del n
