"""tx.train.SessionRunHook and the values it sees (TF 1.x's session_run_hook): code that a
MonitoredSession calls around session creation and each run().

    class PrintLoss(tx.train.SessionRunHook):
        def before_run(self, run_context):
            return tx.train.SessionRunArgs(loss)        # fetched with the caller's fetches
        def after_run(self, run_context, run_values):
            print(run_values.results)
            if run_values.results < 0.01: run_context.request_stop()

Order: begin() (the graph can still change), after_create_session(session, coord) (each time
a session is created, also after a recovery), before_run/after_run around every run(), end(session)
when the MonitoredSession closes without an error.
"""

import collections


class SessionRunHook:
    """A hook to extend MonitoredSession.run() (every method is optional)."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):  # pylint: disable=unused-argument
        pass

    def before_run(self, run_context):  # pylint: disable=unused-argument
        return None

    def after_run(self, run_context, run_values):  # pylint: disable=unused-argument
        pass

    def end(self, session):  # pylint: disable=unused-argument
        pass


class SessionRunArgs(collections.namedtuple("SessionRunArgs",
                                            ["fetches", "feed_dict", "options"])):
    """What a hook adds to a run: fetches (any fetch structure), feed_dict, RunOptions."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """The run's original arguments and session; a hook may ask the loop to stop."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        self._stop_requested = True


SessionRunValues = collections.namedtuple("SessionRunValues",
                                          ["results", "options", "run_metadata"])
