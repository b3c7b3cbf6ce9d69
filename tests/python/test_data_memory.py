"""Memory is bounded by the buffers asked for (issue 5): a generated TFRecord file goes through
TFRecordDataset + shuffle(10000) + map(parse_single_example) + batch + prefetch in a fresh
process, whose peak RSS (VmHWM of /proc/self/status) must stay under 300 MB.

The file is TX_MEMBOUND_MB megabytes (default 128, a few seconds here; the issue's 1 GiB run is
`TX_MEMBOUND_MB=1024`, its figure is in docs/PERFORMANCE.md). Records are ~1 KB, so even the
default file holds several times the 10000-record shuffle buffer: the pipeline must stream."""

import os
import subprocess
import sys

import pytest

import tensorflux as tx

_FLOATS = 256  # per record: ~1 KB of float list
_DISTINCT = 251  # record i holds label i % 251 and x = [i % 251] * 256
_LIMIT_KB = 300 * 1024

_CHILD = r"""
import sys
import numpy as np
import tensorflux as tx
path, floats = sys.argv[1], int(sys.argv[2])
spec = {"x": tx.io.FixedLenFeature([floats], tx.float32),
        "label": tx.io.FixedLenFeature([], tx.int64)}
ds = (tx.data.TFRecordDataset(path).shuffle(10000, seed=3)
      .map(lambda r: tx.io.parse_single_example(r, spec), num_parallel_calls=2)
      .batch(64).prefetch(2))
nxt = tx.data.make_one_shot_iterator(ds).get_next()
n = label_sum = 0
consistent = True
with tx.Session() as sess:
    while True:
        try:
            b = sess.run(nxt)
        except tx.errors.OutOfRangeError:
            break
        n += len(b["label"])
        label_sum += int(b["label"].sum())
        consistent &= bool((b["x"] == b["label"][:, None].astype(np.float32)).all())
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
print(n, label_sum, int(consistent), hwm)
"""


def test_shuffle_map_batch_prefetch_peak_rss_is_bounded(tmp_path):
    mb = int(os.environ.get("TX_MEMBOUND_MB", "128"))
    templates = [tx.io.make_example({"x": [float(k)] * _FLOATS, "label": k}).SerializeToString()
                 for k in range(_DISTINCT)]
    count = mb * (1 << 20) // len(templates[0])
    assert count > 3 * 10000  # several shuffle buffers' worth
    path = tmp_path / "big.tfrecord"
    with tx.io.TFRecordWriter(str(path)) as w:
        for i in range(count):
            w.write(templates[i % _DISTINCT])
    assert path.stat().st_size >= mb * (1 << 20)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(_FLOATS)], env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    n, label_sum, consistent, hwm_kb = (int(v) for v in proc.stdout.split())
    assert n == count
    assert label_sum == sum(i % _DISTINCT for i in range(count))
    assert consistent == 1
    print(f"{mb} MB file, {count} records: peak RSS {hwm_kb / 1024:.0f} MB")
    assert hwm_kb < _LIMIT_KB, f"peak RSS {hwm_kb} kB for a {mb} MB file"
