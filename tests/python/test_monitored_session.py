"""tx.train.MonitoredTrainingSession: hooks, StopAtStepHook, checkpoints every N steps, restore
on restart, and recovery from an AbortedError / UnavailableError injected mid-training (the
session is recreated from the latest checkpoint and training ends at the expected global step
with the values of an uninterrupted run; every checkpoint left is readable)."""

import glob
import os

import numpy as np
import pytest

import tensorflux as tx

LR = 0.1
W0 = np.array([1.0, -2.0, 3.0])
C = np.array([0.5, 1.5, -1.0])


def _model():
    """w (float64 [3]) trained by gradient descent on sum((w - C)^2); returns (w, train)."""
    step = tx.train.get_or_create_global_step()
    w = tx.Variable(W0, name="w")
    loss = tx.reduce_sum(tx.square(w - C))
    return w, tx.train.GradientDescentOptimizer(LR).minimize(loss, global_step=step)


def _expected(steps):
    w = W0.copy()
    for _ in range(steps):
        w = w - LR * 2 * (w - C)
    return w


def _latest(ckpt_dir):
    path = tx.train.latest_checkpoint(ckpt_dir)
    return int(path.split("-")[-1].split(".")[0])


def _check_checkpoints(ckpt_dir):
    """Every checkpoint file restores, and holds the values of its step."""
    paths = sorted(glob.glob(os.path.join(ckpt_dir, "model.ckpt-*.safetensors")))
    assert paths
    with tx.Graph().as_default():
        w, _ = _model()
        saver = tx.train.Saver()
        step = tx.train.get_global_step()
        with tx.Session() as sess:
            for p in paths:
                saver.restore(sess, p)
                n = int(sess.run(step))
                assert p.endswith("model.ckpt-%d.safetensors" % n)
                np.testing.assert_allclose(sess.run(w), _expected(n), rtol=1e-12)
    assert not [f for f in os.listdir(ckpt_dir) if ".tmp" in f]  # no half-written file


class _Recorder(tx.train.SessionRunHook):
    def __init__(self):
        self.calls = []

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")

    def before_run(self, run_context):
        self.calls.append("before_run")
        return tx.train.SessionRunArgs(tx.train.get_global_step())

    def after_run(self, run_context, run_values):
        self.calls.append("after_run %d" % run_values.results)

    def end(self, session):
        self.calls.append("end")


def test_hooks_stop_at_step_and_checkpoints(tmp_path):
    ckpt = str(tmp_path)
    with tx.Graph().as_default():
        w, train = _model()
        rec = _Recorder()
        with tx.train.MonitoredTrainingSession(
                checkpoint_dir=ckpt, save_checkpoint_steps=2,
                hooks=[tx.train.StopAtStepHook(last_step=5), rec]) as sess:
            runs = 0
            while not sess.should_stop():
                sess.run(train)
                runs += 1
        assert runs == 5
        assert rec.calls[:3] == ["begin", "after_create_session", "before_run"]
        assert rec.calls[-2:] == ["after_run 4", "end"]
    # Saved at creation (0), every 2 steps (2, 4) and at the end (5); the Saver keeps 5.
    steps = sorted(int(p.split("-")[-1].split(".")[0])
                   for p in glob.glob(os.path.join(ckpt, "model.ckpt-*.safetensors")))
    assert steps == [0, 2, 4, 5]
    assert tx.train.latest_checkpoint(ckpt).endswith("model.ckpt-5.safetensors")
    _check_checkpoints(ckpt)

    # A new chief session restores the latest checkpoint and continues from step 5.
    with tx.Graph().as_default():
        w, train = _model()
        with tx.train.MonitoredTrainingSession(
                checkpoint_dir=ckpt, save_checkpoint_steps=100,
                hooks=[tx.train.StopAtStepHook(num_steps=3)]) as sess:
            assert sess.run(tx.train.get_global_step()) == 5
            while not sess.should_stop():
                sess.run(train)
    assert _latest(ckpt) == 8  # the hook's end() saved the last step
    _check_checkpoints(ckpt)


class _FailOnce(tx.train.SessionRunHook):
    """Raises `error` after the run that reached global step `at` (once)."""

    def __init__(self, error, at):
        self._error = error
        self._at = at
        self.fired = False
        self.sessions = 0

    def after_create_session(self, session, coord):
        self.sessions += 1

    def before_run(self, run_context):
        return tx.train.SessionRunArgs(tx.train.get_global_step())

    def after_run(self, run_context, run_values):
        if not self.fired and run_values.results + 1 == self._at:
            self.fired = True
            raise self._error(None, None, "injected: worker lost")


@pytest.mark.parametrize("error", [tx.errors.AbortedError, tx.errors.UnavailableError])
def test_recovers_from_a_lost_session(tmp_path, error):
    ckpt = str(tmp_path)
    with tx.Graph().as_default():
        w, train = _model()
        fail = _FailOnce(error, at=5)
        with tx.train.MonitoredTrainingSession(
                master="", checkpoint_dir=ckpt, save_checkpoint_steps=3,
                hooks=[tx.train.StopAtStepHook(last_step=8), fail]) as sess:
            runs = 0
            while not sess.should_stop():
                sess.run(train)
                runs += 1
    assert fail.fired and fail.sessions == 2
    # The 5th run failed after its update; the run was retried in a new session restored from
    # checkpoint 3 (step 4), then steps 5..8 ran: 4 + 5 runs, and the last checkpoint (step 8)
    # holds the values of 8 uninterrupted steps.
    assert runs == 4 + 5
    assert _latest(ckpt) == 8
    _check_checkpoints(ckpt)


def test_other_errors_propagate(tmp_path):
    with tx.Graph().as_default():
        _, train = _model()
        fail = _FailOnce(tx.errors.InvalidArgumentError, at=2)
        with pytest.raises(tx.errors.InvalidArgumentError, match="injected"):
            with tx.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                                   hooks=[fail]) as sess:
                for _ in range(5):
                    sess.run(train)
        assert fail.sessions == 1


def test_argument_errors():
    with pytest.raises(ValueError):
        tx.train.StopAtStepHook()
    with pytest.raises(ValueError):
        tx.train.StopAtStepHook(num_steps=1, last_step=2)
    with pytest.raises(ValueError):
        tx.train.CheckpointSaverHook("/tmp/x", save_secs=1, save_steps=1)
    with tx.Graph().as_default():
        tx.Variable(1.0)
        with pytest.raises(RuntimeError, match="Global step should be created"):
            tx.train.MonitoredTrainingSession(hooks=[tx.train.StopAtStepHook(num_steps=1)])


def test_worker_waits_for_the_chief_then_gives_up():
    """A non-chief session never initializes global variables: in process nobody else does,
    so it polls and ends with DeadlineExceededError; local variables it initializes itself."""
    with tx.Graph().as_default():
        tx.Variable(1.0, name="g")
        creator = tx.train.WorkerSessionCreator(max_wait_secs=0.3, recovery_wait_secs=0.1)
        with pytest.raises(tx.errors.DeadlineExceededError, match="not ready.*'g'"):
            tx.train.MonitoredSession(session_creator=creator)
    with tx.Graph().as_default():
        local = tx.Variable(2.0, name="l", collections=[tx.GraphKeys.LOCAL_VARIABLES])
        creator = tx.train.WorkerSessionCreator(max_wait_secs=1, recovery_wait_secs=0.1)
        with tx.train.MonitoredSession(session_creator=creator) as sess:
            assert sess.run(local) == 2.0


def _counter_graph():
    x = tx.placeholder(tx.float64, [], name="x")
    step = tx.train.get_or_create_global_step()
    total = tx.Variable(0.0, name="total", dtype=tx.float64)
    add = tx.group(total.assign_add(x), step.assign_add(1))
    return x, total, add


def test_logging_feed_and_final_ops_hooks(caplog):
    with tx.Graph().as_default():
        x, total, add = _counter_graph()
        feeds = iter([1.0, 2.0, 3.0, 4.0])
        final = tx.train.FinalOpsHook(total.read_value())
        log = tx.train.LoggingTensorHook({"x": x, "double": x * 2}, every_n_iter=2)
        hooks = [tx.train.FeedFnHook(lambda: {x: next(feeds)}), final, log,
                 tx.train.StopAtStepHook(last_step=4)]
        caplog.set_level("INFO", logger="tensorflux")
        with tx.train.MonitoredSession(hooks=hooks) as sess:
            while not sess.should_stop():
                sess.run(add)
        assert final.final_ops_values == 10.0
        logged = [r.getMessage() for r in caplog.records if "x = " in r.getMessage()]
        assert logged == ["double = 2.0, x = 1.0", "double = 6.0, x = 3.0"]  # runs 1 and 3
    with pytest.raises(ValueError):
        tx.train.LoggingTensorHook(["a"])


def test_nan_tensor_hook():
    with tx.Graph().as_default():
        x, _, add = _counter_graph()
        with pytest.raises(tx.train.NanLossDuringTrainingError):
            with tx.train.MonitoredSession(hooks=[tx.train.NanTensorHook(tx.log(x))]) as sess:
                sess.run(add, {x: 1.0})
                sess.run(add, {x: -1.0})
    with tx.Graph().as_default():
        x, _, add = _counter_graph()
        stop = tx.train.NanTensorHook(tx.log(x), fail_on_nan_loss=False)
        with tx.train.MonitoredSession(hooks=[stop]) as sess:
            sess.run(add, {x: 2.0})
            assert not sess.should_stop()
            sess.run(add, {x: -1.0})
            assert sess.should_stop()
