"""The standard hooks of tx.train (TF 1.x's basic_session_run_hooks): StopAtStepHook,
CheckpointSaverHook, StepCounterHook, SummarySaverHook, NanTensorHook, LoggingTensorHook,
FeedFnHook, FinalOpsHook and the SecondOrStepTimer they use.

StopAtStepHook(num_steps=N) stops N steps after the global step the first session started at;
last_step=N stops when the global step reaches N. CheckpointSaverHook saves a checkpoint
(tx.train.Saver: atomic writes, see training/saver.py) when a session is created, every
save_secs seconds or save_steps global steps, and at the end.
NanTensorHook(loss) raises NanLossDuringTrainingError (or only stops, with
fail_on_nan_loss=False) when the loss is NaN; LoggingTensorHook logs tensors (a list or a dict
of names) every N steps or seconds through the "tensorflux" logger; FeedFnHook adds feed_fn()
to every run's feed_dict; FinalOpsHook runs ops once when the session ends
(final_ops_values).
"""

import logging
import os
import time

import numpy as np

from tensorflux.framework import ops
from tensorflux.training import session_run_hook
from tensorflux.training import training_util

_logger = logging.getLogger("tensorflux")


class SecondOrStepTimer:
    """Triggers every `every_secs` seconds or every `every_steps` steps (exactly one)."""

    def __init__(self, every_secs=None, every_steps=None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("exactly one of every_secs and every_steps should be provided.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self._last_triggered_step = None
        self._last_triggered_time = None

    def reset(self):
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step):
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_triggered_time + self._every_secs
        return step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step):
        now = time.time()
        elapsed = (None if self._last_triggered_time is None
                   else (now - self._last_triggered_time, step - self._last_triggered_step))
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step


def _step_to_trigger(timer, global_step_tensor, run_context, run_values):
    """The global step when `timer` fires after this run, else None. run_values.results is the
    step read before the run; only when it (+1) could fire is the step read again (as TF's hooks
    do, so most runs cost no extra session call)."""
    if not timer.should_trigger_for_step(int(run_values.results) + 1):
        return None
    step = int(run_context.session.run(global_step_tensor))
    return step if timer.should_trigger_for_step(step) else None


def _global_step_tensor(hook_name):
    step = training_util.get_global_step()
    if step is None:
        raise RuntimeError("Global step should be created to use %s." % hook_name)
    return step


class StopAtStepHook(session_run_hook.SessionRunHook):
    """Requests a stop at a global step (see the module docstring)."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step_tensor = _global_step_tensor("StopAtStepHook")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context):
        return session_run_hook.SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        # The value fetched is from before this run's update: +1 is the step now, usually.
        if int(run_values.results) + 1 >= self._last_step:
            step = int(run_context.session.run(self._global_step_tensor))
            if step >= self._last_step:
                run_context.request_stop()


class CheckpointSaverHook(session_run_hook.SessionRunHook):
    """Saves checkpoints to checkpoint_dir/checkpoint_basename-<step> (see the module
    docstring). Exactly one of save_secs and save_steps (ValueError otherwise).

    As TF: the event file of checkpoint_dir (tx.summary.FileWriterCache) gets the graph and
    its MetaGraphDef when the session is created and a SessionLog CHECKPOINT event per save;
    with save_graph_def (default) the GraphDef is also written to checkpoint_dir/graph.pbtxt
    and each checkpoint gets its .meta file."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None,
                 save_graph_def=True):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._save_graph_def = save_graph_def
        self._summary_writer = None
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])

    def begin(self):
        from tensorflux.summary import writer as writer_lib  # pylint: disable=g-import-not-at-top
        self._summary_writer = writer_lib.FileWriterCache.get(self._checkpoint_dir)
        self._global_step_tensor = _global_step_tensor("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        from google.protobuf import text_format  # pylint: disable=g-import-not-at-top
        from tensorflux.saved_model_pb2 import MetaGraphDef  # pylint: disable=g-import-not-at-top
        os.makedirs(self._checkpoint_dir, exist_ok=True)
        step = int(session.run(self._global_step_tensor))
        graph = ops.get_default_graph()
        graph_def = graph.as_graph_def(add_shapes=True)
        if self._save_graph_def:
            with open(os.path.join(self._checkpoint_dir, "graph.pbtxt"), "w") as f:
                f.write(text_format.MessageToString(graph_def))
        self._summary_writer.add_graph(graph)
        self._summary_writer.add_meta_graph(MetaGraphDef(graph_def=graph_def))
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context):
        return session_run_hook.SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        step = _step_to_trigger(self._timer, self._global_step_tensor, run_context, run_values)
        if step is not None:
            self._timer.update_last_triggered_step(step)
            if self._save(run_context.session, step):
                run_context.request_stop()

    def end(self, session):
        step = int(session.run(self._global_step_tensor))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None and self._scaffold.saver is not None:
            return self._scaffold.saver
        savers = ops.get_collection(ops.GraphKeys.SAVERS)
        if len(savers) != 1:
            raise RuntimeError("CheckpointSaverHook needs a saver: pass saver= or scaffold=, "
                               "or put exactly one Saver in GraphKeys.SAVERS (found %d)"
                               % len(savers))
        self._saver = savers[0]
        return self._saver

    def _save(self, session, step):
        """Saves; True when a listener asks to stop (TF's listener protocol)."""
        for listener in self._listeners:
            listener.before_save(session, step)
        from tensorflux.event_pb2 import SessionLog  # pylint: disable=g-import-not-at-top
        self._get_saver().save(session, self._save_path, global_step=step,
                               write_meta_graph=self._save_graph_def)
        self._summary_writer.add_session_log(
            SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path), step)
        stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                stop = True
        return stop


class StepCounterHook(session_run_hook.SessionRunHook):
    """Every every_n_steps global steps (or every_n_secs seconds; exactly one), logs and writes
    the steps per second as the summary "<global step name>/sec" (TF's tag) to summary_writer
    or output_dir's tx.summary.FileWriterCache writer."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir

    def begin(self):
        from tensorflux.summary import writer as writer_lib  # pylint: disable=g-import-not-at-top
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = writer_lib.FileWriterCache.get(self._output_dir)
        self._global_step_tensor = _global_step_tensor("StepCounterHook")
        self._summary_tag = self._global_step_tensor.op.name + "/sec"

    def before_run(self, run_context):
        return session_run_hook.SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        from tensorflux.summary_pb2 import Summary  # pylint: disable=g-import-not-at-top
        step = _step_to_trigger(self._timer, self._global_step_tensor, run_context, run_values)
        elapsed = None if step is None else self._timer.update_last_triggered_step(step)
        if elapsed is not None:
            secs, steps = elapsed
            rate = steps / secs if secs > 0 else float("inf")
            if self._summary_writer is not None:
                self._summary_writer.add_summary(Summary(value=[Summary.Value(
                    tag=self._summary_tag, simple_value=rate)]), step)
            _logger.info("%s: %g", self._summary_tag, rate)


class SummarySaverHook(session_run_hook.SessionRunHook):
    """Runs the summary op (summary_op, a string tensor or a list of them; or the scaffold's:
    exactly one of the two) with the first step and then every save_steps global steps (or
    save_secs seconds) and writes its Summary at the global step, after a SessionLog START
    event, to summary_writer or output_dir's tx.summary.FileWriterCache writer (TF's hook)."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        from tensorflux.summary import writer as writer_lib  # pylint: disable=g-import-not-at-top
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = writer_lib.FileWriterCache.get(self._output_dir)
        self._next_step = None
        self._global_step_tensor = _global_step_tensor("SummarySaverHook")

    def _get_summary_op(self):
        op = self._summary_op if self._summary_op is not None else self._scaffold.summary_op
        if op is None:
            return None
        return op if isinstance(op, list) else [op]

    def before_run(self, run_context):
        self._request_summary = (self._next_step is None
                                 or self._timer.should_trigger_for_step(self._next_step))
        requests = {"global_step": self._global_step_tensor}
        if self._request_summary and self._get_summary_op() is not None:
            requests["summary"] = self._get_summary_op()
        return session_run_hook.SessionRunArgs(requests)

    def after_run(self, run_context, run_values):
        from tensorflux.event_pb2 import SessionLog  # pylint: disable=g-import-not-at-top
        if not self._summary_writer:
            return
        global_step = int(run_values.results["global_step"]) + 1
        if self._next_step is None or self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
        if self._next_step is None:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START),
                                                 global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", []):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session=None):
        if self._summary_writer:
            self._summary_writer.flush()


class CheckpointSaverListener:
    """Called by CheckpointSaverHook around each save (after_save returning True stops)."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass



class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(session_run_hook.SessionRunHook):
    """Fails (or stops, fail_on_nan_loss=False) when loss_tensor is NaN."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return session_run_hook.SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            if self._fail_on_nan_loss:
                raise NanLossDuringTrainingError
            logging.getLogger("tensorflux").error("Model diverged with loss = NaN.")
            run_context.request_stop()


class LoggingTensorHook(session_run_hook.SessionRunHook):
    """Logs `tensors` (a list, or a dict {tag: tensor}; names or tensors) every every_n_iter
    runs or every_n_secs seconds (exactly one), and at the end when at_end; formatter(dict)
    returns the line to log."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs "
                             "must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError("invalid every_n_iter=%s." % every_n_iter)
        if not isinstance(tensors, dict):
            self._tag_order = [t if isinstance(t, str) else t.name for t in tensors]
            tensors = {tag: t for tag, t in zip(self._tag_order, tensors)}
        else:
            self._tag_order = sorted(tensors)
        self._tensors = tensors
        self._formatter = formatter
        self._timer = None if only_log_at_end else SecondOrStepTimer(
            every_secs=every_n_secs, every_steps=every_n_iter)
        self._log_at_end = at_end
        self._logger = logging.getLogger("tensorflux")

    def begin(self):
        graph = ops.get_default_graph()
        self._current = {tag: graph.as_graph_element(t, allow_tensor=True,
                                                     allow_operation=False)
                         for tag, t in self._tensors.items()}
        self._iter_count = 0
        if self._timer is not None:
            self._timer.reset()

    def before_run(self, run_context):
        self._should_trigger = (self._timer is not None
                                and self._timer.should_trigger_for_step(self._iter_count))
        if self._should_trigger:
            return session_run_hook.SessionRunArgs(self._current)
        return None

    def _log(self, values):
        if self._formatter is not None:
            self._logger.info(self._formatter(values))
        else:
            self._logger.info(", ".join("%s = %s" % (tag, values[tag])
                                        for tag in self._tag_order))

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._timer.update_last_triggered_step(self._iter_count)
            self._log(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log(session.run(self._current))


class FeedFnHook(session_run_hook.SessionRunHook):
    """Adds feed_fn() (a dict) to the feed_dict of every run."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return session_run_hook.SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class FinalOpsHook(session_run_hook.SessionRunHook):
    """Runs final_ops (any fetch structure) when the session ends; final_ops_values holds
    their values."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is not None:
            self._final_ops_values = session.run(self._final_ops,
                                                 feed_dict=self._final_ops_feed_dict)
