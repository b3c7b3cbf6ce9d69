"""tx.train.MonitoredTrainingSession, MonitoredSession and Scaffold (TF 1.x's
monitored_session): a training loop's session that initializes or restores the model, runs
hooks, saves checkpoints and survives a lost session.

    step = tx.train.get_or_create_global_step()
    train_op = opt.minimize(loss, global_step=step)
    with tx.train.MonitoredTrainingSession(
            master=target, is_chief=True, checkpoint_dir="/tmp/run",
            save_checkpoint_steps=100,
            hooks=[tx.train.StopAtStepHook(last_step=1000)]) as sess:
        while not sess.should_stop():
            sess.run(train_op)

Session creation: the chief (ChiefSessionCreator) restores the latest checkpoint of
checkpoint_dir when there is one, else runs the Scaffold's init_op (and init_fn), then its
local_init_op; a non-chief (WorkerSessionCreator) waits until the chief has initialized the
variables (polling ready_for_local_init_op every recovery_wait_secs, up to max_wait_secs),
then runs local_init_op. `master` is the Session target: "" in process, "grpc://host:port"
for a cluster.

Recovery (TF's _RecoverableSession): when run() fails with AbortedError or UnavailableError
(a worker or ps lost, a step aborted), the session is closed, a new one is created as above
-- so variables come back from the latest checkpoint -- and the failed run() is run again in
it. Errors of these two kinds while creating a session are retried as well.
Checkpoints are written atomically (tx.train.Saver), so a crash never leaves a corrupt one.

MonitoredTrainingSession adds TF's hooks on the chief: with a summary_dir (default:
checkpoint_dir) a StepCounterHook (every log_step_count_steps) and a SummarySaverHook (every
save_summaries_steps, default 100, or save_summaries_secs) writing to the directory's event
file, and with a checkpoint_dir the CheckpointSaverHook.
"""

import logging
import time

from tensorflux.client import session as session_lib
from tensorflux.framework import dtypes
from tensorflux.framework import errors
from tensorflux.framework import ops
from tensorflux.ops import array_ops
from tensorflux.ops import array_ops2
from tensorflux.ops import control_flow_ops
from tensorflux.ops import math_ops2
from tensorflux.ops import variables
from tensorflux.training import basic_session_run_hooks
from tensorflux.training import coordinator
from tensorflux.training import queue_runner
from tensorflux.training import saver as saver_lib
from tensorflux.training import session_run_hook

_logger = logging.getLogger("tensorflux")
_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)
USE_DEFAULT = object()


def _uninitialized_mask(var_list, name):
    """A bool vector, True for each variable of var_list not initialized yet."""
    with ops.name_scope(name):
        if not var_list:
            return array_ops.zeros([0], dtype=dtypes.bool)
        return array_ops2.stack([math_ops2.logical_not(v.is_initialized()) for v in var_list])


class Scaffold:
    """The ops that create a session's state (TF 1.x's tf.train.Scaffold). finalize() fills
    what was not given: init_op (global variables' initializers), ready_op (which variables
    are uninitialized), ready_for_local_init_op (which global ones are), local_init_op (local
    variables' initializers), saver (the one Saver of GraphKeys.SAVERS, else a Saver of every
    global variable). ready_op / ready_for_local_init_op may also be TF-style ops returning the
    names of the uninitialized variables (ready when empty). local_init_feed_dict: the feeds of
    local_init_op's run."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None, saver=None,
                 copy_from_scaffold=None, local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            init_op = init_op or copy_from_scaffold.init_op
            init_feed_dict = init_feed_dict or copy_from_scaffold._init_feed_dict
            init_fn = init_fn or copy_from_scaffold._user_init_fn
            ready_op = ready_op or copy_from_scaffold.ready_op
            ready_for_local_init_op = (ready_for_local_init_op
                                       or copy_from_scaffold.ready_for_local_init_op)
            local_init_op = local_init_op or copy_from_scaffold.local_init_op
            local_init_feed_dict = (local_init_feed_dict
                                    or copy_from_scaffold.local_init_feed_dict)
            summary_op = summary_op or copy_from_scaffold.summary_op
            saver = saver or copy_from_scaffold.saver
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver
        self._var_names = None
        self._global_names = None

    def finalize(self):
        """Creates the missing ops, then finalizes the graph (no more ops may be added)."""
        graph = ops.get_default_graph()
        global_vars = variables.global_variables()
        all_vars = global_vars + variables.local_variables()
        self._var_names = [v.op.name for v in all_vars]
        self._global_names = [v.op.name for v in global_vars]
        if self._init_op is None:
            self._init_op = variables.global_variables_initializer()
        if self._ready_op is None:
            self._ready_op = _uninitialized_mask(all_vars, "report_uninitialized_variables")
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = _uninitialized_mask(
                global_vars, "report_uninitialized_variables_1")
        if self._local_init_op is None:
            self._local_init_op = control_flow_ops.group(
                variables.local_variables_initializer(), name="local_init")
        if self._summary_op is None:
            # As TF: the one op of GraphKeys.SUMMARY_OP, else merge_all() (None without
            # summaries), which joins that collection.
            from tensorflux import summary  # pylint: disable=g-import-not-at-top
            found = ops.get_collection(ops.GraphKeys.SUMMARY_OP)
            if len(found) > 1:
                raise RuntimeError("More than one item in collection %s"
                                   % ops.GraphKeys.SUMMARY_OP)
            self._summary_op = found[0] if found else summary.merge_all()
            if not found and self._summary_op is not None:
                ops.add_to_collection(ops.GraphKeys.SUMMARY_OP, self._summary_op)
        if self._saver is None:
            savers = ops.get_collection(ops.GraphKeys.SAVERS)
            if len(savers) > 1:
                raise RuntimeError("More than one item in collection %s. Please indicate "
                                   "which one to use by passing it to the constructor."
                                   % ops.GraphKeys.SAVERS)
            if savers:
                self._saver = savers[0]
            elif global_vars:
                self._saver = saver_lib.Saver()
                ops.add_to_collection(ops.GraphKeys.SAVERS, self._saver)
        graph.finalize()
        return self

    @property
    def init_op(self):
        return self._init_op

    @property
    def init_fn(self):
        return self._init_fn

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        return self._local_init_op

    @property
    def local_init_feed_dict(self):
        return self._local_init_feed_dict

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def saver(self):
        return self._saver

    def _local_init(self, sess):
        """Runs local_init_op once the global variables are initialized; returns the names of
        the variables still uninitialized ([]: the session is ready)."""
        not_ready = self._not_ready(sess, self._ready_for_local_init_op, self._global_names)
        if not_ready:
            return not_ready
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict)
        return self._not_ready(sess, self._ready_op, self._var_names)

    def _not_ready(self, sess, op, names):
        """The names of the variables `op` reports uninitialized ([] = ready)."""
        value = sess.run(op)
        if value.dtype == bool:
            return [n for n, flag in zip(names, value.tolist()) if flag]
        return [v.decode() if isinstance(v, bytes) else str(v) for v in value.tolist()]


# ------------------------------------------------------------------ session creators

class SessionCreator:
    def create_session(self):
        raise NotImplementedError()


class ChiefSessionCreator(SessionCreator):
    """Restores the latest checkpoint of checkpoint_dir (or a given checkpoint_filename_with_
    path) or initializes the variables, then runs the local init op."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self):
        self._scaffold.finalize()
        sc = self._scaffold
        sess = session_lib.Session(self._master, graph=ops.get_default_graph(),
                                   config=self._config)
        try:
            path = self._checkpoint_filename_with_path
            if path is None and self._checkpoint_dir:
                path = saver_lib.latest_checkpoint(self._checkpoint_dir)
            if path is not None and sc.saver is not None:
                sc.saver.restore(sess, path)
            else:
                sess.run(sc.init_op, feed_dict=sc.init_feed_dict)
                if sc.init_fn is not None:
                    sc.init_fn(sess)
            not_ready = sc._local_init(sess)
            if not_ready:
                raise RuntimeError("Init operations did not make model ready. Uninitialized "
                                   "variables: %s" % not_ready)
        except BaseException:
            sess.close()
            raise
        return sess


class WorkerSessionCreator(SessionCreator):
    """Waits for the chief to initialize the model, then runs the local init op."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60,
                 recovery_wait_secs=30):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs
        self._recovery_wait_secs = recovery_wait_secs

    def create_session(self):
        self._scaffold.finalize()
        sc = self._scaffold
        deadline = time.monotonic() + self._max_wait_secs
        while True:
            sess = session_lib.Session(self._master, graph=ops.get_default_graph(),
                                       config=self._config)
            try:
                not_ready = sc._local_init(sess)
                if not not_ready:
                    return sess
            except BaseException:
                sess.close()
                raise
            sess.close()
            if time.monotonic() + self._recovery_wait_secs > deadline:
                raise errors.DeadlineExceededError(
                    None, None, "Session was not ready after waiting %d secs: uninitialized "
                    "variables %s" % (self._max_wait_secs, not_ready))
            _logger.info("Waiting for the model to be ready: %s", not_ready)
            time.sleep(self._recovery_wait_secs)


# ------------------------------------------------------------------ the session layers

class _HookedSession:
    """Calls the hooks around each run."""

    def __init__(self, sess, hooks):
        self._sess = sess
        self._hooks = hooks
        self._should_stop = False

    @property
    def raw_session(self):
        return self._sess

    def should_stop(self):
        return self._should_stop

    def close(self):
        self._sess.close()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._should_stop:
            raise RuntimeError("Run called even after should_stop requested.")
        context = session_run_hook.SessionRunContext(
            original_args=session_run_hook.SessionRunArgs(fetches, feed_dict), session=self._sess)
        actual_fetches = {"caller": fetches}
        feed = dict(feed_dict or {})
        for hook in self._hooks:
            request = hook.before_run(context)
            if request is None:
                continue
            if request.fetches is not None:
                actual_fetches[hook] = request.fetches
            for key, value in (request.feed_dict or {}).items():
                if key in feed:
                    raise RuntimeError("Same tensor is fed by a SessionRunHook and user.")
                feed[key] = value
            if request.options is not None:
                options = _merge_run_options(options, request.options)
        outputs = self._sess.run(actual_fetches, feed_dict=feed or None, options=options,
                                 run_metadata=run_metadata)
        for hook in self._hooks:
            hook.after_run(context, session_run_hook.SessionRunValues(
                results=outputs.get(hook), options=options, run_metadata=run_metadata))
        self._should_stop = self._should_stop or context.stop_requested
        return outputs["caller"]


def _merge_run_options(a, b):
    if a is None:
        return b
    merged = type(a)()
    merged.CopyFrom(a)
    merged.trace_level = max(a.trace_level, b.trace_level)
    merged.timeout_in_ms = max(a.timeout_in_ms, b.timeout_in_ms)
    return merged


class _CoordinatedSession:
    """Stops the coordinator's threads (queue runners) when the session closes or fails."""

    def __init__(self, sess, coord, stop_grace_period_secs):
        self._sess = sess
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def should_stop(self):
        return self._coord.should_stop() or self._sess.should_stop()

    def run(self, *args, **kwargs):
        try:
            return self._sess.run(*args, **kwargs)
        except BaseException as e:
            self._coord.request_stop(e if not isinstance(e, _PREEMPTION_ERRORS) else None)
            raise
        finally:
            self._coord.raise_requested_exception()

    def close(self):
        self._coord.request_stop()
        try:
            # Closing the session first cancels what the threads wait on (a dequeue, a take).
            self._sess.close()
        finally:
            self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs,
                             ignore_live_threads=True)


class _CoordinatedSessionCreator:
    def __init__(self, session_creator, hooks, stop_grace_period_secs):
        self._session_creator = session_creator
        self._hooks = hooks
        self._stop_grace_period_secs = stop_grace_period_secs
        self.tf_sess = None
        self.coord = None

    def create_session(self):
        self.tf_sess = self._session_creator.create_session()
        self.coord = coordinator.Coordinator()
        queue_runner.start_queue_runners(sess=self.tf_sess, coord=self.coord)
        for hook in self._hooks:
            hook.after_create_session(self.tf_sess, self.coord)
        return _CoordinatedSession(_HookedSession(self.tf_sess, self._hooks), self.coord,
                                   self._stop_grace_period_secs)


class _RecoverableSession:
    """Recreates the session after AbortedError / UnavailableError (see the module docstring)."""

    def __init__(self, creator):
        self._creator = creator
        self._sess = self._create()

    def _create(self):
        while True:
            try:
                return self._creator.create_session()
            except _PREEMPTION_ERRORS as e:
                _logger.info("An error was raised while a session was being created: %s: %s. "
                             "Retrying.", type(e).__name__, e)

    def should_stop(self):
        return self._sess is not None and self._sess.should_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        while True:
            if self._sess is None:
                self._sess = self._create()
            try:
                return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                                      run_metadata=run_metadata)
            except _PREEMPTION_ERRORS as e:
                _logger.info("An error was raised: %s: %s. The session will be recreated "
                             "(restoring the latest checkpoint).", type(e).__name__, e)
                self._close_quietly()
                self._sess = None

    def _close_quietly(self):
        try:
            self._sess.close()
        except _PREEMPTION_ERRORS:
            pass

    def close(self):
        if self._sess is not None:
            self._sess.close()
            self._sess = None


class MonitoredSession:
    """A session that runs hooks, coordinates threads and recovers from a lost session (see
    the module docstring). Use as a context manager; exiting on OutOfRangeError (the input ran
    out) is a normal end."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._creator = _CoordinatedSessionCreator(session_creator or ChiefSessionCreator(),
                                                   self._hooks, stop_grace_period_secs)
        self._sess = _RecoverableSession(self._creator)
        self._closed = False

    @property
    def graph(self):
        return ops.get_default_graph() if self._creator.tf_sess is None else (
            self._creator.tf_sess.graph)

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                              run_metadata=run_metadata)

    def should_stop(self):
        return self._closed or self._sess.should_stop()

    def close(self):
        self._close_internal(None)

    def _close_internal(self, exception_type):
        if self._closed:
            return
        self._closed = True
        try:
            if exception_type is None and self._creator.tf_sess is not None:
                for hook in self._hooks:
                    hook.end(self._creator.tf_sess)
        finally:
            self._sess.close()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close_internal(exception_type)
        return exception_type is None


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None,  # noqa: N802
                             hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=USE_DEFAULT, save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None, save_graph_def=True):
    """A MonitoredSession for training (see the module docstring). The chief gets, as TF:
    with summary_dir (default checkpoint_dir), a StepCounterHook every log_step_count_steps
    steps (None or 0: none) and a SummarySaverHook of the scaffold's summary_op every
    save_summaries_steps steps (default 100) or save_summaries_secs seconds (both None: none);
    with checkpoint_dir, a CheckpointSaverHook (save_graph_def passed on) every
    save_checkpoint_secs (default 600) or save_checkpoint_steps seconds/steps (giving one turns
    the other off; both None: no saving)."""
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_secs is USE_DEFAULT and save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_secs, save_checkpoint_steps = 600, None
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    scaffold = scaffold or Scaffold()
    all_hooks = list(hooks or [])
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                       max_wait_secs=max_wait_secs)
        return MonitoredSession(creator, hooks=all_hooks,
                                stop_grace_period_secs=stop_grace_period_secs)
    all_hooks.extend(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                  checkpoint_dir=checkpoint_dir)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(basic_session_run_hooks.StepCounterHook(
                output_dir=summary_dir, every_n_steps=log_step_count_steps))
        if ((save_summaries_steps and save_summaries_steps > 0)
                or (save_summaries_secs and save_summaries_secs > 0)):
            all_hooks.append(basic_session_run_hooks.SummarySaverHook(
                scaffold=scaffold, save_steps=save_summaries_steps,
                save_secs=save_summaries_secs, output_dir=summary_dir))
    if checkpoint_dir and (save_checkpoint_secs or save_checkpoint_steps):
        all_hooks.append(basic_session_run_hooks.CheckpointSaverHook(
            checkpoint_dir, save_secs=save_checkpoint_secs or None,
            save_steps=save_checkpoint_steps or None, scaffold=scaffold,
            save_graph_def=save_graph_def))
    return MonitoredSession(creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs)
