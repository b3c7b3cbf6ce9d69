"""A cluster of tensorflux-server processes (ps + 2 workers, free loopback ports) trained through
tx.train.MonitoredTrainingSession over grpc://: a worker killed with SIGKILL mid-training and
restarted on its port; the session recovers from the latest checkpoint and training ends at the
expected global_step with a checkpoint that restores."""

import os
import signal
import time

import numpy as np
import pytest

import tensorflux as tx


@pytest.mark.skipif(tx.train.LocalCluster.server_binary() is None,
                    reason="tensorflux-server is not built")
def test_worker_killed_and_restarted_during_training(tmp_path):
    with tx.train.LocalCluster(num_workers=2, num_ps=1, log_dir=str(tmp_path)) as cluster:
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
                    master=cluster.target("worker", 0), is_chief=True, checkpoint_dir=ckpt,
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
                        assert cluster.kill("worker", 1) == -signal.SIGKILL
                        cluster.restart("worker", 1)
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
