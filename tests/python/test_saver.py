"""tx.train.Saver and safetensors checkpoints: the file is the standard layout (read with plain
json + numpy), save -> restore gives identical outputs, the state file, max_to_keep, errors, and
a crash mid-save leaves the previous checkpoint loadable."""

import json
import os
import signal
import struct
import subprocess
import sys
import time

import numpy as np
import pytest

import tensorflux as tx
from tensorflux.framework import _pywrap


def read_plain(path):
    """A safetensors file read with nothing but json and numpy."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    data = raw[8 + n:]
    kinds = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2",
             "I8": "i1", "U8": "u1", "BOOL": "?"}
    meta = header.pop("__metadata__", {})
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(data[begin:end], dtype=kinds[info["dtype"]]).reshape(
            info["shape"])
    return out, meta


def write_plain(path, arrays):
    """A safetensors file written with nothing but json and numpy (tensors in dict order)."""
    names = {np.dtype("<f4"): "F32", np.dtype("<f8"): "F64", np.dtype("<i4"): "I32",
             np.dtype("<i8"): "I64", np.dtype("bool"): "BOOL"}
    header, blobs, offset = {}, [], 0
    for name, a in arrays.items():
        b = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": names[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


# ---------------------------------------------------------------- the file format (no variables)

def test_written_file_reads_with_json_and_numpy(tmp_path):
    path = str(tmp_path / "x.safetensors")
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    b = np.array([[1, -2]], dtype=np.int64)
    c = np.array([True, False, True])
    h = np.array([0.5, -1.25], dtype=np.float16)
    _pywrap.write_safetensors(path, [("w/a", a, 0), ("b", b, 0), ("c", c, 0), ("h", h, 0)],
                              {"k": "v"})
    got, meta = read_plain(path)
    assert meta == {"k": "v"}
    assert sorted(got) == ["b", "c", "h", "w/a"]
    np.testing.assert_array_equal(got["w/a"], a)
    np.testing.assert_array_equal(got["b"], b)
    np.testing.assert_array_equal(got["c"], c)
    np.testing.assert_array_equal(got["h"], h)
    back, meta = _pywrap.read_safetensors(path)
    assert back["w/a"][0] == tx.float32.as_datatype_enum
    np.testing.assert_array_equal(back["w/a"][1], a)


def test_reads_a_file_written_by_plain_numpy(tmp_path):
    path = str(tmp_path / "y.safetensors")
    arrays = {"z": np.array([3.5, 4.5], np.float64), "a": np.eye(2, dtype=np.int32)}
    write_plain(path, arrays)
    back, meta = _pywrap.read_safetensors(path, ["a", "z"])
    assert meta == {}
    np.testing.assert_array_equal(back["a"][1], arrays["a"])
    np.testing.assert_array_equal(back["z"][1], arrays["z"])
    with pytest.raises(tx.errors.NotFoundError, match="'q'"):
        _pywrap.read_safetensors(path, ["q"])


def test_corrupt_and_missing_files(tmp_path):
    path = str(tmp_path / "c.safetensors")
    _pywrap.write_safetensors(path, [("v", np.ones(4, np.float32), 0)])
    raw = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(raw[:-3])
    with pytest.raises(tx.errors.DataLossError):
        _pywrap.read_safetensors(path)
    with open(path, "wb") as f:
        f.write(raw[:8] + b"[" + raw[9:])
    with pytest.raises(tx.errors.DataLossError):
        _pywrap.read_safetensors(path)
    with pytest.raises(tx.errors.NotFoundError):
        _pywrap.read_safetensors(str(tmp_path / "none.safetensors"))


def test_checkpoint_state_text_format(tmp_path):
    (tmp_path / "checkpoint").write_text(
        'model_checkpoint_path: "m-2.safetensors"\n'
        'all_model_checkpoint_paths: "m-1.safetensors"\n'
        'all_model_checkpoint_paths: "m-2.safetensors"\n')
    state = tx.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == str(tmp_path / "m-2.safetensors")
    assert list(state.all_model_checkpoint_paths) == [str(tmp_path / "m-1.safetensors"),
                                                      str(tmp_path / "m-2.safetensors")]
    assert tx.train.latest_checkpoint(str(tmp_path)) is None  # the file does not exist
    (tmp_path / "m-2.safetensors").write_bytes(b"")
    assert tx.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "m-2.safetensors")
    assert tx.train.latest_checkpoint(str(tmp_path / "nowhere")) is None


# ---------------------------------------------------------------- Saver with variables

def build_model():
    """y = relu(x @ w + b) @ v with variables of three dtypes; returns (x, y, vars)."""
    rng = np.random.RandomState(3)
    x = tx.placeholder(tx.float32, [None, 3], name="x")
    w = tx.Variable(rng.randn(3, 4).astype(np.float32), name="dense/w")
    b = tx.Variable(rng.randn(4).astype(np.float32), name="dense/b")
    v = tx.Variable(rng.randn(4, 2), name="out/v")  # float64
    n = tx.Variable(np.int32(7), name="count")
    y = tx.matmul(tx.cast(tx.nn.relu(tx.matmul(x, w) + b), tx.float64), v)
    return x, y, [w, b, v, n]


def test_save_restore_gives_identical_outputs_and_standard_file(tmp_path):
    prefix = str(tmp_path / "model")
    feed_x = np.random.RandomState(0).randn(5, 3).astype(np.float32)
    with tx.Graph().as_default():
        x, y, variables = build_model()
        saver = tx.train.Saver()
        with tx.Session() as sess:
            sess.run(tx.global_variables_initializer())
            want = sess.run(y, {x: feed_x})
            stored = sess.run([v.value() for v in variables])
            path = saver.save(sess, prefix, global_step=12)
    assert path == prefix + "-12.safetensors"
    got, meta = read_plain(path)
    assert meta["global_step"] == "12"
    assert sorted(got) == ["count", "dense/b", "dense/w", "out/v"]
    for var_value, name in zip(stored, ["dense/w", "dense/b", "out/v", "count"]):
        np.testing.assert_array_equal(got[name], var_value)
        assert got[name].dtype == np.asarray(var_value).dtype

    # A fresh graph and session: restore, then the same outputs bit for bit.
    with tx.Graph().as_default():
        x, y, variables = build_model()
        saver = tx.train.Saver()
        with tx.Session() as sess:
            sess.run(tx.global_variables_initializer())
            sess.run(variables[0].assign(np.zeros((3, 4), np.float32)))
            assert not np.array_equal(sess.run(y, {x: feed_x}), want)
            saver.restore(sess, tx.train.latest_checkpoint(str(tmp_path)))
            np.testing.assert_array_equal(sess.run(y, {x: feed_x}), want)
            assert sess.run(variables[3].value()) == 7


def test_resuming_adam_training_from_a_checkpoint_is_exact(tmp_path):
    """Weights, Adam's slots and beta powers and the global step are all variables: training
    resumed from a checkpoint continues exactly as the uninterrupted run."""
    rng = np.random.RandomState(5)
    xs, ys = rng.randn(16, 3).astype(np.float32), rng.randn(16, 1).astype(np.float32)

    def run(steps_before, steps_after, restore_from=None, save_to=None):
        with tx.Graph().as_default():
            tx.set_random_seed(1)
            x = tx.placeholder(tx.float32, [None, 3])
            y = tx.placeholder(tx.float32, [None, 1])
            w = tx.Variable(tx.random_normal([3, 1], seed=2), name="w")
            loss = tx.reduce_mean(tx.square(tx.matmul(x, w) - y))
            step = tx.train.get_or_create_global_step()
            train = tx.train.AdamOptimizer(0.1).minimize(loss, global_step=step)
            saver = tx.train.Saver()
            with tx.Session() as sess:
                sess.run(tx.global_variables_initializer())
                if restore_from:
                    saver.restore(sess, restore_from)
                for _ in range(steps_before):
                    sess.run(train, {x: xs, y: ys})
                path = saver.save(sess, save_to, global_step=step) if save_to else None
                for _ in range(steps_after):
                    sess.run(train, {x: xs, y: ys})
                return sess.run([w.value(), step.value()]), path

    (w_straight, step_straight), _ = run(5, 0)
    _, path = run(3, 0, save_to=str(tmp_path / "adam"))
    assert path.endswith("adam-3.safetensors")
    names = sorted(read_plain(path)[0])
    assert "w" in names and "global_step" in names and len(names) >= 5  # + m, v, beta powers
    (w_resumed, step_resumed), _ = run(0, 2, restore_from=path)
    assert step_resumed == step_straight == 5
    np.testing.assert_array_equal(w_resumed, w_straight)


def test_var_list_dict_state_file_and_max_to_keep(tmp_path):
    prefix = str(tmp_path / "run")
    with tx.Graph().as_default():
        a = tx.Variable(np.float32(1.0), name="a")
        step = tx.Variable(np.int64(0), name="step")
        saver = tx.train.Saver({"renamed_a": a}, max_to_keep=2, save_relative_paths=True)
        bump = tx.group(a.assign_add(1.0), step.assign_add(1))
        with tx.Session() as sess:
            sess.run(tx.global_variables_initializer())
            paths = []
            for _ in range(4):
                sess.run(bump)
                paths.append(saver.save(sess, prefix, global_step=step))
    assert [os.path.basename(p) for p in paths] == ["run-%d.safetensors" % i for i in (1, 2, 3, 4)]
    assert not os.path.exists(paths[0]) and not os.path.exists(paths[1])
    assert os.path.exists(paths[2]) and os.path.exists(paths[3])
    # The meta graphs of deleted checkpoints go with them (as TF).
    assert sorted(n for n in os.listdir(tmp_path) if n.endswith(".meta")) == ["run-3.meta",
                                                                             "run-4.meta"]
    state_text = (tmp_path / "checkpoint").read_text()
    assert state_text == ('model_checkpoint_path: "run-4.safetensors"\n'
                          'all_model_checkpoint_paths: "run-3.safetensors"\n'
                          'all_model_checkpoint_paths: "run-4.safetensors"\n'
                          + state_text[state_text.index("all_model_checkpoint_timestamps"):])
    assert tx.train.latest_checkpoint(str(tmp_path)) == paths[3]
    got, _ = read_plain(paths[3])
    assert list(got) == ["renamed_a"] and got["renamed_a"] == 5.0


def test_restore_errors_name_the_variable(tmp_path):
    prefix = str(tmp_path / "m")
    with tx.Graph().as_default():
        w = tx.Variable(np.ones((2, 2), np.float32), name="w")
        saver = tx.train.Saver([w])
        with tx.Session() as sess:
            sess.run(tx.global_variables_initializer())
            path = saver.save(sess, prefix)
    assert path == prefix + ".safetensors"

    def restore_into(var_value, name="w", from_path=path):
        with tx.Graph().as_default():
            v = tx.Variable(var_value, name=name)
            saver = tx.train.Saver([v])
            with tx.Session() as sess:
                sess.run(tx.global_variables_initializer())
                saver.restore(sess, from_path)
                return sess.run(v.value())

    np.testing.assert_array_equal(restore_into(np.zeros((2, 2), np.float32)), np.ones((2, 2)))
    np.testing.assert_array_equal(restore_into(np.zeros((2, 2), np.float32), from_path=prefix),
                                  np.ones((2, 2)))  # TF style: the prefix without the suffix
    with pytest.raises(tx.errors.InvalidArgumentError, match="w.*shape"):
        restore_into(np.zeros((3, 2), np.float32))
    with pytest.raises(tx.errors.InvalidArgumentError, match="w.*dtype"):
        restore_into(np.zeros((2, 2), np.float64))
    with pytest.raises(tx.errors.NotFoundError, match="other"):
        restore_into(np.zeros((2, 2), np.float32), name="other")
    with pytest.raises(tx.errors.NotFoundError):
        restore_into(np.zeros((2, 2), np.float32), from_path=str(tmp_path / "none.safetensors"))
    raw = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(raw[:-1])
    with pytest.raises(tx.errors.DataLossError, match="'w'.*truncated"):
        restore_into(np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="No variables"):
        with tx.Graph().as_default():
            tx.train.Saver()


_CRASH_CHILD = r"""
import resource
import signal
import sys
import tensorflux as tx
prefix = sys.argv[1]
v = tx.Variable(tx.fill([1 << 20], 2.0), name="big")  # 4 MiB, made by an op (not a Const)
saver = tx.train.Saver([v])
with tx.Session() as sess:
    sess.run(tx.global_variables_initializer())
    # Writing past 1 MiB raises SIGXFSZ (Python ignores it by default; its default action kills):
    # the process dies inside the temporary file's write, before any rename, every time.
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    saver.save(sess, prefix, global_step=2)
    print("saved", flush=True)
"""


def test_crash_mid_save_leaves_previous_checkpoint_loadable(tmp_path):
    prefix = str(tmp_path / "ckpt")
    with tx.Graph().as_default():
        v = tx.Variable(tx.fill([1 << 20], 1.0), name="big")
        saver = tx.train.Saver([v])
        with tx.Session() as sess:
            sess.run(tx.global_variables_initializer())
            first = saver.save(sess, prefix, global_step=1)

    # A writer killed (SIGXFSZ) while its temporary file is being written.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    child = subprocess.run([sys.executable, "-c", _CRASH_CHILD, prefix], env=env,
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == -signal.SIGXFSZ, (child.returncode, child.stdout, child.stderr)
    assert "saved" not in child.stdout
    names = os.listdir(tmp_path)
    partial = [n for n in names if ".tmp-" in n]
    assert len(partial) == 1 and os.path.getsize(tmp_path / partial[0]) <= 1 << 20, names
    assert not os.path.exists(prefix + "-2.safetensors")

    assert tx.train.latest_checkpoint(str(tmp_path)) == first
    with tx.Graph().as_default():
        v = tx.Variable(tx.zeros([1 << 20]), name="big")
        saver = tx.train.Saver([v])
        with tx.Session() as sess:
            sess.run(tx.global_variables_initializer())
            saver.restore(sess, tx.train.latest_checkpoint(str(tmp_path)))
            assert sess.run(tx.reduce_sum(v.value())) == float(1 << 20)


def _two_variable_saver(max_to_keep=5):
    a = tx.Variable(np.float32(1.0), name="a")
    b = tx.Variable(np.arange(3, dtype=np.float32), name="b")
    return a, b, tx.train.Saver([a, b], max_to_keep=max_to_keep)


def test_state_file_names_the_new_checkpoint_before_old_ones_are_deleted(tmp_path, monkeypatch):
    prefix = str(tmp_path / "m")
    with tx.Graph().as_default():
        a, _, saver = _two_variable_saver(max_to_keep=1)
        with tx.Session() as sess:
            sess.run(tx.global_variables_initializer())
            saver.save(sess, prefix, global_step=1)

            def crash(path):  # the process "dies" when it starts deleting old checkpoints
                raise KeyboardInterrupt(path)
            monkeypatch.setattr(os, "remove", crash)
            with pytest.raises(KeyboardInterrupt):
                saver.save(sess, prefix, global_step=2)
    assert tx.train.latest_checkpoint(str(tmp_path)) == prefix + "-2.safetensors"


def test_state_file_mode_follows_the_umask_like_the_checkpoints(tmp_path):
    old = os.umask(0o022)
    try:
        with tx.Graph().as_default():
            _, _, saver = _two_variable_saver()
            with tx.Session() as sess:
                sess.run(tx.global_variables_initializer())
                path = saver.save(sess, str(tmp_path / "m"), global_step=1)
        assert os.stat(tmp_path / "checkpoint").st_mode & 0o777 == 0o644
        assert os.stat(path).st_mode & 0o777 == 0o644
    finally:
        os.umask(old)


def test_restore_reads_only_the_restored_tensors(tmp_path, monkeypatch):
    path = str(tmp_path / "c.safetensors")
    _pywrap.write_safetensors(path, [("a", np.float32(7.0), 0),
                                     ("b", np.array([1, 2, 3], np.float32), 0),
                                     ("unused", np.zeros(1000, np.float32), 0)])
    from tensorflux.training import saver as saver_module
    asked = []
    real = saver_module._pywrap.read_safetensors

    def spy(p, names=None):
        asked.append(names)
        return real(p, names)
    monkeypatch.setattr(saver_module._pywrap, "read_safetensors", spy)
    with tx.Graph().as_default():
        a, b, saver = _two_variable_saver()
        with tx.Session() as sess:
            saver.restore(sess, path)
            assert sess.run(a) == 7.0
            np.testing.assert_array_equal(sess.run(b), [1, 2, 3])
    assert asked == [["a", "b"]]


def test_restore_from_a_directory_and_unparsable_state_file(tmp_path, caplog):
    with tx.Graph().as_default():
        _, _, saver = _two_variable_saver()
        with tx.Session() as sess:
            with pytest.raises(tx.errors.FailedPreconditionError, match=str(tmp_path)):
                saver.restore(sess, str(tmp_path))
    (tmp_path / "checkpoint").write_text("model_checkpoint_path: \"m-1\n garbage {{")
    with caplog.at_level("WARNING"):
        assert tx.train.latest_checkpoint(str(tmp_path)) is None
        assert tx.train.get_checkpoint_state(str(tmp_path)) is None
    assert "checkpoint state file ignored" in caplog.text and str(tmp_path) in caplog.text


# ---------------------------------------------------------------- TF's Saver arguments

def _save_matrix(tmp_path, shape=(2, 3), **saver_kwargs):
    with tx.Graph().as_default():
        v = tx.Variable(np.arange(6, dtype=np.float32).reshape(shape), name="v")
        saver = tx.train.Saver([v], **saver_kwargs)
        with tx.Session() as sess:
            sess.run(v.initializer)
            return saver.save(sess, str(tmp_path / "m"), global_step=3)


def _restore_matrix(path, shape, **saver_kwargs):
    with tx.Graph().as_default():
        v = tx.Variable(np.zeros(shape, np.float32), name="v")
        saver = tx.train.Saver([v], **saver_kwargs)
        with tx.Session() as sess:
            sess.run(v.initializer)
            saver.restore(sess, path)
            return sess.run(v)


def test_reshape_restores_a_tensor_of_another_shape_with_as_many_elements(tmp_path):
    path = _save_matrix(tmp_path)
    # TF (reshape=True): the stored [2, 3] tensor, row-major, reshaped to the variable's [3, 2].
    np.testing.assert_array_equal(_restore_matrix(path, (3, 2), reshape=True),
                                  [[0, 1], [2, 3], [4, 5]])
    np.testing.assert_array_equal(_restore_matrix(path, (6,), reshape=True), np.arange(6))
    with pytest.raises(tx.errors.InvalidArgumentError, match="v.*shape"):
        _restore_matrix(path, (3, 2))  # reshape=False: the shapes must match
    with pytest.raises(tx.errors.InvalidArgumentError, match="v.*shape"):
        _restore_matrix(path, (4, 2), reshape=True)  # 6 elements do not fill [4, 2]


def test_pad_step_number_and_meta_graph(tmp_path):
    path = _save_matrix(tmp_path, pad_step_number=True)
    assert os.path.basename(path) == "m-00000003.safetensors"
    meta = tx.MetaGraphDef()
    with open(str(tmp_path / "m-00000003.meta"), "rb") as f:
        meta.ParseFromString(f.read())
    assert "v" in {n.name for n in meta.graph_def.node}
    # TF's default state file names the checkpoint by the path save() was given.
    state = (tmp_path / "checkpoint").read_text()
    assert state.startswith('model_checkpoint_path: "%s"\n' % path)


def test_no_meta_graph_and_stripped_default_attrs(tmp_path):
    with tx.Graph().as_default():
        v = tx.Variable(1.0, name="v")
        saver = tx.train.Saver([v])
        with tx.Session() as sess:
            sess.run(v.initializer)
            saver.save(sess, str(tmp_path / "a"), write_meta_graph=False)
            saver.save(sess, str(tmp_path / "b"), meta_graph_suffix="mg",
                       strip_default_attrs=True)
            with pytest.raises(NotImplementedError, match="save_debug_info"):
                saver.save(sess, str(tmp_path / "c"), save_debug_info=True)
    assert not os.path.exists(tmp_path / "a.meta")
    meta = tx.MetaGraphDef()
    with open(str(tmp_path / "b.mg"), "rb") as f:
        meta.ParseFromString(f.read())
    handle = [n for n in meta.graph_def.node if n.name == "v"][0]
    assert "container" not in handle.attr  # "" is VarHandleOp's default for container
    assert "dtype" in handle.attr


def test_allow_empty_and_defer_build(tmp_path):
    with tx.Graph().as_default():
        with pytest.raises(ValueError, match="No variables"):
            tx.train.Saver()
        empty = tx.train.Saver(allow_empty=True)
        with tx.Session() as sess:
            assert empty.save(sess, str(tmp_path / "e")) is None
            empty.restore(sess, str(tmp_path / "e"))  # nothing to restore
        assert not os.path.exists(tmp_path / "e.safetensors")
    with tx.Graph().as_default():
        deferred = tx.train.Saver(defer_build=True)
        v = tx.Variable(4.0, name="v")  # created after the Saver: build() still finds it
        with tx.Session() as sess:
            sess.run(v.initializer)
            with pytest.raises(RuntimeError, match="build"):
                deferred.save(sess, str(tmp_path / "d"))
            deferred.build()
            path = deferred.save(sess, str(tmp_path / "d"))
        with pytest.raises(ValueError, match="defer"):
            tx.train.Saver([v], defer_build=True)
    assert read_plain(path)[0]["v"] == 4.0


def test_keep_checkpoint_every_n_hours_keeps_one_per_period(tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    with tx.Graph().as_default():
        v = tx.Variable(1.0, name="v")
        saver = tx.train.Saver([v], max_to_keep=1, keep_checkpoint_every_n_hours=1.0)
        with tx.Session() as sess:
            sess.run(v.initializer)
            paths = []
            for step, minutes in enumerate([0, 30, 70, 80, 140]):
                clock[0] = 1000.0 + 60 * minutes
                paths.append(saver.save(sess, str(tmp_path / "m"), global_step=step))
    # Saved at 0, 30, 70, 80, 140 minutes: the one saved after the first hour (70) is kept
    # beside the newest; the others beyond max_to_keep=1 are deleted.
    assert [os.path.exists(p) for p in paths] == [False, False, True, False, True]


def test_unsupported_saver_arguments_are_named(graph):
    tx.Variable(1.0, name="v")
    for kwargs, what in (({"saver_def": object()}, "saver_def"),
                         ({"builder": object()}, "builder"),
                         ({"write_version": 1}, "write_version")):
        with pytest.raises(NotImplementedError, match=what):
            tx.train.Saver(**kwargs)
    with pytest.raises(TypeError):
        tx.train.Saver(no_such_argument=True)
