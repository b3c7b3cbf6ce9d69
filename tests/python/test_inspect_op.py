"""tensorflux inspect --op NAME: where an op is defined, its kernels, gradient and cases."""

import os
import re
import subprocess
import sys

import pytest

from conftest import built_binary
from tensorflux.framework import op_def_registry

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from conformance import cases as cases_pkg  # noqa: E402


@pytest.fixture(scope="module")
def cli():
    return built_binary("tensorflux")


def inspect_op(cli, name):
    return subprocess.run([cli, "inspect", "--op", name], capture_output=True, text=True,
                          timeout=60)


def test_inspect_op_names_the_sources_and_cases(cli):
    out = inspect_op(cli, "MatMul")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    site = re.search(r"defined at: (src/tensorflux/ops/\S+\.cc):(\d+)", text)
    assert site, text
    with open(site.group(1)) as f:  # the line really registers MatMul
        assert '"MatMul"' in f.read().splitlines()[int(site.group(2)) - 1]
    assert "device='CPU'; T in [float]" in text
    assert re.search(r"registered at: src/tensorflux/kernels/cpu/matmul_op\.cc:\d+", text)
    assert re.search(r"gradient: registered at src/tensorflux/gradients/\S+:\d+", text)
    ids = [c.id for cs in cases_pkg.cases_by_family().values() for c in cs if c.op == "MatMul"]
    assert ids and all(i in text for i in ids)
    assert "conformance cases (%d)" % len(ids) in text


def test_inspect_op_refuses_an_unknown_op(cli):
    out = inspect_op(cli, "NoSuchOp")
    assert out.returncode != 0
    assert "NoSuchOp" in out.stderr


def test_every_op_defined_by_a_line_names_it(cli):
    """The build-time scan finds a definition line for the registered ops (the few registered
    from tables say so)."""
    missing = []
    for name in sorted(op_def_registry.get_registered_ops())[:400]:
        text = inspect_op(cli, name).stdout
        if "defined at: src/" not in text and "registered from a table" not in text:
            missing.append(name)
    assert not missing
