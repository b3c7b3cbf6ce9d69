"""tensorflux's import of its C++ extension: a missing extension is an ImportError that says to
build it; a Ctrl-C while the extension initializes (pybind11 turns it into ImportError
"initialization failed", caused by the KeyboardInterrupt) stays a KeyboardInterrupt."""

import os
import subprocess
import sys

import tensorflux as tx

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(tx.__file__)))

# Replaces the extension module by one whose import fails as `how` says, then imports tensorflux.
_SCRIPT = r"""
import importlib.abc, importlib.util, sys
how = sys.argv[1]
class Failing(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name == "tensorflux._pywrap_tensorflux":
            return importlib.util.spec_from_loader(name, self)
        return None
    def create_module(self, spec):
        if how == "interrupt":
            try:
                raise KeyboardInterrupt()
            except KeyboardInterrupt as e:
                raise ImportError("initialization failed") from e
        raise ImportError("libsomething.so: cannot open shared object file")
    def exec_module(self, module):
        pass
sys.meta_path.insert(0, Failing())
try:
    import tensorflux
except KeyboardInterrupt:
    print("KeyboardInterrupt")
except ImportError as e:
    print("ImportError: %s" % e)
"""


def _import_failing(how):
    env = dict(os.environ, PYTHONPATH=_PACKAGE_PARENT)
    return subprocess.run([sys.executable, "-c", _SCRIPT, how], capture_output=True, text=True,
                          env=env, timeout=60, check=True).stdout.strip()


def test_missing_extension_says_to_build_it():
    out = _import_failing("missing")
    assert out.startswith("ImportError: tensorflux: cannot load the C++ extension"), out
    assert "libsomething.so" in out and "make build" in out


def test_interrupt_while_loading_stays_an_interrupt():
    assert _import_failing("interrupt") == "KeyboardInterrupt"
