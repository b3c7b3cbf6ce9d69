"""Every public callable of TensorFlux that has a counterpart in tf.compat.v1 takes TensorFlow's
arguments (issue 19): TF's signatures are tests/data/oracle/api_signatures.json, written by
tools/oracle/api_signatures.py with the oracle virtualenv (TensorFlow is never imported here).

For tx.<module>.<name> (a function, a class's constructor, or a public method of a class) whose
"tf.<module>.<name>" is in that file:
  - every TF parameter exists in ours under the same name;
  - TF's positional parameters are ours, in the same order, and positional;
  - a parameter with a default in TF has one in ours, the same where TF's is a literal (or a
    dtype);
  - ours takes **kwargs only where TF does too (those forward them to a function that rejects
    unknown names: test_forwarded_keyword_arguments_are_checked).
Deliberate differences are listed in DIFFERENCES with their reason (and docs/TF_DIFFERENCES.md);
an entry that no longer differs fails, so the list stays true.
"""

import inspect
import json
import os

import pytest

import tensorflux as tx
from conftest import TEST_DATA_DIR

with open(os.path.join(TEST_DATA_DIR, "oracle", "api_signatures.json")) as _f:
    _ORACLE = json.load(_f)
_TF = _ORACLE["signatures"]

# key -> why ours differs on purpose.
DIFFERENCES = {
}

_POSITIONAL = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")


def _tx_module(tf_module_path):
    module = tx
    for part in tf_module_path.split(".")[1:]:
        module = getattr(module, part, None)
        if module is None or not inspect.ismodule(module):
            return None
    return module


def _is_proto_class(obj):
    from google.protobuf import message  # pylint: disable=g-import-not-at-top
    return inspect.isclass(obj) and issubclass(obj, message.Message)


def _params(func, drop_first):
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if drop_first and params and params[0].kind.name in _POSITIONAL:
        params = params[1:]
    return params


def _ours():
    """{TF key: (our parameters, our object)} for every public callable of TensorFlux that
    has a TF counterpart in the oracle file."""
    out = {}
    for tf_module in _ORACLE["modules"]:
        module = _tx_module(tf_module)
        if module is None:
            continue
        for name in sorted(dir(module)):
            if name.startswith("_"):
                continue
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not callable(obj) or _is_proto_class(obj):
                continue
            key = "%s.%s" % (tf_module, name)
            if inspect.isclass(obj):
                init = next((vars(k)["__init__"] for k in obj.__mro__ if "__init__" in vars(k)),
                            None)
                if key in _TF and init is not None and init is not object.__init__:
                    params = _params(init, drop_first=True)
                    if params is not None:
                        out[key] = (params, obj)
                for attr in sorted(dir(obj)):
                    method_key = "%s.%s" % (key, attr)
                    if attr.startswith("_") or method_key not in _TF:
                        continue
                    raw = inspect.getattr_static(obj, attr)
                    if isinstance(raw, staticmethod):
                        params = _params(raw.__func__, drop_first=False)
                    elif isinstance(raw, classmethod):
                        params = _params(raw.__func__, drop_first=True)
                    elif inspect.isfunction(raw):
                        params = _params(raw, drop_first=True)
                    else:
                        continue
                    if params is not None:
                        out[method_key] = (params, raw)
            elif key in _TF:
                params = _params(obj, drop_first=False)
                if params is not None:
                    out[key] = (params, obj)
    return out


def _default_matches(tf_default, ours):
    if tf_default == "<non-literal>":
        return True
    if tf_default.startswith("<dtype:"):
        return getattr(ours, "name", None) == tf_default[len("<dtype:"):-1]
    if isinstance(ours, tx.DType):
        return False
    try:
        return repr(ours) == tf_default or ours == eval(tf_default)  # pylint: disable=eval-used
    except Exception:  # pylint: disable=broad-except
        return False


def _problems(key, params):
    """The ways our parameters differ from TF's, as readable strings."""
    tf_params = _TF[key]
    ours = {p.name: p for p in params}
    problems = []
    tf_kinds = {kind for _, kind, _ in tf_params}
    if any(p.kind.name == "VAR_KEYWORD" for p in params) and "VAR_KEYWORD" not in tf_kinds:
        problems.append("takes **%s (TF does not)" % next(p.name for p in params
                                                        if p.kind.name == "VAR_KEYWORD"))
    if any(p.kind.name == "VAR_POSITIONAL" for p in params) and "VAR_POSITIONAL" not in tf_kinds:
        problems.append("takes *args (TF does not)")
    tf_positional = [n for n, kind, _ in tf_params if kind in _POSITIONAL]
    our_positional = [p.name for p in params if p.kind.name in _POSITIONAL]
    if our_positional[:len(tf_positional)] != tf_positional:
        problems.append("positional parameters %s, TF's %s" % (our_positional, tf_positional))
    for name, kind, default in tf_params:
        if kind in ("VAR_POSITIONAL", "VAR_KEYWORD"):
            continue
        if name not in ours:
            problems.append("no parameter %r" % name)
            continue
        if default is None:
            continue
        if ours[name].default is inspect.Parameter.empty:
            problems.append("%s has no default (TF: %s)" % (name, default))
        elif not _default_matches(default, ours[name].default):
            problems.append("%s=%r (TF: %s)" % (name, ours[name].default, default))
    return problems


_OURS = _ours()


def test_the_walk_finds_the_api():
    # The oracle file covers the modules TensorFlux mirrors, and the walk reaches most of ours.
    for module in ("tf", "tf.nn", "tf.train", "tf.layers", "tf.losses", "tf.summary",
                   "tf.data", "tf.image", "tf.math", "tf.random", "tf.initializers"):
        assert module in _ORACLE["modules"]
        assert _tx_module(module) is not None, module
    assert len(_OURS) > 300
    for key in ("tf.train.Saver", "tf.train.Saver.save", "tf.gradients", "tf.Variable",
                "tf.summary.FileWriter", "tf.nn.conv2d", "tf.matmul", "tf.layers.Dense"):
        assert key in _OURS, key


@pytest.mark.parametrize("key", sorted(_OURS))
def test_signature_matches_tensorflow(key):
    problems = _problems(key, _OURS[key][0])
    if key in DIFFERENCES:
        assert problems, "%s is listed in DIFFERENCES but matches TF now: remove it" % key
        return
    assert not problems, "%s: %s" % (key.replace("tf.", "tx.", 1), "; ".join(problems))


def test_differences_name_real_callables():
    for key, reason in DIFFERENCES.items():
        assert key in _OURS, key
        assert reason


def test_counts(capsys):
    mismatched = sorted(k for k in _OURS if _problems(k, _OURS[k][0]))
    with capsys.disabled():
        print("\napi signatures: %d TensorFlux callables checked against TF %s; %d differ, "
              "%d of them listed in DIFFERENCES" % (len(_OURS), _ORACLE["tensorflow_version"],
                                                   len(mismatched), len(DIFFERENCES)))


def test_forwarded_keyword_arguments_are_checked(graph):
    # The callables that take **kwargs (as TF's do) reject names they do not know.
    with pytest.raises(TypeError, match="bogus"):
        tx.group(tx.no_op(), bogus=1)
    with pytest.raises(TypeError, match="bogus"):
        tx.layers.Dense(3, bogus=1)
    with pytest.raises(TypeError, match="bogus"):
        tx.layers.Conv2D(3, 3, bogus=1)
    with pytest.raises(TypeError, match="bogus"):
        tx.layers.Dropout(bogus=1)
    with pytest.raises(TypeError, match="bogus"):
        tx.raw_ops.Identity(input=tx.constant(1.0), bogus=1)


def test_no_keyword_swallowing_anywhere_in_the_package():
    # Beyond the callables with a TF counterpart: no function of the package takes **kwargs
    # and drops them. Each **kwargs below is forwarded to a callable that checks the names.
    root = os.path.dirname(tx.__file__)
    allowed = {
        ("ops/control_flow_ops.py", "group"),  # pops name, raises TypeError on any other
        ("layers/base.py", "__init__"),  # raises TypeError on any name
        ("layers/base.py", "call"),  # the base class's call, which subclasses replace
        ("layers/base.py", "__call__"),  # forwarded to the layer's call()
        ("layers/core.py", "__init__"),  # forwarded to Layer.__init__
        ("layers/convolutional.py", "__init__"),
        ("layers/normalization.py", "__init__"),
        ("layers/normalization.py", "__call__"),
        ("raw_ops.py", "raw_op"),  # apply_op raises TypeError on a name that is no input/attr
        ("ops/resource_variable_ops.py", "_update"),  # private: the op wrapper's attrs
        ("client/session.py", "_callable"),  # raises TypeError on any but options/run_metadata
        ("training/monitored_session.py", "run"),  # the wrapped session's run()
        ("training/sync_replicas_optimizer.py", "compute_gradients"),  # the wrapped optimizer's
        ("training/sync_replicas_optimizer.py", "get_slot"),
        ("training/sync_replicas_optimizer.py", "get_slot_names"),
        ("framework/op_def_library.py", "apply_op"),  # raises TypeError on an unknown name
        ("ops/variable_scope.py", "_check_unsupported"),  # raises on any value but None
        ("layers/normalization.py", "_check_unsupported"),  # raises on any value but None
        ("saved_model/loader.py", "load"),  # clear_devices; any other raises (TF: Saver's)
        ("framework/function_trace.py", "_create_op_internal"),  # Graph._create_op_internal's
    }
    import ast  # pylint: disable=g-import-not-at-top
    found = set()
    for dirpath, _, files in os.walk(root):
        for fname in files:
            if not fname.endswith(".py"):
                continue
            path = os.path.join(dirpath, fname)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            with open(path) as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.args.kwarg:
                    found.add((rel, node.name))
    unexpected = sorted(found - allowed)
    assert not unexpected, "functions taking **kwargs: %s" % unexpected
