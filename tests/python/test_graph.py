"""Graph construction: names, scopes, control dependencies, devices, lookup, GraphDef export,
attrs and static shapes."""

import numpy as np
import pytest

import tensorflux as tx


def test_default_graph_and_as_default():
    g = tx.Graph()
    assert tx.get_default_graph() is not g
    with g.as_default():
        assert tx.get_default_graph() is g
        c = tx.constant(1.0)
    assert c.graph is g
    assert tx.get_default_graph() is not g


def test_reset_default_graph():
    tx.reset_default_graph()
    a = tx.get_default_graph()
    tx.constant(1)
    tx.reset_default_graph()
    assert tx.get_default_graph() is not a
    assert tx.get_default_graph().get_operations() == []
    with tx.Graph().as_default():
        with pytest.raises(AssertionError):
            tx.reset_default_graph()


def test_unique_names_like_tf(graph):
    a = tx.constant(1.0)
    b = tx.constant(2.0)
    assert (a.op.name, b.op.name) == ("Const", "Const_1")
    s1 = a + b
    s2 = a + b
    assert (s1.op.name, s2.op.name) == ("add", "add_1")
    assert s1.op.type == "AddV2"
    assert s1.name == "add:0"
    p = tx.placeholder(tx.float32, name="x")
    q = tx.placeholder(tx.float32, name="x")
    assert (p.op.name, q.op.name) == ("x", "x_1")
    m = tx.multiply(a, b)
    assert m.op.name == "Mul" and m.op.type == "Mul"
    assert tx.matmul([[1.0]], [[2.0]]).op.name == "MatMul"


def test_name_scopes(graph):
    with graph.name_scope("layer") as scope:
        assert scope == "layer/"
        c = tx.constant(1.0, name="w")
        with tx.name_scope("inner") as inner:
            assert inner == "layer/inner/"
            d = tx.identity(c)
        with graph.name_scope(None):
            top = tx.constant(0)
    with graph.name_scope("layer") as scope2:
        assert scope2 == "layer_1/"
    with graph.name_scope("layer/") as again:
        e = tx.constant(2.0, name="w")
    assert again == "layer/"
    assert c.op.name == "layer/w"
    assert d.op.name == "layer/inner/Identity"
    assert top.op.name == "Const"
    assert e.op.name == "layer/w_1"


def test_scope_names_default_names(graph):
    x = tx.placeholder(tx.float32, [2])
    y = tx.add(x, 1.0, name="plus")
    assert y.op.name == "plus"
    const_input = y.op.inputs[1]
    assert const_input.op.name == "plus/y"
    assert const_input.op.type == "Const"


def test_control_dependencies(graph):
    a = tx.constant(1.0, name="a")
    b = tx.constant(2.0, name="b")
    with graph.control_dependencies([a]):
        c = tx.identity(b, name="c")
        with tx.control_dependencies([b.op]):
            d = tx.constant(3.0, name="d")
        with tx.control_dependencies(None):
            e = tx.constant(4.0, name="e")
    assert c.op.control_inputs == [a.op]
    assert set(op.name for op in d.op.control_inputs) == {"a", "b"}
    assert e.op.control_inputs == []
    assert list(c.op.node_def.input) == ["b", "^a"]


def test_device_scopes(graph):
    with graph.device("/device:CPU:0"):
        a = tx.constant(1.0)
        with tx.device(None):
            b = tx.constant(1.0)
        with tx.device(lambda op: "/cpu:1"):
            c = tx.constant(1.0)
    assert a.op.device == "/device:CPU:0"
    assert a.op.node_def.device == "/device:CPU:0"
    assert b.op.device == ""
    assert c.op.device == "/device:CPU:1"  # canonical, as TF 1.x


def test_lookup_by_name(graph):
    x = tx.placeholder(tx.float32, [None, 3], name="x")
    y = tx.identity(x, name="y")
    assert graph.get_operation_by_name("y") is y.op
    assert graph.get_tensor_by_name("y:0") is y
    assert graph.as_graph_element("x") is x.op
    with pytest.raises(ValueError):
        graph.get_tensor_by_name("y")
    with pytest.raises(KeyError):
        graph.get_tensor_by_name("nope:0")
    with pytest.raises(KeyError):
        graph.get_tensor_by_name("y:1")
    with pytest.raises(KeyError):
        graph.get_operation_by_name("nope")
    assert [op.name for op in graph.get_operations()] == ["x", "y"]
    assert x.consumers() == [y.op]


def test_as_graph_def(graph):
    x = tx.placeholder(tx.float32, [2, 2], name="x")
    y = tx.matmul(x, x, transpose_b=True, name="mm")
    gd = graph.as_graph_def()
    assert isinstance(gd, tx.GraphDef)
    assert [n.name for n in gd.node] == ["x", "mm"]
    mm = gd.node[1]
    assert mm.op == "MatMul"
    assert list(mm.input) == ["x", "x"]
    # Defaults are filled in, explicit attrs kept.
    assert mm.attr["transpose_a"].b is False and mm.attr["transpose_b"].b is True
    assert mm.attr["T"].type == tx.float32.as_datatype_enum
    assert gd.versions.producer == tx.GRAPH_DEF_VERSION
    assert y.op.get_attr("transpose_b") is True
    assert y.op.get_attr("T") is tx.float32
    shape = x.op.get_attr("shape")
    assert [d.size for d in shape.dim] == [2, 2]
    with pytest.raises(ValueError):
        y.op.get_attr("nope")
    gd2 = graph.as_graph_def(add_shapes=True)
    assert [d.size for d in gd2.node[1].attr["_output_shapes"].list.shape[0].dim] == [2, 2]


def test_finalize(graph):
    tx.constant(1)
    graph.finalize()
    assert graph.finalized
    with pytest.raises(RuntimeError):
        tx.constant(2)


def test_static_shapes_from_shape_inference(graph):
    x = tx.placeholder(tx.float32, [None, 3])
    w = tx.constant(np.zeros((3, 5), np.float32))
    assert x.shape.as_list() == [None, 3]
    assert w.shape.as_list() == [3, 5]
    y = tx.matmul(x, w)
    assert y.shape.as_list() == [None, 5]
    assert tx.matmul(w, x, transpose_a=True, transpose_b=True).shape.as_list() == [5, None]
    b = tx.placeholder(tx.float32, [7, 1, 5])
    assert (y + b).shape.as_list() == [7, None, 5]
    r = tx.reshape(w, [-1])
    assert r.shape.as_list() == [15]
    r2 = tx.reshape(x, [-1, 1, 3])
    assert r2.get_shape().as_list() == [None, 1, 3]
    assert tx.shape(x).shape.as_list() == [2]
    assert tx.size(x).shape.as_list() == []
    assert tx.fill([2, 4], 1.5).shape.as_list() == [2, 4]
    assert tx.zeros([3, 2]).shape.as_list() == [3, 2]
    assert tx.placeholder(tx.float32).shape.ndims is None
    # Shape of a statically known tensor feeds Reshape's shape function.
    assert tx.reshape(tx.zeros([15]), tx.shape(w)).shape.as_list() == [3, 5]


def test_construction_errors(graph):
    a = tx.placeholder(tx.float32, [2, 3], name="a")
    b = tx.placeholder(tx.float32, [4, 5], name="b")
    with pytest.raises(ValueError) as info:
        tx.matmul(a, b, name="bad_mm")
    assert "bad_mm" in str(info.value)
    assert isinstance(info.value, tx.errors.InvalidArgumentError)
    with pytest.raises(ValueError):
        tx.add(tx.placeholder(tx.float32, [2]), tx.placeholder(tx.float32, [3]))
    with pytest.raises(ValueError):
        tx.reshape(tx.zeros([6]), [4, -1])
    i = tx.placeholder(tx.int32, [2])
    with pytest.raises(TypeError):
        tx.add(a, i)
    with pytest.raises(TypeError):
        tx.constant(1.5, dtype=tx.int32)
    with pytest.raises(TypeError):
        tx.sqrt(i)  # int32 is not an allowed type of Sqrt
    with pytest.raises(TypeError):
        tx.raw_ops.Identity(input=a, bogus=1)
    with pytest.raises(ValueError):
        tx.constant(1, name="bad:name")


def test_tensor_misuse(graph):
    t = tx.constant([1, 2])
    with pytest.raises(TypeError):
        bool(t)
    with pytest.raises(TypeError):
        iter(t)
    with pytest.raises(ValueError):
        tx.Graph().as_graph_element(t)
    other = tx.Graph()
    with other.as_default():
        u = tx.constant([1, 2])
    with pytest.raises(ValueError):
        tx.add(t, u)


def test_collections(graph):
    c = tx.constant(1)
    tx.add_to_collection("things", c)
    assert tx.get_collection("things") == [c]
    assert graph.get_collection("missing") == []


def test_set_shape(graph):
    x = tx.placeholder(tx.float32)
    x.set_shape([None, 4])
    assert x.shape.as_list() == [None, 4]
    with pytest.raises(ValueError):
        x.set_shape([3])
