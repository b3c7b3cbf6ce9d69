"""tx.train.Saver: save and restore variables as safetensors checkpoints (TF 1.x's Saver API).

    saver = tx.train.Saver(max_to_keep=5)
    path = saver.save(sess, "/tmp/run/model", global_step=step)   # /tmp/run/model-<step>.safetensors
    saver.restore(sess, tx.train.latest_checkpoint("/tmp/run"))

A checkpoint is one safetensors file (an 8-byte little-endian header length, a JSON header of
name -> {dtype, shape, data_offsets}, then the raw little-endian data), written atomically by the
engine: a temporary file in the same directory, fsync, rename, fsync of the directory, so a crash
mid-save leaves the previous checkpoints usable. Tensor names are the variables' op names (or the
keys of a `var_list` dict). Next to the checkpoints the Saver keeps TF's `checkpoint` state file
(a CheckpointState in protobuf text format: model_checkpoint_path, all_model_checkpoint_paths),
also replaced atomically, and deletes checkpoints beyond `max_to_keep`, oldest first (with their
meta graphs). Each save also writes, as TF, `<prefix>.meta`: a MetaGraphDef holding the
session's GraphDef (write_meta_graph=False leaves it out).

Errors (tx.errors): restoring a missing file or a variable absent from the file is
NotFoundError; a truncated or corrupt file is DataLossError; a stored dtype or shape that differs
from the variable's is InvalidArgumentError naming the variable; a directory given as the file is
FailedPreconditionError naming it. A `checkpoint` state file that does not parse is ignored
with a logged warning (latest_checkpoint returns None), as in TF.
"""

import logging
import numbers
import os
import time

from google.protobuf import text_format

from tensorflux.checkpoint_state_pb2 import CheckpointState
from tensorflux.saved_model_pb2 import MetaGraphDef
from tensorflux.framework import _pywrap
from tensorflux.framework import dtypes
from tensorflux.framework import errors
from tensorflux.framework import ops
from tensorflux.ops import array_ops
from tensorflux.ops import control_flow_ops

_STATE_FILENAME = "checkpoint"
_logger = logging.getLogger("tensorflux")
_SUFFIX = ".safetensors"


def _atomic_write_text(path, text):
    """Writes `text` to `path` through a temporary file in the same directory + rename."""
    _atomic_write_bytes(path, text.encode("utf-8"))


def _atomic_write_bytes(path, data):
    """Writes `data` to `path` through a temporary file in the same directory + rename."""
    directory = os.path.dirname(os.path.abspath(path))
    # Mode 0666 less the umask, like the checkpoint files (tempfile.mkstemp would give 0600).
    while True:
        tmp = os.path.join(directory, ".%s.tmp-%d-%s" % (os.path.basename(path), os.getpid(),
                                                         os.urandom(6).hex()))
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState in `checkpoint_dir` (file `latest_filename` or "checkpoint"), or None
    (also, with a logged warning, when the file does not parse, as in TF).

    Relative paths in the file are made relative to `checkpoint_dir`, as TF does.
    """
    path = os.path.join(checkpoint_dir, latest_filename or _STATE_FILENAME)
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        text = f.read()
    state = CheckpointState()
    try:
        text_format.Parse(text, state)
    except text_format.ParseError as e:
        # As TF: an unreadable state file is logged and ignored.
        _logger.warning("%s: ParseError: %s; checkpoint state file ignored", path, e)
        return None
    if not state.model_checkpoint_path:
        raise errors.DataLossError(None, None, "checkpoint state file %r has no "
                                   "model_checkpoint_path" % path)

    def absolute(p):
        return p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)

    state.model_checkpoint_path = absolute(state.model_checkpoint_path)
    paths = [absolute(p) for p in state.all_model_checkpoint_paths]
    del state.all_model_checkpoint_paths[:]
    state.all_model_checkpoint_paths.extend(paths)
    return state


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The path of the newest checkpoint named by the state file in `checkpoint_dir`, or None
    when there is no state file or the checkpoint it names no longer exists."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None or not os.path.isfile(state.model_checkpoint_path):
        return None
    return state.model_checkpoint_path


def _update_checkpoint_state(save_dir, paths, timestamps, latest_filename=None,
                             save_relative_paths=False):
    """Rewrites the state file: `paths` oldest first, the last one the newest. With
    save_relative_paths, paths inside `save_dir` are written relative to it (so a directory can
    be moved); otherwise as given, as TF."""
    state = CheckpointState()

    def relative(p):
        if save_relative_paths and \
                os.path.dirname(os.path.abspath(p)) == os.path.abspath(save_dir):
            return os.path.basename(p)
        return p

    state.model_checkpoint_path = relative(paths[-1])
    state.all_model_checkpoint_paths.extend(relative(p) for p in paths)
    state.all_model_checkpoint_timestamps.extend(timestamps)
    _atomic_write_text(os.path.join(save_dir, latest_filename or _STATE_FILENAME),
                       text_format.MessageToString(state))


def _named_variables(var_list):
    """[(checkpoint name, variable)] sorted by name, from None, a list or a dict."""
    if var_list is None:
        var_list = ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES)
    if isinstance(var_list, dict):
        named = list(var_list.items())
    else:
        named = []
        seen = {}
        for var in var_list:
            name = var.op.name
            if name in seen and seen[name] is not var:
                raise ValueError("At least two variables have the same name: %s" % name)
            seen[name] = var
            named.append((name, var))
        named = list({n: v for n, v in named}.items())
    for name, var in named:
        if not isinstance(name, str) or not name:
            raise ValueError("Checkpoint names must be non-empty strings, got %r" % (name,))
        for attr in ("dtype", "shape", "value", "assign"):
            if not hasattr(var, attr):
                raise TypeError("Saver saves variables; %r (for %r) has no %s" % (var, name, attr))
    return sorted(named, key=lambda nv: nv[0])


def _strip_default_attrs(graph_def):
    """Removes from each node the attrs whose value is their OpDef's default (in place)."""
    from tensorflux.framework import op_def_registry  # pylint: disable=g-import-not-at-top
    for node in graph_def.node:
        op_def = op_def_registry.get(node.op)
        if op_def is None:
            continue
        for attr in op_def.attr:
            if (attr.HasField("default_value") and attr.name in node.attr
                    and node.attr[attr.name] == attr.default_value):
                del node.attr[attr.name]


def _meta_graph_path(checkpoint_prefix, meta_graph_suffix):
    return "%s.%s" % (checkpoint_prefix, meta_graph_suffix)


class Saver:
    """Saves and restores variables (TF 1.x's tf.train.Saver, safetensors files).

    Args (TF's names, order and defaults):
      var_list: None (all global variables), a list of variables (saved under their op names),
        or a dict of name -> variable.
      reshape: restore() accepts a stored tensor of another shape with the variable's number of
        elements, reshaped (row-major) to the variable's shape.
      sharded: a checkpoint is always one file here (as TF's V2 format merges the shards of a
        save into one checkpoint); restoring gives the same values either way.
      max_to_keep: how many recent checkpoints to keep; None or 0 keeps all.
      keep_checkpoint_every_n_hours: besides the last max_to_keep, one checkpoint per this many
        hours of this Saver's life is never deleted (TF's rule).
      name: the name scope of the restore ops (default "save").
      restore_sequentially: accepted (TF: restore one variable after another to bound memory;
        values are the same either way).
      saver_def, builder: not supported (NotImplementedError when given).
      defer_build: build the restore ops in build() instead of here (var_list must be None).
      allow_empty: with no variables, save() writes nothing and returns None and restore() does
        nothing, instead of ValueError("No variables to save").
      write_version: 2 (TF's SaverDef.V2); 1 (the V1 format) raises NotImplementedError.
      pad_step_number: the global step in the file name is zero-padded to 8 digits.
      save_relative_paths: the `checkpoint` state file names checkpoints of its own directory by
        their base name; otherwise by the path given to save(), as TF.
      filename: accepted (TF: the default of the saver_def's filename tensor, which save() and
        restore() always feed).

    The restore ops (one placeholder and one assign per variable, grouped into one op) are built
    in the variables' graph here (or in build()), once; save and restore only run them.
    """

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=2, pad_step_number=False, save_relative_paths=False,
                 filename=None):
        del sharded, restore_sequentially, filename  # no effect on values (docstring)
        for what, value in (("saver_def", saver_def), ("builder", builder)):
            if value is not None:
                raise NotImplementedError("tx.train.Saver: %s is not supported" % what)
        if write_version != 2:
            raise NotImplementedError("tx.train.Saver: write_version=%r is not supported (only "
                                      "2, TF's SaverDef.V2)" % (write_version,))
        if defer_build and var_list:
            raise ValueError("If `var_list` is provided then build cannot be deferred. Either "
                             "set defer_build=False or var_list=None.")
        self._var_list = var_list
        self._reshape = bool(reshape)
        self._max_to_keep = max_to_keep
        self._keep_every_secs = float(keep_checkpoint_every_n_hours) * 3600.0
        self._name = name
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._last_checkpoints = []  # [(path, unix time)], oldest first
        self._is_built = False
        self._is_empty = None
        if not defer_build:
            self.build()

    def build(self):
        """Builds the restore ops (once; called by the constructor unless defer_build)."""
        if self._is_built:
            return
        self._is_built = True
        self._next_checkpoint_time = time.time() + self._keep_every_secs
        self._vars = _named_variables(self._var_list)
        self._placeholders = []
        self._reads = []
        if not self._vars:
            if self._allow_empty:
                self._is_empty = True
                return
            raise ValueError("No variables to save")
        self._is_empty = False
        graph = self._vars[0][1].graph if hasattr(self._vars[0][1], "graph") else \
            ops.get_default_graph()
        with graph.as_default(), ops.name_scope(self._name or "save"):
            assigns = []
            for _, var in self._vars:
                dtype = dtypes.as_dtype(var.dtype).base_dtype
                ph = array_ops.placeholder(dtype, shape=var.shape)
                self._placeholders.append(ph)
                assigns.append(var.assign(ph, read_value=False))
                self._reads.append(var.value())
            self._restore_op = control_flow_ops.group(*assigns, name="restore_all")

    def _check_built(self):
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")

    @property
    def last_checkpoints(self):
        """Paths of the checkpoints this Saver has kept, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints):
        """Makes this Saver manage (and eventually delete) these earlier checkpoint paths."""
        self._last_checkpoints = [(p, time.time()) for p in last_checkpoints]

    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False, metadata=None):
        """Writes the variables to `<save_path>-<global_step>.safetensors` (or
        `<save_path>.safetensors` without a step) and returns that path (None for an empty
        Saver, allow_empty).

        global_step: an int, or a tensor/variable evaluated in `sess` (zero-padded to 8 digits
        with pad_step_number). The `checkpoint` state file (`latest_filename`) in save_path's
        directory is updated, and checkpoints beyond max_to_keep deleted, unless write_state is
        False. write_meta_graph: also writes `<save_path>[-<step>].<meta_graph_suffix>`, a
        MetaGraphDef holding sess.graph's GraphDef (its attrs equal to their defaults left out
        with strip_default_attrs). save_debug_info=True is not supported (NotImplementedError).
        `metadata` (str -> str, a TensorFlux extension) goes into the file's __metadata__.
        """
        if save_debug_info:
            raise NotImplementedError("tx.train.Saver.save: save_debug_info=True is not "
                                      "supported")
        self._check_built()
        if latest_filename is None:
            latest_filename = _STATE_FILENAME
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        if global_step is not None:
            if isinstance(global_step, numbers.Integral):
                global_step = int(global_step)
            else:  # a tensor or variable
                global_step = int(sess.run(global_step))
            prefix = ("%s-%08d" if self._pad_step_number else "%s-%d") % (save_path, global_step)
        else:
            prefix = save_path
        path = prefix + _SUFFIX
        save_dir = os.path.dirname(path) or "."
        if not os.path.isdir(save_dir):
            raise ValueError("Parent directory of %s doesn't exist, can't save." % save_path)
        if not self._is_empty:
            values = sess.run(self._reads)
            items = [(name, value, dtypes.as_dtype(var.dtype).base_dtype.as_datatype_enum)
                     for (name, var), value in zip(self._vars, values)]
            meta = {"format": "tensorflux"}
            if global_step is not None:
                meta["global_step"] = str(global_step)
            meta.update(metadata or {})
            _pywrap.write_safetensors(path, items, meta)
            if write_state:
                self._record_and_prune(path, save_dir, latest_filename, meta_graph_suffix)
        if write_meta_graph:
            graph_def = sess.graph.as_graph_def()
            if strip_default_attrs:
                _strip_default_attrs(graph_def)
            meta_graph = MetaGraphDef(graph_def=graph_def)
            _atomic_write_bytes(_meta_graph_path(prefix, meta_graph_suffix),
                                meta_graph.SerializeToString())
        return None if self._is_empty else path

    def _record_and_prune(self, path, save_dir, latest_filename, meta_graph_suffix):
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != path]
        self._last_checkpoints.append((path, time.time()))
        stale = []
        if self._max_to_keep:
            while len(self._last_checkpoints) > self._max_to_keep:
                old = self._last_checkpoints.pop(0)
                # keep_checkpoint_every_n_hours: one checkpoint per period survives (TF's rule).
                if old[1] > self._next_checkpoint_time:
                    self._next_checkpoint_time += self._keep_every_secs
                else:
                    stale.append(old[0])
        # The state file names the new checkpoint before old ones go (as TF), so a crash in
        # between leaves latest_checkpoint() usable.
        _update_checkpoint_state(save_dir, self.last_checkpoints,
                                 [t for _, t in self._last_checkpoints], latest_filename,
                                 self._save_relative_paths)
        for old in stale:
            old_prefix = old[:-len(_SUFFIX)] if old.endswith(_SUFFIX) else old
            for victim in (old, _meta_graph_path(old_prefix, meta_graph_suffix)):
                try:
                    os.remove(victim)
                except FileNotFoundError:
                    pass

    def restore(self, sess, save_path):
        """Assigns every variable its value from the checkpoint at `save_path` (the file, or
        the prefix save() was given, as in TF: "model-12" reads "model-12.safetensors").

        Raises NotFoundError (no file, or a variable missing from it), DataLossError (a
        truncated or corrupt file) or InvalidArgumentError (dtype or shape differs from the
        variable's -- with reshape, a number of elements that differs -- naming it), and then
        changes no variable.
        """
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        self._check_built()
        if self._is_empty:
            return
        if not os.path.exists(save_path) and os.path.isfile(save_path + _SUFFIX):
            save_path += _SUFFIX  # a TF-style prefix ("model-12") names "model-12.safetensors"
        try:  # only the tensors restored are read
            stored, _ = _pywrap.read_safetensors(save_path, [name for name, _ in self._vars])
        except errors.NotFoundError as e:
            if not os.path.isfile(save_path):
                raise
            raise errors.NotFoundError(None, None, "Key not found in checkpoint %s: %s"
                                       % (save_path, e.message)) from e
        feed = {}
        for (name, var), ph in zip(self._vars, self._placeholders):
            dtype_enum, value = stored[name]
            want = dtypes.as_dtype(var.dtype).base_dtype
            got = dtypes.as_dtype(dtype_enum)
            if got != want:
                raise errors.InvalidArgumentError(
                    None, None, "Restoring variable %s from %s: the checkpoint holds dtype %s, "
                    "the variable has dtype %s" % (name, save_path, got.name, want.name))
            if (self._reshape and not var.shape.is_compatible_with(value.shape)
                    and var.shape.is_fully_defined()
                    and var.shape.num_elements() == value.size):
                value = value.reshape(var.shape.as_list())
            if not var.shape.is_compatible_with(value.shape):
                raise errors.InvalidArgumentError(
                    None, None, "Restoring variable %s from %s: the checkpoint holds shape %s, "
                    "the variable has shape %s" % (name, save_path, list(value.shape),
                                                   var.shape))
            feed[ph] = value
        sess.run(self._restore_op, feed_dict=feed)
