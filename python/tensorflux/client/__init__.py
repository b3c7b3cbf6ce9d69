"""Sessions, the local device list and step timelines."""

from tensorflux.client import device_lib  # noqa: F401
from tensorflux.client import timeline  # noqa: F401
