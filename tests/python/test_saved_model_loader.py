"""tx.saved_model.loader.load (TF 1.x): tag sets, import scope, and variables restored from a
SavedModel's variables/ checkpoint through its saver_def (SaveV2/RestoreV2 tensor bundles)."""

import os

import numpy as np
import pytest

import tensorflux as tx
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
