"""The extension is loaded with libgomp's spin bounded (framework/_pywrap.py): libgomp reads
OMP_WAIT_POLICY=ACTIVE and GOMP_SPINCOUNT=10000 (so it spins 1,000 pauses, not 100, once the
process has more OpenMP threads than cores); after a step whose GEMM ran on an OpenMP team, the
team's idle thread spins about 250 us, not libgomp's default of about 7.5 ms here; and the
variables are not left in the process's environment (which its children inherit). Each case runs
in a fresh interpreter (libgomp reads the environment once)."""

import json
import os
import subprocess
import sys

import pytest

import tensorflux as tx

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(tx.__file__)))

# Runs a 512 x 512 MatMul step (a fed operand: nothing to constant-fold) from one thread, then
# measures the process's CPU time over 50 ms sleeps that follow a step: the spinning of the
# team's idle thread is the only work then.
_SCRIPT = r"""
import json, os, time
import numpy as np
import tensorflux as tx
g = tx.Graph()
with g.as_default():
    a = tx.placeholder(tx.float32, [512, 512])
    out = tx.matmul(a, a)[0, 0]
feed = {a: np.full((512, 512), 0.5, np.float32)}
cpu = []
with tx.Session(graph=g) as sess:
    assert abs(float(sess.run(out, feed)) - 128.0) < 1e-3
    for _ in range(5):
        sess.run(out, feed)
        t0 = time.process_time()
        time.sleep(0.05)
        cpu.append(time.process_time() - t0)
print(json.dumps({"cpu_ms": sorted(cpu)[2] * 1e3, "env": os.environ.get("GOMP_SPINCOUNT")}))
"""


def _env(env_updates):
    env = dict(os.environ, PYTHONPATH=_PACKAGE_PARENT)
    for k in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY", "OMP_DISPLAY_ENV"):
        env.pop(k, None)
    env.update(env_updates)
    return env


def _run(env_updates):
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=_env(env_updates),
                         capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _libgomp_settings(env_updates):
    """(what libgomp read at load, as OMP_DISPLAY_ENV=VERBOSE prints it: {name: value}, the two
    variables in the process's environment after `import tensorflux`)."""
    script = ("import json, os, tensorflux\n"
              "print(json.dumps([os.environ.get(k) for k in ('OMP_WAIT_POLICY', "
              "'GOMP_SPINCOUNT')]))")
    out = subprocess.run([sys.executable, "-c", script],
                         env=_env(dict(env_updates, OMP_DISPLAY_ENV="VERBOSE")),
                         capture_output=True, text=True, timeout=120, check=True)
    shown = {}
    for line in out.stderr.splitlines():
        name, sep, value = line.strip().partition(" = ")
        if sep:
            shown[name] = value.strip("'")
    return shown, json.loads(out.stdout.strip().splitlines()[-1])


def test_libgomp_reads_active_with_a_bounded_spin():
    shown, after = _libgomp_settings({})
    assert shown.get("OMP_WAIT_POLICY") == "ACTIVE", shown
    assert shown.get("GOMP_SPINCOUNT") == "10000", shown
    assert after == [None, None]


def test_a_users_wait_policy_is_left_alone():
    shown, after = _libgomp_settings({"OMP_WAIT_POLICY": "PASSIVE"})
    assert shown.get("OMP_WAIT_POLICY") == "PASSIVE", shown
    assert shown.get("GOMP_SPINCOUNT") == "0", shown  # PASSIVE's own: nothing added
    assert after == ["PASSIVE", None]



# After `import tensorflux`: whether the calling thread's ParallelFor would run on its OpenMP team
# once it has run oneDNN (core/openmp_team.h, through the library's exported symbols).
_TEAM_SCRIPT = r"""
import ctypes, json, os, sys
if sys.argv[1] == "preload":
    ctypes.CDLL("libgomp.so.1")
import tensorflux
with open("/proc/self/maps") as maps:
    path = next(l.split()[-1] for l in maps if l.rstrip().endswith("libtensorflux.so"))
lib = ctypes.CDLL(path)
lib._ZN10tensorflux14NoteOpenMpTeamEv()
has = lib._ZN10tensorflux13HasOpenMpTeamEv
has.restype = ctypes.c_bool
print(json.dumps(bool(has())))
"""


def _team_parallel_for(preload):
    out = subprocess.run([sys.executable, "-c", _TEAM_SCRIPT, "preload" if preload else "-"],
                         env=_env({}), capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_libgomp_loaded_first_keeps_its_settings_and_the_pool():
    """Another module loaded libgomp before tensorflux (its defaults read already): the package
    sets neither variable, so the library does not take ACTIVE for libgomp's policy and keeps
    ParallelFor on its pool, as with sleeping team threads it should."""
    if not _team_parallel_for(False):
        pytest.skip("built without OpenMP or oneDNN")
    assert not _team_parallel_for(True)

def test_idle_team_spins_briefly_and_the_environment_is_unchanged():
    got = _run({})
    # 10,000 pauses: under a millisecond of CPU while the process sleeps.
    assert got["cpu_ms"] < 3.0, got
    assert got["env"] is None


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="an OpenMP team of one thread never spins")
def test_the_users_setting_wins():
    """With GOMP_SPINCOUNT set by the user the package leaves it: libgomp's long spin shows as
    CPU time while the process sleeps (about 8-11 ms of each 50 ms here, a spinning thread
    that gets a core). This is the control that makes the first test's figure mean something."""
    got = _run({"GOMP_SPINCOUNT": "300000"})
    assert got["env"] == "300000"
    assert got["cpu_ms"] > 3.0, got
