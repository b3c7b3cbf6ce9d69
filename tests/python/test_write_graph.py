"""tx.train.write_graph / tx.io.write_graph: a GraphDef to a binary or text file."""

import os

from google.protobuf import text_format

import tensorflux as tx


def test_write_graph_binary_and_text_round_trip(graph, tmp_path):
    x = tx.placeholder(tx.float32, [None, 2], name="x")
    tx.add(x, 1.0, name="y")
    logdir = tmp_path / "a" / "b"  # created, parents too
    path = tx.train.write_graph(graph, str(logdir), "g.pb", as_text=False)
    assert path == os.path.join(str(logdir), "g.pb")
    with open(path, "rb") as f:
        assert tx.GraphDef.FromString(f.read()) == graph.as_graph_def()
    path = tx.io.write_graph(graph.as_graph_def(), str(logdir), "g.pbtxt")  # as_text default
    with open(path, encoding="utf-8") as f:
        assert text_format.Parse(f.read(), tx.GraphDef()) == graph.as_graph_def()
    assert sorted(os.listdir(logdir)) == ["g.pb", "g.pbtxt"]  # no temporary file left
