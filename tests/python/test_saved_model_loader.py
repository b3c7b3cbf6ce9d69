"""tx.saved_model.loader.load (TF 1.x): tag sets, import scope, and variables restored from a
SavedModel's variables/ checkpoint through its saver_def (SaveV2/RestoreV2 tensor bundles)."""

import os

import numpy as np
import pytest

import tensorflux as tx
from tensorflux.saved_model_pb2 import SavedModel
from conftest import TEST_DATA_DIR

TF_GRAPHS = os.path.join(TEST_DATA_DIR, "tf-graphs")
MATRIX = os.path.join(TF_GRAPHS, "serving_matrix_half_plus_two")


def test_loads_a_model_without_variables():
    with tx.Session(graph=tx.Graph()) as sess:
        meta = tx.saved_model.loader.load(sess, [tx.saved_model.tag_constants.SERVING], MATRIX)
        sig = meta.signature_def[tx.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        x = np.arange(9, dtype=np.float32).reshape(1, 3, 3)
        y = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: x})
        np.testing.assert_array_equal(y, 0.5 * x + 2)


def test_import_scope_and_tag_errors(tmp_path):
    with tx.Session(graph=tx.Graph()) as sess:
        tx.saved_model.loader.load(sess, "serve", MATRIX, import_scope="m")
        assert sess.run("m/y:0", {"m/x:0": np.ones((1, 3, 3), np.float32)})[0, 0, 0] == 2.5
    with tx.Session(graph=tx.Graph()) as sess:
        with pytest.raises(RuntimeError, match="could not be found"):
            tx.saved_model.loader.load(sess, ["serve", "gpu"], MATRIX)
        with pytest.raises(IOError):
            tx.saved_model.loader.load(sess, ["serve"], str(tmp_path))
    assert tx.saved_model.loader.maybe_saved_model_directory(MATRIX)
    assert not tx.saved_model.loader.maybe_saved_model_directory(str(tmp_path))


def test_serving_half_plus_two_restores_its_variables():
    # TF Serving's half_plus_two (TF 1.14): reference variables a=0.5, b=2, c=3 live in its
    # variables/ tensor bundle; load() restores them through save/restore_all, no `init` run.
    export_dir = os.path.join(TF_GRAPHS, "serving_half_plus_two_cpu")
    x = np.array([[1], [2], [5]], np.float32)
    with tx.Session(graph=tx.Graph()) as sess:
        meta = tx.saved_model.loader.load(sess, ["serve"], export_dir)
        assert meta.saver_def.restore_op_name == "save/restore_all"
        y, y2 = sess.run(["y:0", "y2:0"], {"x:0": x})
        np.testing.assert_array_equal(y, [[2.5], [3.0], [4.5]])
        np.testing.assert_array_equal(y2, [[3.5], [4.0], [5.5]])
    # Without the restore the variables are uninitialized: the values above came from the file.
    with tx.Session(graph=tx.Graph()) as sess:
        tx.import_graph_def(meta.graph_def, name="")
        with pytest.raises(tx.errors.FailedPreconditionError):
            sess.run("y:0", {"x:0": x})


def test_clear_devices():
    # half_plus_two records "/device:CPU:0" on its save/restore ops; clear_devices drops it
    # (TF passes the keyword on to import_meta_graph) and the model still restores and runs.
    export_dir = os.path.join(TF_GRAPHS, "serving_half_plus_two_cpu")
    with tx.Session(graph=tx.Graph()) as sess:
        tx.saved_model.loader.load(sess, ["serve"], export_dir)
        assert "/device:CPU:0" in {op.device for op in sess.graph.get_operations()}
    with tx.Session(graph=tx.Graph()) as sess:
        tx.saved_model.loader.load(sess, ["serve"], export_dir, clear_devices=True)
        assert {op.device for op in sess.graph.get_operations()} == {""}
        y = sess.run("y:0", {"x:0": np.array([[1]], np.float32)})
        np.testing.assert_array_equal(y, [[2.5]])


def _export_resource_variable_model(export_dir, values):
    """A SavedModel written the way TF 1.x does, built here: resource variables, SaveV2 /
    RestoreV2 save and restore subgraphs, a saver_def, and variables/ saved by running SaveV2."""
    graph = tx.Graph()
    with graph.as_default():
        w = tx.Variable(np.zeros((2, 2), np.float32), name="w")
        b = tx.Variable(np.zeros(2, np.float64), name="b")
        x = tx.placeholder(tx.float32, [None, 2], name="x")
        tx.add(tx.matmul(x, w.value()), tx.cast(b.value(), tx.float32), name="y")
        with tx.name_scope("save"):
            filename = tx.placeholder_with_default("model", [], name="Const")
            names, specs = tx.constant(["b", "w"]), tx.constant(["", ""])
            save = tx.raw_ops.SaveV2(prefix=filename, tensor_names=names, shape_and_slices=specs,
                                     tensors=[b.value(), w.value()], name="SaveV2")
            restored = tx.raw_ops.RestoreV2(prefix=filename, tensor_names=names,
                                            shape_and_slices=specs, dtypes=[tx.float64, tx.float32],
                                            name="RestoreV2")
            tx.group(b.assign(restored[0], read_value=False),
                     w.assign(restored[1], read_value=False), name="restore_all")
    model = SavedModel(saved_model_schema_version=1)
    meta = model.meta_graphs.add()
    meta.meta_info_def.tags.append("serve")
    meta.graph_def.CopyFrom(graph.as_graph_def())
    meta.saver_def.filename_tensor_name = "save/Const:0"
    meta.saver_def.restore_op_name = "save/restore_all"
    os.makedirs(os.path.join(export_dir, "variables"))
    with open(os.path.join(export_dir, "saved_model.pb"), "wb") as f:
        f.write(model.SerializeToString())
    with tx.Session(graph=graph) as sess:
        sess.run([w.assign(values["w"]), b.assign(values["b"])])
        sess.run(save, {filename: os.path.join(export_dir, "variables", "variables")})


def test_resource_variable_model_round_trip(tmp_path):
    export_dir = str(tmp_path / "model")
    values = {"w": np.array([[1, 2], [3, 4]], np.float32), "b": np.array([0.25, -1.0])}
    _export_resource_variable_model(export_dir, values)
    x = np.array([[1, 1], [2, -1]], np.float32)
    with tx.Session(graph=tx.Graph()) as sess:
        tx.saved_model.loader.load(sess, ["serve"], export_dir)
        np.testing.assert_array_equal(sess.run("y:0", {"x:0": x}),
                                      x @ values["w"] + values["b"].astype(np.float32))
        assert sess.run("b/Read/ReadVariableOp:0").dtype == np.float64
    # A corrupt checkpoint is DataLossError from the restore.
    data = os.path.join(export_dir, "variables", "variables.data-00000-of-00001")
    raw = open(data, "rb").read()
    with open(data, "wb") as f:
        f.write(raw[:-1] + bytes([raw[-1] ^ 1]))
    with tx.Session(graph=tx.Graph()) as sess:
        with pytest.raises(tx.errors.DataLossError, match="checksum"):
            tx.saved_model.loader.load(sess, ["serve"], export_dir)


# A signature whose input alias x is placeholder b, beside a placeholder named x (read by w):
# the graph has tensors named like aliases and aliases naming other tensors.
_ALIAS_MODEL = """
meta_graphs {
  meta_info_def { tags: "serve" }
  graph_def {
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "out" op: "Identity" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "w" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  }
  signature_def {
    key: "serving_default"
    value {
      inputs { key: "x" value { name: "b:0" dtype: DT_FLOAT } }
      outputs { key: "out" value { name: "out:0" dtype: DT_FLOAT } }
    }
  }
}
"""


def test_predictor_calls_a_signature_by_its_aliases():
    predict = tx.contrib.predictor.from_saved_model(MATRIX)
    x = np.arange(9, dtype=np.float32).reshape(1, 3, 3)
    out = predict({"x": x})
    assert sorted(out) == ["y"]
    np.testing.assert_array_equal(out["y"], 0.5 * x + 2)
    assert sorted(predict.feed_tensors) == ["x"] and predict.fetch_tensors["y"].name == "y:0"


def test_predictor_refuses_names_that_are_not_aliases(tmp_path):
    # The graph tensor behind alias x ("x:0") is not an alias: InvalidArgumentError naming every
    # unknown name and listing the inputs (TF's saved_model_cli refuses "x:0" the same way).
    predict = tx.contrib.predictor.from_saved_model(MATRIX)
    x = np.ones((1, 3, 3), np.float32)
    with pytest.raises(tx.errors.InvalidArgumentError,
                       match=r"signature 'serving_default' has no input named 'x:0', 'bogus' "
                             r"\(its inputs: x\)"):
        predict({"x": x, "x:0": x, "bogus": x})
    (tmp_path / "saved_model.pbtxt").write_text(_ALIAS_MODEL)
    predict = tx.contrib.predictor.from_saved_model(str(tmp_path))
    assert predict({"x": np.float32(3)})["out"] == 3  # alias x feeds placeholder b
    # b is a graph tensor (the one behind x) but not an alias: never fed behind the user's back.
    with pytest.raises(tx.errors.InvalidArgumentError,
                       match=r"no input named 'b' \(its inputs: x\)"):
        predict({"b": np.float32(3)})
    with pytest.raises(ValueError, match="no signature 'nope'"):
        tx.contrib.predictor.from_saved_model(str(tmp_path), signature_def_key="nope")
    # Explicit input_names / output_names (TF's other form) are aliases too.
    predict = tx.contrib.predictor.from_saved_model(
        str(tmp_path), input_names={"in": "x:0"}, output_names={"o": "w:0"})
    assert predict({"in": np.float32(7)})["o"] == 7
    with pytest.raises(tx.errors.InvalidArgumentError, match="no input named 'x'"):
        predict({"x": np.float32(7)})
