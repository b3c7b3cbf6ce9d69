"""tx.io: tf.io's (TF 1.x) Example parsing and TFRecord files.

    with tx.io.TFRecordWriter("train.tfrecord") as w:
        w.write(tx.io.make_example({"image": raw_bytes, "label": 3}).SerializeToString())
    for record in tx.io.tf_record_iterator("train.tfrecord"):
        ...
    parsed = tx.io.parse_single_example(record_tensor, {
        "image": tx.io.FixedLenFeature([], tx.string),
        "label": tx.io.FixedLenFeature([], tx.int64)})

TFRecord files use TF's framing (length, masked CRC-32C of the length, data, masked CRC-32C of the
data), so files are exchangeable with TensorFlow. A truncated or corrupt record raises
DataLossError naming the file and the record's offset.
"""

import numpy as np

from tensorflux import _pywrap_tensorflux as _pw
from tensorflux import example_pb2
from tensorflux import feature_pb2
from tensorflux.framework.graph_io import write_graph  # noqa: F401
from tensorflux.framework.sparse_tensor import SparseTensor, SparseTensorValue  # noqa: F401
from tensorflux.ops.parsing_ops import (  # noqa: F401
    FixedLenFeature, VarLenFeature, decode_csv, parse_example, parse_single_example)


class TFRecordWriter:
    """Writes records to an (uncompressed) TFRecord file (tf.io.TFRecordWriter)."""

    def __init__(self, path, options=None):
        if options not in (None, ""):
            raise NotImplementedError("TFRecordWriter writes uncompressed files only "
                                      "(options=%r)" % (options,))
        self._w = _pw.RecordWriter(str(path))

    def write(self, record):
        """Appends one record (bytes; a str is UTF-8 encoded)."""
        self._w.write(record.encode() if isinstance(record, str) else bytes(record))

    def flush(self):
        self._w.flush()

    def close(self):
        self._w.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def tf_record_iterator(path, options=None, skip_corrupt=False):
    """Yields the records of a TFRecord file (plain or gzip) as bytes. options: None, or a
    compression type ("", "GZIP"; or an object with that compression_type): gzip is detected
    from the file either way; "ZLIB" is not supported (NotImplementedError). With skip_corrupt
    (a TensorFlux addition), records whose data CRC fails are skipped; a truncated record or bad
    length CRC ends the file."""
    compression = getattr(options, "compression_type", options)
    if compression not in (None, "", "GZIP", 0, 2):  # TFRecordCompressionType NONE, GZIP
        raise NotImplementedError("tx.io.tf_record_iterator: options with compression %r are "
                                  "not supported (plain and GZIP files only)" % (compression,))
    return _pw.RecordIterator(str(path), skip_corrupt)


def read_idx(path):
    """A whole IDX file (MNIST format, plain or gzip) as a numpy array of its dtype and dims."""
    return _pw.read_idx(str(path))


def _feature(value):
    """One tf.train.Feature from bytes / str / a float or int scalar or list / a numpy array."""
    f = feature_pb2.Feature()
    if isinstance(value, (bytes, str)):
        f.bytes_list.value.append(value.encode() if isinstance(value, str) else value)
        return f
    arr = np.asarray(value)
    if arr.dtype.kind in "SUO":
        f.bytes_list.value.extend(v.encode() if isinstance(v, str) else bytes(v)
                                  for v in arr.ravel())
    elif arr.dtype.kind in "iub":
        f.int64_list.value.extend(int(v) for v in arr.ravel())
    elif arr.dtype.kind == "f":
        f.float_list.value.extend(float(v) for v in arr.ravel())
    else:
        raise ValueError("cannot store a value of dtype %s in a tf.train.Feature" % arr.dtype)
    return f


def make_example(features):
    """A tf.train.Example from a dict name -> value: bytes / str become a BytesList, integers
    (and bools) an Int64List, floats a FloatList; arrays and lists are flattened."""
    ex = example_pb2.Example()
    for key, value in features.items():
        ex.features.feature[key].CopyFrom(
            value if isinstance(value, feature_pb2.Feature) else _feature(value))
    return ex
