"""Dumps TensorFlow's Python signatures for the tf.compat.v1 modules TensorFlux mirrors.

Run with the oracle virtualenv (TensorFlow 2.15 CPU):

    ~/.cache/tensorflux/oracle-venv/bin/python tools/oracle/api_signatures.py \
        [--out tests/data/oracle/api_signatures.json]

Writes one JSON object, keys sorted, two runs giving the same bytes:

    {"tensorflow_version": "2.15.1",
     "modules": ["tf", "tf.nn", ...],            # the modules walked
     "signatures": {"tf.train.Saver": [[name, kind, default], ...],
                    "tf.train.Saver.save": [...], "tf.nn.relu": [...], ...}}

For every public (no leading "_") callable of each module: a function gives its parameters; a
class gives its constructor's parameters under the class's name and each public method's under
"<class>.<method>" (without self/cls). kind is inspect's parameter kind name
(POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, VAR_POSITIONAL, KEYWORD_ONLY, VAR_KEYWORD). default is
null when the parameter has none, the repr() of the default when it is a literal (None, bool,
int, float, str, or a list/tuple of those), "<dtype:NAME>" for a DType, and "<non-literal>"
otherwise. Callables whose signature inspect cannot read are left out.

tests/python/test_api_signatures.py reads the file (never TensorFlow itself) and checks
TensorFlux's public callables against it.
"""

import argparse
import inspect
import json
import os
import sys

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Modules relative to tf.compat.v1 ("" is tf.compat.v1 itself); TensorFlux's counterparts are
# the same paths under `tensorflux`. raw_ops is left out: its functions are generated from the
# op registry on both sides (keyword-only attrs, validated by the op's OpDef).
MODULES = [
    "", "data", "data.experimental", "debugging", "dtypes", "errors", "graph_util", "image",
    "initializers", "io", "keras", "keras.initializers", "keras.regularizers", "layers",
    "linalg", "losses", "math", "nn", "random", "saved_model", "saved_model.loader",
    "saved_model.signature_constants", "saved_model.tag_constants", "summary", "test", "train",
]


def _literal(value):
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_literal(v) for v in value)
    return False


def _default(param, tf):
    if param.default is inspect.Parameter.empty:
        return None
    value = param.default
    if isinstance(value, tf.DType):
        return "<dtype:%s>" % value.name
    if _literal(value) and type(value).__module__ == "builtins":
        return repr(value)
    return "<non-literal>"


def _params(obj, tf, drop_first):
    # The callable's own signature: TF's decorators give theirs the wrapped function's, and a
    # V1 class whose __init__ is functools.wraps'ed from its V2 class's (CsvDatasetV1) keeps the
    # parameters it really takes. A plain (*args, **kwds) wrapper (contextlib.contextmanager)
    # stands for the function it wraps.
    try:
        sig = inspect.signature(obj, follow_wrapped=False)
        if [p.kind for p in sig.parameters.values()] == [inspect.Parameter.VAR_POSITIONAL,
                                                         inspect.Parameter.VAR_KEYWORD]:
            sig = inspect.signature(obj, follow_wrapped=True)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if drop_first and params and params[0].kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
        params = params[1:]
    return [[p.name, p.kind.name, _default(p, tf)] for p in params]


def _class_entries(key, cls, tf, out):
    init = None
    for klass in cls.__mro__:
        if "__init__" in vars(klass):
            init = vars(klass)["__init__"]
            break
    if init is not None and init is not object.__init__:
        params = _params(init, tf, drop_first=True)
        if params is not None:
            out[key] = params
    for attr in sorted(dir(cls)):
        if attr.startswith("_"):
            continue
        raw = inspect.getattr_static(cls, attr, None)
        if isinstance(raw, (property, type)) or raw is None:
            continue
        if isinstance(raw, staticmethod):
            params = _params(raw.__func__, tf, drop_first=False)
        elif isinstance(raw, classmethod):
            params = _params(raw.__func__, tf, drop_first=True)
        elif inspect.isfunction(raw):
            params = _params(raw, tf, drop_first=True)
        else:
            continue
        if params is not None:
            out["%s.%s" % (key, attr)] = params


def dump(tf):
    out = {}
    walked = []
    for path in MODULES:
        module = tf
        for part in filter(None, path.split(".")):
            module = getattr(module, part, None)
            if module is None:
                break
        if module is None or not inspect.ismodule(module):
            continue
        prefix = "tf" + ("." + path if path else "")
        walked.append(prefix)
        for name in sorted(dir(module)):
            if name.startswith("_"):
                continue
            obj = getattr(module, name, None)
            if obj is None or inspect.ismodule(obj) or not callable(obj):
                continue
            key = "%s.%s" % (prefix, name)
            if inspect.isclass(obj):
                _class_entries(key, obj, tf, out)
            else:
                params = _params(obj, tf, drop_first=False)
                if params is not None:
                    out[key] = params
    return walked, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(_REPO, "tests", "data", "oracle",
                                                      "api_signatures.json"))
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow.compat.v1 as tf  # pylint: disable=g-import-not-at-top
    tf.disable_v2_behavior()
    import tensorflow  # pylint: disable=g-import-not-at-top
    walked, sigs = dump(tf)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    # One line per callable, so that a regeneration's diff reads callable by callable.
    lines = ['{"modules": %s,' % json.dumps(walked),
             ' "tensorflow_version": %s,' % json.dumps(tensorflow.__version__),
             ' "signatures": {']
    keys = sorted(sigs)
    for i, key in enumerate(keys):
        lines.append("  %s: %s%s" % (json.dumps(key), json.dumps(sigs[key], separators=(",", ":")),
                                     "," if i + 1 < len(keys) else ""))
    lines.append("}}")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%s: %d callables from %d modules" % (args.out, len(sigs), len(walked)), file=sys.stderr)


if __name__ == "__main__":
    main()
