"""Test helpers for TFRecord and TensorBoard event files, checked in pure Python, independently of
the C++ record code: each record is framed as TF writes it (uint64 length, masked CRC-32C of the
length, data, masked CRC-32C of the data; little-endian), and both CRCs are recomputed here.

    events = read_events(path)        # every record's CRCs checked, then parsed as Event protos
    scalars(events)["loss"]           # [(step, value), ...]
    graph_def(events)                 # the GraphDef written by FileWriter(graph=...), or None
"""

import glob
import os
import struct

import tensorflux as tx


def _crc32c_table():
    # CRC-32C (Castagnoli), reflected polynomial 0x82F63B78.
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    """CRC-32C of bytes (crc32c(b"123456789") == 0xE3069283)."""
    crc = 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """TFRecord's masked CRC: rotate right by 15 bits, add 0xA282EAD8 (mod 2^32)."""
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord_records(path):
    """The records of an uncompressed TFRecord file as a list of bytes. Raises ValueError naming
    the file and the record's offset on a truncated record, or a length or data CRC mismatch."""
    with open(path, "rb") as f:
        data = f.read()
    out, pos = [], 0
    while pos < len(data):
        if pos + 12 > len(data):
            raise ValueError("%s: truncated record header at offset %d" % (path, pos))
        (length,) = struct.unpack_from("<Q", data, pos)
        (length_crc,) = struct.unpack_from("<I", data, pos + 8)
        if length_crc != masked_crc32c(data[pos:pos + 8]):
            raise ValueError("%s: length CRC mismatch at offset %d" % (path, pos))
        if pos + 16 + length > len(data):
            raise ValueError("%s: truncated record at offset %d" % (path, pos))
        record = data[pos + 12:pos + 12 + length]
        (data_crc,) = struct.unpack_from("<I", data, pos + 12 + length)
        if data_crc != masked_crc32c(record):
            raise ValueError("%s: data CRC mismatch at offset %d" % (path, pos))
        out.append(record)
        pos += 16 + length
    return out


def event_files(logdir):
    """The event files (events.out.tfevents.*) directly in logdir, sorted."""
    return sorted(glob.glob(os.path.join(str(logdir), "events.out.tfevents.*")))


def read_events(path):
    """The Event protos of an event file. Every record's CRCs are checked here in Python and the
    file is read again through tx.train.summary_iterator (the C++ reader, which checks them too):
    both must give the same events. The first event must be the file_version header."""
    records = tfrecord_records(path)
    events = list(tx.train.summary_iterator(path))
    assert [e.SerializeToString() for e in events] == [
        tx.Event.FromString(r).SerializeToString() for r in records], path
    assert events and events[0].file_version.startswith("brain.Event:"), path
    return events


def scalars(events):
    """{tag: [(step, simple_value), ...]} of the Summary values with a simple_value."""
    out = {}
    for e in events:
        for v in e.summary.value:
            if v.WhichOneof("value") == "simple_value":
                out.setdefault(v.tag, []).append((e.step, v.simple_value))
    return out


def graph_def(events):
    """The GraphDef of the last graph event, or None."""
    found = None
    for e in events:
        if e.graph_def:
            found = tx.GraphDef.FromString(e.graph_def)
    return found
