"""A cluster of tensorflux-server processes (ps + 2 workers, free loopback ports) trained through
tx.train.MonitoredTrainingSession over grpc://: a worker killed with SIGKILL mid-training and
restarted on its port; the session recovers from the latest checkpoint and training ends at the
expected global_step with a checkpoint that restores."""

import os
import signal
import socket
import subprocess
import time

import numpy as np
import pytest

import tensorflux as tx

SERVER = os.path.join(os.path.dirname(tx.__file__), "..", "..", "bin", "tensorflux-server")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(spec, job, task, log_dir):
    log = open(os.path.join(log_dir, "%s%d.log" % (job, task)), "ab")
    p = subprocess.Popen([SERVER, "--cluster", spec, "--job", job, "--task", str(task)],
                         stdout=subprocess.DEVNULL, stderr=log)
    path = log.name
    deadline = time.time() + 60
    while time.time() < deadline:
        with open(path, "rb") as f:
            if f.read().count(b"listening on") > 0:
                return p
        if p.poll() is not None:
            raise RuntimeError(open(path).read())
        time.sleep(0.05)
    raise RuntimeError("server did not start: " + open(path).read())


@pytest.mark.skipif(not os.path.exists(SERVER), reason="build/bin/tensorflux-server not built")
def test_worker_killed_and_restarted_during_training(tmp_path):
    ports = [_free_port() for _ in range(3)]
    spec = "ps=127.0.0.1:%d;worker=127.0.0.1:%d,127.0.0.1:%d" % tuple(ports)
    procs = {("ps", 0): _start(spec, "ps", 0, str(tmp_path)),
             ("worker", 0): _start(spec, "worker", 0, str(tmp_path)),
             ("worker", 1): _start(spec, "worker", 1, str(tmp_path))}
    try:
        g = tx.Graph()
        with g.as_default():
            step = tx.train.get_or_create_global_step()
            with tx.device("/job:ps/task:0"):
                w = tx.Variable([1.0, -2.0], name="w")
            x = tx.constant([0.5, 0.25])
            with tx.device("/job:worker/task:1"):
                loss = tx.reduce_sum(tx.square(w * x - 1.0))
            train = tx.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
            check_saver = tx.train.Saver()  # before the session finalizes the graph
        ckpt = str(tmp_path / "ckpt")
        last = 12
        config = tx.ConfigProto(operation_timeout_in_ms=20000)
        killed = False
        after_kill = []
        with g.as_default():
            with tx.train.MonitoredTrainingSession(
                    master="grpc://127.0.0.1:%d" % ports[1], is_chief=True, checkpoint_dir=ckpt,
                    save_checkpoint_steps=3, config=config,
                    hooks=[tx.train.StopAtStepHook(last_step=last)]) as sess:
                while not sess.should_stop():
                    sess.run(train)
                    if sess.should_stop():
                        break
                    done = sess.run(step)  # the global step after this training step
                    if killed:
                        after_kill.append(done)
                    saved = tx.train.latest_checkpoint(ckpt)
                    saved_step = int(saved.split("-")[-1].split(".")[0]) if saved else 0
                    # Kill after a step that no checkpoint holds yet, so that the recovered
                    # session visibly redoes it.
                    if done >= 4 and saved_step < done and not killed:
                        killed = True
                        kill_step, restore_step = done, saved_step
                        t0 = time.time()
                        p = procs[("worker", 1)]
                        p.send_signal(signal.SIGKILL)
                        p.wait()
                        procs[("worker", 1)] = _start(spec, "worker", 1, str(tmp_path))
                        assert time.time() - t0 < 60
        assert killed
        # The session was recreated from the checkpoint of restore_step: the step after the kill
        # is not kill_step + 1 but restore_step + 1, done again.
        assert after_kill and after_kill[0] == restore_step + 1 <= kill_step, (
            after_kill, kill_step, restore_step)
        # The last checkpoint is at the last step and restores in a fresh in-process session.
        latest = tx.train.latest_checkpoint(ckpt)
        assert latest is not None, ckpt
        assert ("model.ckpt-%d" % last) in os.path.basename(latest), latest
        with g.as_default():
            with tx.Session() as local:
                check_saver.restore(local, latest)
                assert local.run(step) == last
                w_value = local.run(w)
        # Steps lost with the worker are redone from the restored checkpoint, so w is `last`
        # gradient steps from [1, -2] (float64 by hand).
        wv = np.array([1.0, -2.0])
        xv = np.array([0.5, 0.25])
        for _ in range(last):
            wv = wv - 0.1 * 2 * (wv * xv - 1.0) * xv
        np.testing.assert_allclose(w_value, wv, rtol=1e-5)
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
