"""File source datasets (TF 1.x's tf.data.TFRecordDataset / TextLineDataset) and
tx.data.experimental.IdxDataset. Files are streamed by the C++ readers (src/tensorflux/io; an IDX
file of at most 256 MiB decoded is decoded once and kept): a truncated or corrupt TFRecord is
DataLossError from get_next naming the file and offset.
"""

import gzip
import struct

import numpy as np


from tensorflux.data.dataset_ops import Dataset
from tensorflux.framework import dtypes
from tensorflux.framework import ops
from tensorflux.framework import tensor_shape
from tensorflux.framework.op_def_library import apply_op
from tensorflux.ops import array_ops


def _files_dataset(op, filenames, compression_type, buffer_size, num_parallel_reads=None,
                   name=None):
    """The `op` dataset of `filenames`; with num_parallel_reads (an int or AUTOTUNE), as TF:
    num_parallel_reads files read at once and their records interleaved one at a time, in a
    deterministic order (file 0's first record, file 1's first, ..., file 0's second, ...)."""
    if num_parallel_reads is not None:
        files = Dataset.from_tensor_slices(array_ops.reshape(
            ops.convert_to_tensor(filenames, dtype=dtypes.string), np.int32([-1])))
        return files.interleave(
            lambda f: _files_dataset(op, f, compression_type, buffer_size),
            cycle_length=num_parallel_reads, block_length=1,
            num_parallel_calls=num_parallel_reads, deterministic=True, name=name)
    with ops.name_scope(op):
        variant = apply_op(
            op, filenames=ops.convert_to_tensor(filenames, dtype=dtypes.string),
            compression_type=ops.convert_to_tensor(compression_type or "", dtype=dtypes.string),
            buffer_size=ops.convert_to_tensor(buffer_size or 0, dtype=dtypes.int64), name=name)
    return Dataset(variant, dtypes.string, tensor_shape.TensorShape([]))


def TFRecordDataset(filenames, compression_type=None, buffer_size=None,  # noqa: N802
                    num_parallel_reads=None, name=None):
    """The records (scalar strings) of one or more TFRecord files, in order (with
    num_parallel_reads, interleaved: see _files_dataset)."""
    return _files_dataset("TFRecordDataset", filenames, compression_type, buffer_size,
                          num_parallel_reads, name)


def TextLineDataset(filenames, compression_type=None, buffer_size=None,  # noqa: N802
                    num_parallel_reads=None, name=None):
    """The lines (scalar strings, without "\\n" / "\\r\\n") of one or more text files (with
    num_parallel_reads, interleaved: see _files_dataset)."""
    return _files_dataset("TextLineDataset", filenames, compression_type, buffer_size,
                          num_parallel_reads, name)


_IDX_TYPES = {0x08: dtypes.uint8, 0x09: dtypes.int8, 0x0B: dtypes.int16, 0x0C: dtypes.int32,
              0x0D: dtypes.float32, 0x0E: dtypes.float64}


def _idx_spec(path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
        head = f.read(4)
        if len(head) < 4 or head[0] or head[1] or head[2] not in _IDX_TYPES or not head[3]:
            raise ValueError("'%s' is not an IDX file (header %r)" % (path, head))
        dims = struct.unpack(">%dI" % head[3], f.read(4 * head[3]))
    return _IDX_TYPES[head[2]], tensor_shape.TensorShape(list(dims[1:]))


def IdxDataset(path):  # noqa: N802
    """One element per item of an IDX file (plain or gzip): e.g. a uint8 [28, 28] image of
    train-images-idx3-ubyte.gz or a uint8 scalar label of train-labels-idx1-ubyte.gz. The
    header is read now, to give the element's dtype and shape. A file of at most 256 MiB
    decoded is decoded once per session and kept (elements are slices of it, re-initialized
    iterators reuse it); larger ones are streamed item by item."""
    dtype, shape = _idx_spec(str(path))
    with ops.name_scope("IdxDataset"):
        variant = apply_op("IdxDataset",
                           filename=ops.convert_to_tensor(str(path), dtype=dtypes.string),
                           output_types=[dtype], output_shapes=[shape])
    return Dataset(variant, dtype, shape)



def CsvDataset(filenames, record_defaults, compression_type=None, buffer_size=None,  # noqa: N802
               header=False, field_delim=",", use_quote_delim=True, na_value="",
               select_cols=None, exclude_cols=None):
    """One tuple of scalars per CSV line (tf.data.experimental.CsvDataset): record_defaults[i]
    is column i's dtype (an empty, required column) or a one-element default value. Bad lines
    raise InvalidArgumentError from get_next naming the file and line. select_cols: the
    (sorted) columns read; exclude_cols: the (sorted) columns left out, the others read (as TF,
    not both)."""
    if select_cols is not None and exclude_cols is not None:
        raise ValueError("Either select_cols or exclude_cols should be empty")
    if exclude_cols is not None:
        excluded = [int(c) for c in exclude_cols]
        if excluded != sorted(set(excluded)) or (excluded and excluded[0] < 0):
            raise ValueError("exclude_cols should be sorted in ascending order, without "
                             "duplicates or negative indices, got %r" % (exclude_cols,))
        total = len(record_defaults) + len(excluded)
        select_cols = [c for c in range(total) if c not in set(excluded)]
    defaults = []
    for d in record_defaults:
        if isinstance(d, dtypes.DType):
            d = ops.convert_to_tensor(np.zeros([0], object if d == dtypes.string
                                               else d.as_numpy_dtype), dtype=d)
        defaults.append(ops.convert_to_tensor(d))
    types = tuple(d.dtype.base_dtype for d in defaults)
    shapes = tuple(tensor_shape.TensorShape([]) for _ in defaults)
    with ops.name_scope("CSVDataset"):
        variant = apply_op(
            "CSVDataset", filenames=ops.convert_to_tensor(filenames, dtype=dtypes.string),
            compression_type=ops.convert_to_tensor(compression_type or "", dtype=dtypes.string),
            buffer_size=ops.convert_to_tensor(buffer_size or 0, dtype=dtypes.int64),
            header=ops.convert_to_tensor(bool(header), dtype=dtypes.bool),
            field_delim=ops.convert_to_tensor(field_delim, dtype=dtypes.string),
            use_quote_delim=ops.convert_to_tensor(bool(use_quote_delim), dtype=dtypes.bool),
            na_value=ops.convert_to_tensor(na_value, dtype=dtypes.string),
            select_cols=ops.convert_to_tensor(np.asarray(select_cols or [], np.int64),
                                              dtype=dtypes.int64),
            record_defaults=defaults, output_types=list(types), output_shapes=list(shapes))
    return Dataset(variant, types, shapes)
