"""Sessions and the local device list."""

from tensorflux.client import device_lib  # noqa: F401
