"""tx.train.LocalCluster: real tensorflux-server processes start on the addresses of its spec
(the master lists every task's device) and stop() leaves no process; a task killed with SIGKILL
restarts on its address; a server that exits at once, hangs, or cannot be executed is a
LocalClusterError naming the task and the end of its log, with nothing left running; a port
taken before the server binds is retried on new ports; a client killed with SIGKILL takes its
servers with it (PR_SET_PDEATHSIG)."""

import os
import signal
import subprocess
import sys
import time

import pytest

import tensorflux as tx

SERVER = tx.train.LocalCluster.server_binary()
pytestmark = pytest.mark.skipif(SERVER is None, reason="tensorflux-server is not built")


def _alive(pid):
    """The process exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def _wait_gone(pids, seconds=10.0):
    """The pids of `pids` still alive after `seconds`."""
    deadline = time.monotonic() + seconds
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


def _task_devices(target):
    """{(job, task)} of the devices the master at `target` lists."""
    with tx.Graph().as_default(), tx.Session(target) as sess:
        specs = [tx.DeviceSpec.from_string(d.name) for d in sess.list_devices()]
    return {(s.job, s.task) for s in specs}


def _script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_start_accessors_and_stop_leave_no_process():
    cluster = tx.train.LocalCluster(num_workers=2, num_ps=1)
    with cluster:
        assert cluster.tasks() == [("ps", 0), ("worker", 0), ("worker", 1)]
        assert sorted(cluster.spec) == ["ps", "worker"] and len(cluster.spec["worker"]) == 2
        addresses = [cluster.address(*t) for t in cluster.tasks()]
        assert len(set(addresses)) == 3 and all(a.startswith("127.0.0.1:") for a in addresses)
        assert cluster.cluster_spec().as_dict() == cluster.spec
        assert cluster.target() == "grpc://" + cluster.spec["worker"][0]
        assert cluster.target("ps", 0) == "grpc://" + cluster.spec["ps"][0]
        pids = cluster.pids()
        assert pids == [cluster.process(*t).pid for t in cluster.tasks()]
        assert all(_alive(p) for p in pids)
        # Every task serves on its address: each master sees the devices of all three tasks.
        for job, task in (("worker", 0), ("ps", 0)):
            assert _task_devices(cluster.target(job, task)) == set(cluster.tasks())
        log_dir = cluster.log_dir
        for job, task in cluster.tasks():
            with open(cluster.log_path(job, task)) as f:
                assert "listening on grpc://" + cluster.address(job, task) in f.read()
        with pytest.raises(ValueError, match="no task /job:worker/task:2"):
            cluster.target("worker", 2)
    # Reaped (not even a zombie is left), the temporary log directory removed, idempotent.
    assert _wait_gone(pids, 0) == []
    assert not os.path.exists(log_dir) and cluster.pids() == []
    cluster.stop()


def test_killed_task_restarts_on_its_address(tmp_path):
    with tx.train.LocalCluster(num_workers=2, log_dir=str(tmp_path)) as cluster:
        assert "ps" not in cluster.spec
        old = cluster.process("worker", 1).pid
        assert cluster.kill("worker", 1) == -signal.SIGKILL
        assert not _alive(old)
        cluster.restart("worker", 1)
        new = cluster.process("worker", 1)
        assert new.pid != old and new.poll() is None
        # The same address: worker 0's master reaches the new server.
        with tx.Graph().as_default():
            with tx.device("/job:worker/task:1"):
                y = tx.constant([1.5, -2.0]) * 3.0
            with tx.Session(cluster.target()) as sess:
                assert sess.run(y).tolist() == [4.5, -6.0]
        with open(cluster.log_path("worker", 1)) as f:  # both starts, in one log
            assert f.read().count("listening on grpc://" + cluster.address("worker", 1)) == 2
        # Restarting a running task stops it first.
        cluster.restart("worker", 0)
        assert _task_devices(cluster.target()) == set(cluster.tasks())
        pids = cluster.pids()
    assert _wait_gone(pids, 0) == []


def test_server_that_exits_at_once_names_the_task_and_its_log(tmp_path):
    with pytest.raises(tx.train.LocalClusterError) as info:
        tx.train.LocalCluster(num_workers=1, num_ps=1, log_dir=str(tmp_path),
                              server_args=lambda job, task: ["--bogus"] if job == "ps" else [])
    e = info.value
    assert (e.job, e.task) == ("ps", 0) and e.log_path == str(tmp_path / "ps0.log")
    assert "/job:ps/task:0" in str(e) and "exited with status 1" in str(e)
    assert "unknown flag or missing value: '--bogus'" in e.log_tail and e.log_tail in str(e)


def test_bad_binaries(tmp_path):
    with pytest.raises(tx.train.LocalClusterError, match="/nonexistent/tensorflux-server is not"
                                                         " an executable file"):
        tx.train.LocalCluster(server_bin="/nonexistent/tensorflux-server")
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x00\x01 not a program")
    garbage.chmod(0o755)
    with pytest.raises(tx.train.LocalClusterError,
                       match=r"cannot start /job:worker/task:0 \(.*garbage\): .*Exec format"):
        tx.train.LocalCluster(server_bin=str(garbage), log_dir=str(tmp_path))
    crash = _script(tmp_path, "crash", 'echo "boom: $*" >&2\nexit 3\n')
    with pytest.raises(tx.train.LocalClusterError) as info:
        tx.train.LocalCluster(server_bin=crash, log_dir=str(tmp_path), attempts=3)
    assert "/job:worker/task:0" in str(info.value) and "exited with status 3" in str(info.value)
    assert info.value.log_tail.startswith("boom: --cluster worker=127.0.0.1:")
    # Not retried (no port was taken): one start, one line.
    assert (tmp_path / "worker0.log").read_text().count("boom") == 1
    with pytest.raises(ValueError, match="num_workers >= 1"):
        tx.train.LocalCluster(num_workers=0)


def test_server_that_does_not_listen_times_out_and_is_killed(tmp_path):
    hang = _script(tmp_path, "hang", 'echo $$ > "%s"\necho starting >&2\nexec sleep 60\n'
                   % (tmp_path / "pid"))
    t0 = time.monotonic()
    with pytest.raises(tx.train.LocalClusterError,
                       match=r"(?s)/job:worker/task:0 .* did not listen within 0.5 s.*starting"):
        tx.train.LocalCluster(server_bin=hang, log_dir=str(tmp_path), start_timeout=0.5,
                              stop_grace=0.5)
    assert time.monotonic() - t0 < 5
    assert _wait_gone([int((tmp_path / "pid").read_text())], 0) == []


def test_taken_port_is_retried_on_new_ports(tmp_path):
    # The first start of the task fails as the server does when its port is taken; the wrapper
    # runs the real server from then on.
    marker = tmp_path / "failed_once"
    wrapper = _script(tmp_path, "flaky", 'if [ ! -e "%s" ]; then touch "%s"\n'
                      'echo "tensorflux-server: UNAVAILABLE: cannot listen on 127.0.0.1:1 '
                      '(address in use, or not an address of this machine)" >&2; exit 1; fi\n'
                      'exec "%s" "$@"\n' % (marker, marker, SERVER))
    with pytest.raises(tx.train.LocalClusterError, match="address in use"):
        tx.train.LocalCluster(server_bin=wrapper, log_dir=str(tmp_path), attempts=1)
    marker.unlink()
    with tx.train.LocalCluster(server_bin=wrapper, log_dir=str(tmp_path), attempts=2) as cluster:
        assert _task_devices(cluster.target()) == {("worker", 0)}
        with open(cluster.log_path("worker", 0)) as f:
            text = f.read()
        assert text.count("address in use") == 2 and text.count("listening on") == 1


def test_servers_die_with_a_killed_client(tmp_path):
    child = ("import sys, time, tensorflux as tx\n"
             "c = tx.train.LocalCluster(num_workers=1, num_ps=1, log_dir=sys.argv[1])\n"
             "print(*c.pids(), flush=True)\n"
             "time.sleep(120)\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(tx.__file__)))
    proc = subprocess.Popen([sys.executable, "-c", child, str(tmp_path)], env=env,
                            stdout=subprocess.PIPE, text=True)
    pids = []
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
        proc.kill()  # no atexit, no __exit__: only the kernel can stop the servers now
        proc.wait()
        assert _wait_gone(pids) == []
    finally:
        proc.kill()
        proc.wait()
        for pid in _wait_gone(pids, 0):  # a failed test leaves no server either
            os.kill(pid, signal.SIGKILL)
    with open(str(tmp_path / "ps0.log")) as f:
        assert "SIGTERM received" in f.read()
