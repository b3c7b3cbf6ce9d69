"""Checkpoint I/O (ops/io_ops.cc): SaveV2, RestoreV2, MergeV2Checkpoints (programs that save
seeded tensors into a folder named from the case id and restore them), ShardedFilename and
ShardedFilespec (single-op cases: the strings exactly)."""

import os

import numpy as np

from conformance.program_util import ordered, tmpdir, values
from conformance.table import Case

CASES = []
SAVE = ("SaveV2", "RestoreV2")


def _strings(m, items):
    return m.constant(np.array([s.encode() if isinstance(s, str) else s for s in items],
                               dtype=object), dtype=m.string)


def _tensors(key):
    """name -> array: one per dtype, plus scalar, empty and specials."""
    out = {}
    for dt in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
               "uint16", "uint32", "uint64", "bool"):
        out["t_" + dt] = values("%s/%s" % (key, dt), (2, 3), dt, -100, 100)
    out["scalar"] = np.float32(2.5)
    out["empty"] = np.zeros((0, 3), np.float64)
    out["specials"] = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-40], np.float32)
    out["int_limits"] = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max])
    out["strings"] = np.array([b"abc", b"", b"\x00\xff"], dtype=object)
    out["nested/name:0"] = np.arange(4, dtype=np.int32).reshape(2, 2)
    return out


def _const(m, arr):
    arr = np.asarray(arr)
    if arr.dtype == object or arr.dtype.kind == "S":
        return m.constant(arr, dtype=m.string)
    return m.constant(arr, dtype=m.as_dtype(arr.dtype.name))


def _dtype_of(m, arr):
    arr = np.asarray(arr)
    return m.string if arr.dtype == object else m.as_dtype(arr.dtype.name)


def _case(op, variant, program, covers=SAVE, dtype="float32", **kw):
    return Case(op, variant="program" + ("_" + variant if variant else ""), dtype=dtype,
                program=program, covers=[c for c in covers if c != op], **kw)


def _save_restore(names=None, restore_names=None, restore_dtypes=None, slices=None,
                  restore_slices=None, prefix="ckpt"):
    """Save the tensors of _tensors (or `names` of them), restore `restore_names`."""
    def program(m):
        cid = "io/save_restore/%s/%s/%s/%s" % (names, restore_names, restore_dtypes, slices)
        folder = tmpdir(cid + str(restore_slices))
        tensors = _tensors("io")
        save_names = names or sorted(tensors)
        rnames = restore_names or save_names
        path = m.constant(os.path.join(folder, prefix))
        save = lambda: m.raw_ops.SaveV2(
            prefix=path, tensor_names=_strings(m, save_names),
            shape_and_slices=_strings(m, slices or [""] * len(save_names)),
            tensors=[_const(m, tensors[n]) for n in save_names])
        dts = restore_dtypes or [_dtype_of(m, tensors[n]) for n in rnames]
        restore = lambda: m.raw_ops.RestoreV2(
            prefix=path, tensor_names=_strings(m, rnames),
            shape_and_slices=_strings(m, restore_slices or [""] * len(rnames)),
            dtypes=[m.as_dtype(d) for d in dts])
        outs = ordered(m, [save, restore])
        return outs[1:], {}, []
    return program


CASES.append(_case("SaveV2", "", _save_restore()))
CASES.append(_case("RestoreV2", "subset", _save_restore(
    restore_names=["t_int32", "scalar", "strings"])))
CASES.append(_case("RestoreV2", "reordered", _save_restore(
    names=["t_float32", "t_int64", "empty"], restore_names=["empty", "t_float32"])))
CASES.append(_case("RestoreV2", "missing_name", _save_restore(
    names=["t_float32"], restore_names=["nope"], restore_dtypes=["float32"])))
CASES.append(_case("RestoreV2", "wrong_dtype", _save_restore(
    names=["t_float32"], restore_dtypes=["int32"])))
CASES.append(_case("RestoreV2", "slice", _save_restore(
    names=["t_float32"], restore_slices=["2 3 1,1:0,2"])))
CASES.append(_case("SaveV2", "duplicate_names", _save_restore(
    names=["t_float32", "t_float32"])))
CASES.append(_case("SaveV2", "names_length", lambda m: ([], {}, [m.raw_ops.SaveV2(
    prefix=m.constant(os.path.join(tmpdir("io/names_length"), "ckpt")),
    tensor_names=_strings(m, ["a", "b"]), shape_and_slices=_strings(m, ["", ""]),
    tensors=[m.constant([1.0])])])))


def _restore_missing_file(m):
    folder = tmpdir("io/restore_missing")
    r = m.raw_ops.RestoreV2(prefix=m.constant(os.path.join(folder, "nothing")),
                            tensor_names=_strings(m, ["a"]), shape_and_slices=_strings(m, [""]),
                            dtypes=[m.float32])
    return r, {}, []


CASES.append(_case("RestoreV2", "missing_file", _restore_missing_file))


def _overwrite(m):
    """Saving twice to one prefix: the second bundle replaces the first."""
    folder = tmpdir("io/overwrite")
    path = m.constant(os.path.join(folder, "ckpt"))
    outs = ordered(m, [
        lambda: m.raw_ops.SaveV2(prefix=path, tensor_names=_strings(m, ["a", "b"]),
                                 shape_and_slices=_strings(m, ["", ""]),
                                 tensors=[m.constant([1.0, 2.0]), m.constant(3)]),
        lambda: m.raw_ops.SaveV2(prefix=path, tensor_names=_strings(m, ["a"]),
                                 shape_and_slices=_strings(m, [""]),
                                 tensors=[m.constant([5.0, 6.0, 7.0])]),
        lambda: m.raw_ops.RestoreV2(prefix=path, tensor_names=_strings(m, ["a"]),
                                    shape_and_slices=_strings(m, [""]), dtypes=[m.float32])])
    return outs[2:], {}, []


CASES.append(_case("SaveV2", "overwrite", _overwrite))


def _merge(delete_old_dirs=True, missing=False, allow_missing=False):
    """Two shards saved under <folder>/tmp/part-*, merged into <folder>/ckpt, restored."""
    def program(m):
        folder = tmpdir("io/merge/%s/%s/%s" % (delete_old_dirs, missing, allow_missing))
        parts = [os.path.join(folder, "tmp%d" % i, "part") for i in range(2)]
        dest = os.path.join(folder, "ckpt")
        makers = []
        for i, p in enumerate(parts):
            if missing and i == 1:
                continue
            makers.append(lambda p=p, i=i: m.raw_ops.SaveV2(
                prefix=m.constant(p), tensor_names=_strings(m, ["w%d" % i, "z%d" % i]),
                shape_and_slices=_strings(m, ["", ""]),
                tensors=[m.constant(values("io/merge/%d" % i, (3,))),
                         m.constant(np.arange(i + 2, dtype=np.int64))]))
        kw = {"allow_missing_files": True} if allow_missing else {}
        makers.append(lambda: m.raw_ops.MergeV2Checkpoints(
            checkpoint_prefixes=_strings(m, parts), destination_prefix=m.constant(dest),
            delete_old_dirs=delete_old_dirs, **kw))
        names = ["w0", "z0"] if missing else ["w0", "w1", "z0", "z1"]
        makers.append(lambda: m.raw_ops.RestoreV2(
            prefix=m.constant(dest), tensor_names=_strings(m, names),
            shape_and_slices=_strings(m, [""] * len(names)),
            dtypes=[m.float32, m.int64] if missing else
            [m.float32, m.float32, m.int64, m.int64]))
        # Whether the shards' folders are left: a py_func-free check, listed after the run
        # by the restore succeeding is all both can show; the folder listing is not fetched.
        outs = ordered(m, makers)
        return outs[len(makers) - 1:], {}, []
    return program


CASES.append(_case("MergeV2Checkpoints", "", _merge(), SAVE))
CASES.append(_case("MergeV2Checkpoints", "keep_dirs", _merge(delete_old_dirs=False), SAVE))
CASES.append(_case("MergeV2Checkpoints", "missing", _merge(missing=True), SAVE))
CASES.append(_case("MergeV2Checkpoints", "allow_missing",
                   _merge(missing=True, allow_missing=True), SAVE))


# ---------------------------------------------------------------- file-name helpers

def _name_case(variant, basename, shard, num_shards):
    return Case("ShardedFilename", {"basename": np.array(basename),
                                    "shard": np.array(shard, np.int32),
                                    "num_shards": np.array(num_shards, np.int32)},
                variant=variant, dtype="string")


CASES += [
    _name_case("base", b"model.ckpt", 1, 3),
    _name_case("first", b"/tmp/dir/x", 0, 1),
    _name_case("wide", b"m", 123456, 1234567),
    _name_case("negative", b"m", -1, 2),
    _name_case("empty_base", b"", 2, 5),
    Case("ShardedFilename", {"basename": np.array([b"a", b"b"]),
                             "shard": np.array(0, np.int32),
                             "num_shards": np.array(1, np.int32)},
         variant="vector_base", dtype="string"),
]


def _spec_case(variant, basename, num_shards):
    return Case("ShardedFilespec", {"basename": np.array(basename),
                                    "num_shards": np.array(num_shards, np.int32)},
                variant=variant, dtype="string")


CASES += [
    _spec_case("base", b"model.ckpt", 3),
    _spec_case("one", b"/tmp/dir/x", 1),
    _spec_case("wide", b"m", 1234567),
    _spec_case("zero", b"m", 0),
    Case("ShardedFilespec", {"basename": np.array(b"m"), "num_shards": np.array([2, 3],
                                                                                np.int32)},
         variant="vector_shards", dtype="string"),
]
