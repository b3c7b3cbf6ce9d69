"""Device specifications (TF 1.x's tf.DeviceSpec) and how nested tx.device scopes combine.

A specification names any of job, replica, task, device type and index:
"/job:worker/replica:0/task:1/device:GPU:0", "/device:CPU:1", "/cpu:0", "/gpu:1", "CPU:0",
"/job:ps". Parsing is the engine's (devices/device_name_utils.h), so Python and the Placer
accept the same strings; a malformed one is a ValueError. The canonical spelling (to_string)
is "/job:J/replica:R/task:T/device:TYPE:N" with absent fields left out ("/device:CPU:*" for a
type without an index).
"""

import functools

from tensorflux.framework import _pywrap
from tensorflux.framework import errors


@functools.lru_cache(maxsize=1024)
def _parse(spec):
    try:
        return _pywrap.parse_device_name(spec)
    except errors.InvalidArgumentError as e:
        raise ValueError(e.message) from None


def _type_name(device_type):
    if device_type is None:
        return None
    return device_type.upper() if device_type.lower() in ("cpu", "gpu") else device_type


class DeviceSpec:
    """A (possibly partial) device specification, mutable as TF 1.x's DeviceSpec."""

    __slots__ = ("job", "replica", "task", "_device_type", "device_index")

    def __init__(self, job=None, replica=None, task=None, device_type=None, device_index=None):
        self.job = job
        self.replica = None if replica is None else int(replica)
        self.task = None if task is None else int(task)
        self._device_type = _type_name(device_type)
        self.device_index = None if device_index is None else int(device_index)

    @property
    def device_type(self):
        return self._device_type

    @device_type.setter
    def device_type(self, value):
        self._device_type = _type_name(value)

    @classmethod
    def from_string(cls, spec):
        """A DeviceSpec from a specification string; ValueError when it is malformed."""
        return cls(*_parse(spec or ""))

    def parse_from_string(self, spec):
        """Replaces every field with those of `spec` (TF 1.x); returns self."""
        (self.job, self.replica, self.task, self._device_type,
         self.device_index) = _parse(spec or "")
        return self

    def merge_from(self, dev):
        """Takes every field that `dev` sets (dev's win over self's)."""
        for field in ("job", "replica", "task", "device_type", "device_index"):
            value = getattr(dev, field)
            if value is not None:
                setattr(self, field, value)

    def make_merged_spec(self, dev):
        """A copy of self with `dev` merged in."""
        out = DeviceSpec(self.job, self.replica, self.task, self.device_type, self.device_index)
        out.merge_from(dev)
        return out

    def to_string(self):
        s = ""
        if self.job is not None:
            s += "/job:" + self.job
        if self.replica is not None:
            s += "/replica:%d" % self.replica
        if self.task is not None:
            s += "/task:%d" % self.task
        if self.device_type is not None or self.device_index is not None:
            index = "*" if self.device_index is None else str(self.device_index)
            s += "/device:%s:%s" % (self.device_type or "*", index)
        return s

    def _fields(self):
        return (self.job, self.replica, self.task, self.device_type, self.device_index)

    def __eq__(self, other):
        return isinstance(other, DeviceSpec) and self._fields() == other._fields()

    def __hash__(self):
        return hash(self._fields())

    def __repr__(self):
        return "DeviceSpec(%r)" % self.to_string()


def canonical_name(device):
    """The canonical string of a DeviceSpec, a specification string or None ("")."""
    if device is None:
        return ""
    if isinstance(device, DeviceSpec):
        return device.to_string()
    return DeviceSpec.from_string(device).to_string()


def merge_device(outer, inner):
    """`outer` (a scope's specification) filled in under `inner` (what the op has so far): the
    fields `inner` sets win, the others come from `outer`. Both are strings."""
    spec = DeviceSpec.from_string(outer)
    spec.merge_from(DeviceSpec.from_string(inner))
    return spec.to_string()
