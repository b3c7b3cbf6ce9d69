"""The registered OpDefs, read once from the C++ op registry."""

import threading

from tensorflux import op_def_pb2
from tensorflux.framework import _pywrap

_lock = threading.Lock()
_registered_ops = None


def get_registered_ops():
    """{op name: OpDef} for every op registered in the C++ library."""
    global _registered_ops
    with _lock:
        if _registered_ops is None:
            op_list = op_def_pb2.OpList()
            op_list.ParseFromString(_pywrap.op_list())
            _registered_ops = {op.name: op for op in op_list.op}
        return _registered_ops


def get(name):
    """The OpDef of `name`, or None when no such op is registered."""
    return get_registered_ops().get(name)
