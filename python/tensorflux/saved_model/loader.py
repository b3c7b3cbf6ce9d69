"""tx.saved_model.loader.load: TF 1.x's SavedModel loader.

    with tx.Session(graph=tx.Graph()) as sess:
        meta = tx.saved_model.loader.load(sess, [tx.saved_model.tag_constants.SERVING], export_dir)
        sig = meta.signature_def["serving_default"]
        y = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: x})

load() imports the MetaGraphDef whose tag set equals `tags` into the session's graph and restores
its variables as TF does: it runs the saver_def's restore op with the filename tensor fed
`<export_dir>/variables/variables` (a TensorFlow tensor-bundle checkpoint, read by RestoreV2).
A SavedModel without variables/ (or without a saver_def) is imported only. Not done: the
legacy_init_op / main_op collections and assets (collection_def is not parsed).
"""

import os

from google.protobuf import message
from google.protobuf import text_format

from tensorflux.framework import errors
from tensorflux.framework import importer
from tensorflux.saved_model_pb2 import SavedModel

_PB = "saved_model.pb"
_PBTXT = "saved_model.pbtxt"


def maybe_saved_model_directory(export_dir):
    """True when `export_dir` holds a saved_model.pb or saved_model.pbtxt."""
    return (os.path.isfile(os.path.join(export_dir, _PB)) or
            os.path.isfile(os.path.join(export_dir, _PBTXT)))


def _read_saved_model(export_dir):
    pb, pbtxt = os.path.join(export_dir, _PB), os.path.join(export_dir, _PBTXT)
    model = SavedModel()
    try:
        if os.path.isfile(pb):
            with open(pb, "rb") as f:
                model.ParseFromString(f.read())
        elif os.path.isfile(pbtxt):
            with open(pbtxt) as f:
                text_format.Parse(f.read(), model)
        else:
            raise IOError("SavedModel file does not exist at: %s/{%s|%s}" % (export_dir, _PBTXT,
                                                                               _PB))
    except (message.DecodeError, text_format.ParseError) as e:
        raise errors.DataLossError(None, None, "cannot parse the SavedModel in %s: %s"
                                   % (export_dir, e)) from e
    return model


def _scoped(name, import_scope):
    """A graph element name ("save/Const:0", "^x") under import_scope."""
    return "%s/%s" % (import_scope, name) if import_scope else name


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads the SavedModel at `export_dir` into `sess` and returns its MetaGraphDef.

    Args:
      sess: the session to restore the variables in; the graph is imported into sess.graph.
      tags: the MetaGraphDef's tag set (e.g. ["serve"]): its tags must equal this set.
      export_dir: the SavedModel directory.
      import_scope: an optional name scope for the imported nodes.
      **saver_kwargs: as TF (they go to import_meta_graph there): clear_devices=True drops
        the device requests recorded in the graph; any other keyword (TF passes them on to
        the tf.train.Saver it builds) raises NotImplementedError naming it.

    Raises:
      RuntimeError: no MetaGraphDef has exactly these tags (TF's error).
      IOError: no saved_model.pb(txt) in export_dir.
      tx.errors.*: from importing the graph or running the restore (NotFoundError,
        DataLossError, InvalidArgumentError).
    """
    clear_devices = bool(saver_kwargs.pop("clear_devices", False))
    if saver_kwargs:
        raise NotImplementedError("tx.saved_model.loader.load: %s not supported"
                                  % ", ".join("%s=%r" % kv for kv in sorted(saver_kwargs.items())))
    if isinstance(tags, str):
        tags = [tags]
    model = _read_saved_model(export_dir)
    wanted = set(tags)
    meta_graph = None
    for mg in model.meta_graphs:
        if set(mg.meta_info_def.tags) == wanted:
            meta_graph = mg
            break
    if meta_graph is None:
        available = [sorted(mg.meta_info_def.tags) for mg in model.meta_graphs]
        raise RuntimeError(
            "MetaGraphDef associated with tags %s could not be found in SavedModel. To inspect "
            "available tag-sets in the SavedModel, please use the SavedModel CLI: "
            "`saved_model_cli`. Available tag sets: %s" % (sorted(wanted), available))

    with sess.graph.as_default():
        importer.import_graph_def(meta_graph.graph_def, name=import_scope or "",
                                  clear_devices=clear_devices)
    saver_def = meta_graph.saver_def
    variables_prefix = os.path.join(export_dir, "variables", "variables")
    if saver_def.restore_op_name and os.path.isfile(variables_prefix + ".index"):
        sess.run(_scoped(saver_def.restore_op_name, import_scope),
                 {_scoped(saver_def.filename_tensor_name, import_scope): variables_prefix})
    return meta_graph
