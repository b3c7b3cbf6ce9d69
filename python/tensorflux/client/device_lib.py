"""tx.client.device_lib.list_local_devices(): the devices a session would have (TF 1.x's
tensorflow.python.client.device_lib).

Each is a DeviceAttributes proto (name, device_type, memory_limit, incarnation,
physical_device_desc) whose name is local, as TF's: "/device:CPU:0" (a session's
list_devices() gives full names). `session_config` (a tx.ConfigProto) picks them as for tx.Session:
device_count={"CPU": 4} lists four CPU devices; GPUs appear when the build has a GPU device.
"""

from tensorflux import config_pb2
from tensorflux import device_attributes_pb2
from tensorflux.framework import _pywrap


def list_local_devices(session_config=None):
    config = session_config if session_config is not None else config_pb2.ConfigProto()
    if not isinstance(config, config_pb2.ConfigProto):
        raise TypeError("session_config must be a tx.ConfigProto, but got %s" % type(config))
    out = []
    for raw in _pywrap.list_local_devices(config.SerializeToString()):
        attrs = device_attributes_pb2.DeviceAttributes()
        attrs.ParseFromString(raw)
        out.append(attrs)
    return out
