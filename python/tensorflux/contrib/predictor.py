"""tx.contrib.predictor: TF 1.x's tf.contrib.predictor, a SavedModel signature as a callable.

    predict = tx.contrib.predictor.from_saved_model(export_dir)   # signature "serving_default"
    outputs = predict({"x": x})                                    # {"y": array, ...}

The SavedModel is loaded into a graph and session of its own (tx.saved_model.loader.load:
variables restored). A call's keys are the signature's input aliases and nothing else: a key
that is not one (a graph tensor name such as "x:0", a typo) is InvalidArgumentError naming every
such key and listing the signature's inputs, and is never fed to a graph tensor of that name.
TF 1.x's predictor raised a bare KeyError there (docs/TF_DIFFERENCES.md). The result maps every
output alias to its value.
"""

from tensorflux.client import session as session_lib
from tensorflux.framework import errors
from tensorflux.framework import graph as graph_lib
from tensorflux.saved_model import loader
from tensorflux.saved_model import signature_constants
from tensorflux.saved_model import tag_constants


def _unknown_names_error(signature_name, kind, unknown, aliases):
    return errors.InvalidArgumentError(
        None, None,
        "signature '%s' has no %s named %s (its %ss: %s); a signature call takes only these "
        "aliases, not graph tensor names" % (
            signature_name, kind, ", ".join("'%s'" % k for k in unknown), kind,
            ", ".join(sorted(aliases)) or "none"))


class SavedModelPredictor:
    """Runs one signature of a SavedModel: predictor(input_dict) -> output dict."""

    def __init__(self, export_dir, signature_def_key=None, signature_def=None,
                 input_names=None, output_names=None, tags=None, graph=None, config=None):
        if (input_names is None) != (output_names is None):
            raise ValueError("input_names and output_names must both be given, or neither")
        if signature_def_key is not None and signature_def is not None:
            raise ValueError("give signature_def_key or signature_def, not both")
        if tags is None:
            tags = [tag_constants.SERVING]
        self._graph = graph if graph is not None else graph_lib.Graph()
        with self._graph.as_default():
            self._session = session_lib.Session(config=config)
            meta_graph = loader.load(self._session, tags, export_dir)
        if input_names is None:
            if signature_def is None:
                key = signature_def_key or signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
                if key not in meta_graph.signature_def:
                    raise ValueError("SavedModel %s has no signature '%s' (signatures: %s)" % (
                        export_dir, key, ", ".join(sorted(meta_graph.signature_def)) or "none"))
                signature_def = meta_graph.signature_def[key]
                self._signature_name = key
            else:
                self._signature_name = "<signature_def>"
            input_names = {k: v.name for k, v in signature_def.inputs.items()}
            output_names = {k: v.name for k, v in signature_def.outputs.items()}
        else:
            self._signature_name = "<input_names>"
        self._feed_tensors = {k: self._graph.get_tensor_by_name(v)
                              for k, v in input_names.items()}
        self._fetch_tensors = {k: self._graph.get_tensor_by_name(v)
                               for k, v in output_names.items()}

    @property
    def graph(self):
        return self._graph

    @property
    def session(self):
        return self._session

    @property
    def feed_tensors(self):
        return self._feed_tensors

    @property
    def fetch_tensors(self):
        return self._fetch_tensors

    def __call__(self, input_dict):
        unknown = [k for k in input_dict if k not in self._feed_tensors]
        if unknown:
            raise _unknown_names_error(self._signature_name, "input", unknown,
                                       self._feed_tensors)
        feed = {self._feed_tensors[k]: v for k, v in input_dict.items()}
        return self._session.run(self._fetch_tensors, feed_dict=feed)

    def __repr__(self):
        return "SavedModelPredictor(feed_tensors=%r, fetch_tensors=%r)" % (
            sorted(self._feed_tensors), sorted(self._fetch_tensors))


def from_saved_model(export_dir, signature_def_key=None, signature_def=None, input_names=None,
                     output_names=None, tags=None, graph=None, config=None):
    """A SavedModelPredictor for `export_dir`: signature `signature_def_key` (default
    "serving_default"), or the SignatureDef `signature_def`, or explicit alias -> tensor name
    dicts input_names / output_names; the MetaGraphDef tagged `tags` (default ["serve"])."""
    return SavedModelPredictor(export_dir, signature_def_key=signature_def_key,
                               signature_def=signature_def, input_names=input_names,
                               output_names=output_names, tags=tags, graph=graph, config=config)
