"""Send/receive ops (ops/sendrecv_ops.cc): _Send, _Recv, _HostSend, _HostRecv.

Internal ops (TF has the same four): the partitioner puts a _Send/_Recv pair on every edge
between nodes on different devices. The programs here run in a session with two CPU devices
(ConfigProto device_count {"CPU": 2}, which TF's DirectSession and TensorFlux's LocalSession
both honour) and place producers and consumers on /cpu:0 and /cpu:1, so tensors of several
dtypes and a control edge cross devices."""

import numpy as np

from conformance.table import Case

TWO_CPUS = {"device_count": {"CPU": 2}}


def _cross_device(m):
    with m.device("/cpu:0"):
        x = m.placeholder(m.float32, shape=[2, 3])
        a = x * 2.0
        s = m.constant(np.array([b"ab", b"", b"c"]))
        i = m.constant(np.array([1, -2, 3], np.int64))
        b = m.constant(np.array([True, False]))
        e = m.zeros([0, 2], m.float64)
    with m.device("/cpu:1"):
        y = a + 1.0
        s2 = m.identity(s)
        i2 = i * 3
        b2 = m.logical_not(b)
        e2 = m.identity(e)
    with m.device("/cpu:0"):
        z = y * y
    return [y, z, s2, i2, b2, e2], {x: np.arange(6, dtype=np.float32).reshape(2, 3)}, []


def _control_edge(m):
    # A control dependency across devices (a dummy tensor is sent for it) and a fan-out of one
    # tensor to several consumers on the other device.
    with m.device("/cpu:0"):
        c = m.constant(np.array([1.0, 2.0], np.float32))
        d = m.identity(c)
    with m.device("/cpu:1"):
        with m.control_dependencies([d]):
            f = m.constant(np.array([5, 6], np.int32))
        g = c + 1.0
        h = c * 2.0
    return [f, g, h], {}, []


CASES = [
    Case("_Send", variant="program_two_cpus", program=_cross_device, config=TWO_CPUS,
         covers=("_Send", "_Recv")),
    Case("_Send", variant="program_control_edge", program=_control_edge, config=TWO_CPUS,
         covers=("_Send", "_Recv")),
]

_HOST = ("TensorFlux's partitioner emits it only for host-memory tensors on a device with its own "
         "memory (a GPU), and the oracle runs TF on CPU only; between two CPU devices TF 2.15 "
         "uses it for string tensors (program_two_cpus' string edge), which TensorFlux sends "
         "with _Send/_Recv: same values (docs/TF_DIFFERENCES.md)")
UNCOVERED = {"_HostSend": _HOST, "_HostRecv": _HOST}
