"""IDX files (the MNIST / Fashion-MNIST format) read whole with numpy: no tensorflux import, so
the PyTorch side of bench/peer uses it too. Layout: big-endian header 0, 0, type byte (0x08 =
uint8), rank; then rank uint32 dims; then the data, row-major."""

import gzip

import numpy as np


def read_idx(path):
    """The IDX file at `path` (gzip or plain) as a uint8 numpy array of its header's shape.
    ValueError naming the file when it is not IDX of unsigned bytes or its data length does not
    match the dims; OSError/EOFError from gzip for a cut or corrupt stream."""
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise ValueError("%s is not an IDX file of unsigned bytes" % path)
    rank = data[3]
    offset = 4 + 4 * rank
    if len(data) < offset:
        raise ValueError("%s: truncated IDX header" % path)
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    if len(data) - offset != int(np.prod(dims)):
        raise ValueError("%s: %d data bytes for %s" % (path, len(data) - offset, dims))
    return np.frombuffer(data, np.uint8, offset=offset).reshape(dims)
