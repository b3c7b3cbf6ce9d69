"""File datasets (ops/file_dataset_ops.cc): TFRecordDataset, TextLineDataset, CSVDataset
(tf.data.experimental.CsvDataset). Each program writes small files with fixed contents into a
folder named from the case id under the system's temp dir, then reads them through a one-shot
iterator (elements fetched in order in one run, see dataset_ops.elements)."""

import gzip
import os
import zlib

import numpy as np

from conformance.cases.dataset_ops import elements
from conformance.program_util import example, tfrecord_bytes, tmpdir
from conformance.table import Case

CASES = []
UNCOVERED = {
    "IdxDataset": "TensorFlux-only source of IDX (MNIST) files; TensorFlow has no such op",
}
ITER = ("IteratorV2", "MakeIterator", "IteratorGetNext")

RECORDS = [b"first", b"", b"\x00\x01\xff binary", example({"x": {"f": [1.5, -2.0]},
                                                            "id": {"i": [7]}})]


def _write(folder, name, data, compression=""):
    if compression == "GZIP":
        data = gzip.compress(data, mtime=0)
    elif compression == "ZLIB":
        data = zlib.compress(data)
    path = os.path.join(folder, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _case(op, variant, files, make, n, dtype="string", end=True, covers=(), deviation=None):
    """files(folder) -> list of paths written; make(m, paths) -> dataset; n elements (and,
    with end, a case for n + 1: OutOfRangeError)."""
    cid = "%s/program%s/%s" % (op, "_" + variant if variant else "", dtype)
    covers = [c for c in tuple(covers) + ITER if c != op]

    def build(count, suffix):
        def program(m):
            paths = files(tmpdir(cid + suffix))
            return elements(m, make(m, paths), count)
        return program

    v = "program" + ("_" + variant if variant else "")
    out = [Case(op, variant=v, dtype=dtype, program=build(n, ""), covers=covers,
                deviation=deviation)]
    if end:
        out.append(Case(op, variant=v + "_end", dtype=dtype, program=build(n + 1, "_end"),
                        covers=covers))
    return out


# ---------------------------------------------------------------- TFRecordDataset

def _tfrecord_files(compression="", split=False):
    def files(folder):
        if split:
            return [_write(folder, "a.tfrecord", tfrecord_bytes(RECORDS[:2]), compression),
                    _write(folder, "b.tfrecord", tfrecord_bytes(RECORDS[2:]), compression)]
        return [_write(folder, "data.tfrecord", tfrecord_bytes(RECORDS), compression)]
    return files


def _tfrecord(compression=None, buffer_size=None):
    def make(m, paths):
        return m.data.TFRecordDataset(paths, compression_type=compression,
                                      buffer_size=buffer_size)
    return make


CASES += _case("TFRecordDataset", "", _tfrecord_files(), _tfrecord(), 4)
CASES += _case("TFRecordDataset", "two_files", _tfrecord_files(split=True), _tfrecord(), 4)
CASES += _case("TFRecordDataset", "gzip", _tfrecord_files("GZIP"), _tfrecord("GZIP"), 4)
CASES += _case("TFRecordDataset", "zlib", _tfrecord_files("ZLIB"), _tfrecord("ZLIB"), 4)
CASES += _case("TFRecordDataset", "buffer_size", _tfrecord_files(), _tfrecord("", 7), 4)
CASES += _case("TFRecordDataset", "bad_compression", _tfrecord_files(), _tfrecord("BZIP2"), 1,
               end=False, deviation="an unknown compression_type is INVALID_ARGUMENT; TF's "
               "TFRecordDataset logs it and reads the files uncompressed (its TextLineDataset "
               "and CSVDataset refuse it, as TensorFlux does)")
CASES += _case("TFRecordDataset", "empty_file", lambda d: [_write(d, "e.tfrecord", b"")],
               _tfrecord(), 0, end=False)
CASES += _case("TFRecordDataset", "missing_file",
               lambda d: [os.path.join(d, "missing.tfrecord")], _tfrecord(), 1, end=False)


def _corrupt(folder):
    data = bytearray(tfrecord_bytes(RECORDS[:2]))
    data[14] ^= 0xFF  # a byte of the first record's data: its CRC no longer matches
    return [_write(folder, "bad.tfrecord", bytes(data))]


def _truncated(folder):
    data = tfrecord_bytes(RECORDS[:2])
    return [_write(folder, "short.tfrecord", data[:-3])]


CASES += _case("TFRecordDataset", "corrupt", _corrupt, _tfrecord(), 1, end=False)


def _corrupt_then_good(folder):
    return _corrupt(folder) + [_write(folder, "good.tfrecord", tfrecord_bytes(RECORDS))]


# ignore_errors: the rest of the damaged file is skipped, the next file is read.
CASES += _case("TFRecordDataset", "ignore_errors", _corrupt_then_good,
               lambda m, paths: _tfrecord()(m, paths).apply(
                   m.data.experimental.ignore_errors()), 4, covers=("IgnoreErrorsDataset",))
CASES += _case("TFRecordDataset", "truncated", _truncated, _tfrecord(), 1, end=False)
# The first record of the truncated file is whole: it is read before the error.
CASES += _case("TFRecordDataset", "truncated_second", _truncated, _tfrecord(), 2, end=False)

# ---------------------------------------------------------------- TextLineDataset

TEXT = b"alpha\nbeta gamma\n\n  spaced  \nlast line without newline"


def _text(compression=None):
    def make(m, paths):
        return m.data.TextLineDataset(paths, compression_type=compression)
    return make


CASES += _case("TextLineDataset", "", lambda d: [_write(d, "t.txt", TEXT)], _text(), 5)
CASES += _case("TextLineDataset", "crlf", lambda d: [_write(d, "t.txt", b"a\r\nb\r\n\r\nc\r")],
               _text(), 4)
CASES += _case("TextLineDataset", "trailing_newline",
               lambda d: [_write(d, "t.txt", b"one\ntwo\n")], _text(), 2)
CASES += _case("TextLineDataset", "two_files", lambda d: [_write(d, "a.txt", b"a1\na2\n"),
                                                          _write(d, "b.txt", b"b1")],
               _text(), 3)
CASES += _case("TextLineDataset", "gzip", lambda d: [_write(d, "t.gz", TEXT, "GZIP")],
               _text("GZIP"), 5)
CASES += _case("TextLineDataset", "zlib", lambda d: [_write(d, "t.z", TEXT, "ZLIB")],
               _text("ZLIB"), 5)
CASES += _case("TextLineDataset", "bad_compression", lambda d: [_write(d, "t.txt", TEXT)],
               _text("BZIP2"), 1, end=False)
CASES += _case("TextLineDataset", "empty_file", lambda d: [_write(d, "e.txt", b"")], _text(),
               0, end=False)
CASES += _case("TextLineDataset", "utf8", lambda d: [_write(
    d, "u.txt", "grüße\n日本\n".encode())], _text(), 2)
CASES += _case("TextLineDataset", "missing_file", lambda d: [os.path.join(d, "missing.txt")],
               _text(), 1, end=False)

# ---------------------------------------------------------------- CSVDataset

CSV = b"1,2.5,abc,10\n-3,0.125,,20\n7,-1e3,\"quoted, with comma\",30\n"


def _csv(defaults, **kw):
    def make(m, paths):
        recs = [m.as_dtype(d) if isinstance(d, str) else d for d in defaults]
        return m.data.experimental.CsvDataset(paths, recs, **kw)
    return make



def _defaults(*items):
    """Column defaults: a dtype name (required column) or a one-element list (default)."""
    return list(items)


CASES += _case("CSVDataset", "", lambda d: [_write(d, "a.csv", CSV)],
               _csv(_defaults("int32", "float32", ["none"], "int64")), 3)
CASES += _case("CSVDataset", "float64", lambda d: [_write(d, "a.csv", CSV)],
               _csv(_defaults([np.int64(0)], [np.float64(0)], ["dflt"], [np.int32(-1)])), 3,
               "float64")
CASES += _case("CSVDataset", "header", lambda d: [_write(d, "a.csv", b"i,f,s,l\n" + CSV)],
               _csv(_defaults("int32", "float32", ["none"], "int64"), header=True), 3)
CASES += _case("CSVDataset", "field_delim", lambda d: [_write(
    d, "a.csv", b"1;x;2.5\n2;y;3.5\n")], _csv(_defaults("int32", "string", "float64"),
                                               field_delim=";"), 2)
CASES += _case("CSVDataset", "no_quote_delim", lambda d: [_write(
    d, "a.csv", b"1,\"a\"\n2,b\"c\n")], _csv(_defaults("int32", "string"),
                                            use_quote_delim=False), 2)
CASES += _case("CSVDataset", "na_value", lambda d: [_write(d, "a.csv", b"1,NA\nNA,2.5\n")],
               _csv(_defaults([np.int32(-9)], [np.float32(0.5)]), na_value="NA"), 2)
CASES += _case("CSVDataset", "select_cols", lambda d: [_write(d, "a.csv", CSV)],
               _csv(_defaults("int32", ["none"]), select_cols=[0, 2]), 3)
CASES += _case("CSVDataset", "gzip", lambda d: [_write(d, "a.csv.gz", CSV, "GZIP")],
               _csv(_defaults("int32", "float32", ["none"], "int64"), compression_type="GZIP"),
               3)
CASES += _case("CSVDataset", "zlib", lambda d: [_write(d, "a.csv.z", CSV, "ZLIB")],
               _csv(_defaults("int32", "float32", ["none"], "int64"), compression_type="ZLIB"),
               3)
CASES += _case("CSVDataset", "two_files", lambda d: [_write(d, "a.csv", b"1,a\n"),
                                                     _write(d, "b.csv", b"2,b\n3,c")],
               _csv(_defaults("int32", "string")), 3)
CASES += _case("CSVDataset", "missing_required", lambda d: [_write(d, "a.csv", b"1,\n")],
               _csv(_defaults("int32", "int32")), 1, end=False)
CASES += _case("CSVDataset", "bad_int", lambda d: [_write(d, "a.csv", b"1,x\n")],
               _csv(_defaults("int32", "int32")), 1, end=False)
CASES += _case("CSVDataset", "too_few_fields", lambda d: [_write(d, "a.csv", b"1,2\n")],
               _csv(_defaults("int32", "int32", [np.int32(0)])), 1, end=False)
CASES += _case("CSVDataset", "too_many_fields", lambda d: [_write(d, "a.csv", b"1,2,3\n")],
               _csv(_defaults("int32", "int32")), 1, end=False)
CASES += _case("CSVDataset", "empty_file", lambda d: [_write(d, "a.csv", b"")],
               _csv(_defaults("int32")), 0, end=False)
CASES += _case("CSVDataset", "crlf", lambda d: [_write(d, "a.csv", b"1,a\r\n2,b\r\n")],
               _csv(_defaults("int32", "string")), 2)
