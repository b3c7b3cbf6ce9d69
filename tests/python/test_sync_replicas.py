"""Between-graph data parallelism in one process: replica threads share one graph and one
session (the variables, accumulators and token queue), as workers share a cluster's ps.
Synchronous mode (tx.train.SyncReplicasOptimizer, num_tokens=0) equals applying the mean of
the replicas' gradients once per step (numpy); asynchronous mode (a plain optimizer per replica)
applies every replica's gradient."""

import threading

import numpy as np
import pytest

import tensorflux as tx
from conftest import run_in_threads

N, K, LR = 3, 4, 0.05


def _shards():
    rng = np.random.RandomState(3)
    return rng.randn(N, 6, 2), rng.randn(N, 6, 1), rng.randn(2, 1)



def test_sync_replicas_equal_mean_gradient_once_per_step():
    xs, ys, w0 = _shards()
    with tx.Graph().as_default():
        step = tx.train.get_or_create_global_step()
        w = tx.Variable(w0, name="w")
        trains, hooks, opts = [], [], []
        for i in range(N):
            with tx.name_scope("replica_%d" % i):
                loss = tx.reduce_mean(tx.square(tx.matmul(tx.constant(xs[i]), w) - ys[i]))
                opt = tx.train.SyncReplicasOptimizer(
                    tx.train.GradientDescentOptimizer(LR), replicas_to_aggregate=N,
                    total_num_replicas=N)
                trains.append(opt.minimize(loss, global_step=step))
                hooks.append(opt.make_session_run_hook(is_chief=(i == 0), num_tokens=0))
                opts.append(opt)
        for h in hooks:
            h.begin()
        sess = tx.Session()
        coord = tx.train.Coordinator()
        sess.run([tx.global_variables_initializer(), tx.local_variables_initializer()])
        for h in hooks:
            h.after_create_session(sess, coord)
        barrier = threading.Barrier(N)
        opts_ = tx.RunOptions(timeout_in_ms=20000)

        def replica(i):
            for _ in range(K):
                sess.run(trains[i], options=opts_)
                barrier.wait(20)
        run_in_threads(replica, N)
        got_w, got_step = sess.run([w, step])
        coord.request_stop()
        sess.close()  # ends the chief's sync op waiting for the next step's gradients
        coord.join(stop_grace_period_secs=10)

    assert got_step == K
    want = w0.copy()
    for _ in range(K):
        grads = [2 * xs[i].T @ (xs[i] @ want - ys[i]) / 6 for i in range(N)]
        want = want - LR * np.mean(grads, axis=0)
    np.testing.assert_allclose(got_w, want, rtol=1e-12)


def test_sync_replicas_api_errors():
    with tx.Graph().as_default():
        opt = tx.train.SyncReplicasOptimizer(tx.train.GradientDescentOptimizer(LR),
                                             replicas_to_aggregate=2, total_num_replicas=1)
        with pytest.raises(ValueError, match="after apply_gradients"):
            opt.get_chief_queue_runner()
        w = tx.Variable([1.0], name="w")
        with pytest.raises(ValueError, match="Global step is required"):
            opt.minimize(tx.reduce_sum(w))
        step = tx.train.get_or_create_global_step()
        opt.minimize(tx.reduce_sum(w), global_step=step)
        with pytest.raises(ValueError, match="Too few tokens to finish the first step"):
            opt.get_init_tokens_op(num_tokens=0)
        assert opt.get_init_tokens_op(num_tokens=1) is not None


def test_async_replicas_apply_every_gradient():
    rng = np.random.RandomState(4)
    cs = rng.randn(N, 3)
    w0 = rng.randn(3)
    with tx.Graph().as_default():
        step = tx.train.get_or_create_global_step()
        w = tx.Variable(w0, name="w")
        trains = [tx.train.GradientDescentOptimizer(LR).minimize(
            tx.reduce_sum(w * cs[i]), global_step=step) for i in range(N)]
        with tx.Session() as sess:
            sess.run(tx.global_variables_initializer())
            run_in_threads(lambda i: [sess.run(trains[i]) for _ in range(K)], N)
            got_w, got_step = sess.run([w, step])
    assert got_step == N * K
    np.testing.assert_allclose(got_w, w0 - LR * K * cs.sum(0), rtol=1e-12)


def test_sync_replicas_in_a_monitored_training_session_with_recovery(tmp_path):
    """One replica (the chief) through MonitoredTrainingSession: the hook starts the chief's
    queue runner; an AbortedError mid-training recreates the session (restoring the latest
    checkpoint, restarting the queue runner); closing ends the runner's waiting take."""
    xs, ys, w0 = _shards()

    class FailOnce(tx.train.SessionRunHook):
        fired = False

        def before_run(self, run_context):
            return tx.train.SessionRunArgs(tx.train.get_global_step())

        def after_run(self, run_context, run_values):
            if not FailOnce.fired and run_values.results == 3:
                FailOnce.fired = True
                raise tx.errors.AbortedError(None, None, "injected")

    with tx.Graph().as_default():
        step = tx.train.get_or_create_global_step()
        w = tx.Variable(w0, name="w")
        loss = tx.reduce_mean(tx.square(tx.matmul(tx.constant(xs[0]), w) - ys[0]))
        opt = tx.train.SyncReplicasOptimizer(tx.train.GradientDescentOptimizer(LR),
                                             replicas_to_aggregate=1)
        train = opt.minimize(loss, global_step=step)
        hooks = [opt.make_session_run_hook(is_chief=True), FailOnce(),
                 tx.train.StopAtStepHook(last_step=K + 2)]
        runs = 0
        with tx.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                               save_checkpoint_steps=2, hooks=hooks) as sess:
            while not sess.should_stop():
                sess.run(train, options=tx.RunOptions(timeout_in_ms=20000))
                runs += 1
    assert FailOnce.fired
    path = tx.train.latest_checkpoint(str(tmp_path))
    assert path.endswith("model.ckpt-%d.safetensors" % (K + 2))
    with tx.Graph().as_default():
        w = tx.Variable(w0, name="w")
        tx.train.get_or_create_global_step()
        with tx.Session() as s:
            tx.train.Saver().restore(s, path)
            got = s.run(w)
    want = w0.copy()
    for _ in range(K + 2):
        want = want - LR * 2 * xs[0].T @ (xs[0] @ want - ys[0]) / 6
    np.testing.assert_allclose(got, want, rtol=1e-12)
