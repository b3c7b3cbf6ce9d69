"""tx.train.LocalCluster: a cluster of real tensorflux-server processes on free loopback ports,
for tests, benchmarks and single-machine training (TF 1.x has tf.test.create_local_cluster,
which starts in-process servers; these are child processes, one per task, as on a real cluster).

    with tx.train.LocalCluster(num_workers=2, num_ps=1, log_dir="logs") as cluster:
        cluster.spec                    # {"ps": ["127.0.0.1:P0"], "worker": [...]} (TF_CONFIG's)
        cluster.cluster_spec()          # the same as a tx.train.ClusterSpec
        sess = tx.Session(cluster.target())        # worker 0's master, "grpc://127.0.0.1:P1"
        cluster.kill("worker", 1)                  # SIGKILL, waits for the exit
        cluster.restart("worker", 1)               # the same task again, on its address

What it holds: one subprocess.Popen per task (`process(job, task)`), started as
`tensorflux-server --cluster SPEC --job JOB --task I [server_args]`; each task's stderr in
`log_path(job, task)` (log_dir/<job><task>.log; a fresh temporary directory, deleted by stop(),
when log_dir is None; a restart appends to the same log).

Start: every task is started, then each is waited for until its log says "listening on" (all
within start_timeout seconds). Ports are picked free just before the start; when another
process takes one first (the server logs "address in use"), the whole cluster is started again
on new ports, up to `attempts` times (a restart retries on its own address).

No orphans: each server runs in its own session and process group (a Ctrl-C in the terminal
reaches only this process, which can still use the servers, e.g. to save a checkpoint, before
stopping them) with PR_SET_PDEATHSIG = SIGTERM (Linux): the kernel stops it when the thread
that started it ends without cleaning up (SIGKILL, a crash, an unhandled SIGTERM). So start and
restart tasks from a thread that outlives the cluster (the main thread). stop() (also from
__exit__, at interpreter exit and when a start fails) sends SIGTERM, waits up to `stop_grace`
seconds, then SIGKILLs what is left and reaps every process.

Errors: LocalClusterError (a RuntimeError) when no server binary is found, the binary cannot be
executed, or a task exits or does not listen in time; its message names the task
(/job:worker/task:1), the binary and the last lines of the task's log, which are also in its
attributes job, task, log_path and log_tail. ValueError for bad counts or an unknown task.
"""

import atexit
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from tensorflux.training.cluster_spec import ClusterSpec

_PR_SET_PDEATHSIG = 1
_LISTENING = b"listening on"
_ADDRESS_IN_USE = b"address in use"
_TAIL_LINES = 20

try:  # resolved here, not in the forked child (no dlopen between fork and exec)
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux
    _prctl = None


def _child_setup(parent_pid):
    """Runs in the child between fork and exec: die with the parent (and at once when the parent
    already died before the prctl)."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent_pid:
        os._exit(1)


def _free_ports(n):
    """n distinct loopback ports that were free a moment ago (bound together, then released)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _candidates():
    """Where server_binary() looks, in order."""
    if os.environ.get("TX_BIN_DIR"):
        return [os.path.abspath(os.path.join(os.environ["TX_BIN_DIR"], "tensorflux-server"))]
    here = os.path.dirname(os.path.abspath(__file__))  # <build>/python/tensorflux/training
    built = os.path.normpath(os.path.join(here, "..", "..", "..", "bin", "tensorflux-server"))
    on_path = shutil.which("tensorflux-server")
    return [built] + ([on_path] if on_path else [])


def _search_path():
    if os.environ.get("TX_BIN_DIR"):
        return "$TX_BIN_DIR=%s" % os.environ["TX_BIN_DIR"]
    return "%s, then PATH" % _candidates()[0]


class LocalClusterError(RuntimeError):
    """A task of a LocalCluster did not start; job, task, log_path and log_tail say which and
    why (None when the error is about no task, e.g. a missing binary)."""

    def __init__(self, message, job=None, task=None, log_path=None, log_tail=""):
        super().__init__(message)
        self.job, self.task, self.log_path, self.log_tail = job, task, log_path, log_tail


class LocalCluster:
    """num_ps ps tasks and num_workers worker tasks as tensorflux-server child processes.

    Args:
      num_workers: worker tasks (>= 1; the target() is worker 0's master).
      num_ps: ps tasks (>= 0; no "ps" job when 0).
      server_bin: the tensorflux-server binary; None: LocalCluster.server_binary().
      log_dir: where the tasks' logs go (created if missing); None: a temporary directory.
      server_args: extra flags of every task, or a function (job, task) -> flags.
      env: variables added to this process's environment for every task, or a function
        (job, task) -> dict (None for none).
      start_timeout: seconds for every task to listen (a restart gets as long).
      attempts: starts on fresh ports when a port was taken meanwhile.
      stop_grace: seconds between SIGTERM and SIGKILL in stop().
    Raises LocalClusterError (see the module), ValueError or TypeError; leaves nothing
    running then.
    """

    def __init__(self, num_workers=1, num_ps=0, server_bin=None, log_dir=None, server_args=(),
                 env=None, start_timeout=60.0, attempts=3, stop_grace=10.0):
        if num_workers < 1 or num_ps < 0 or attempts < 1:
            raise ValueError("LocalCluster needs num_workers >= 1, num_ps >= 0 and attempts >= "
                             "1, got %d, %d, %d" % (num_workers, num_ps, attempts))
        self._bin = server_bin or LocalCluster.server_binary()
        if self._bin is None:
            raise LocalClusterError("no tensorflux-server found (in %s): build it with `make "
                                    "build`, or give server_bin" % _search_path())
        if not (os.path.isfile(self._bin) and os.access(self._bin, os.X_OK)):
            raise LocalClusterError("the tensorflux-server %s is not an executable file: build "
                                    "it with `make build`, or give server_bin" % self._bin)
        if isinstance(server_args, str):
            raise TypeError("server_args must be a list of flags or a function, got %r"
                            % server_args)
        fixed_args, fixed_env = tuple(() if callable(server_args) else server_args), env
        self._args = server_args if callable(server_args) else lambda job, task: fixed_args
        self._env = env if callable(env) else lambda job, task: fixed_env
        self._timeout = start_timeout
        self._grace = stop_grace
        self._own_log_dir = log_dir is None
        self.log_dir = tempfile.mkdtemp(prefix="tx_local_cluster_") if log_dir is None else log_dir
        os.makedirs(self.log_dir, exist_ok=True)
        self._counts = {"ps": num_ps, "worker": num_workers} if num_ps else {"worker": num_workers}
        self._procs = {}
        atexit.register(self.stop)
        try:
            for attempt in range(attempts):
                ports = iter(_free_ports(num_ps + num_workers))
                self.spec = {job: ["127.0.0.1:%d" % next(ports) for _ in range(n)]
                             for job, n in self._counts.items()}
                try:
                    self._start(self.tasks())
                    return
                except LocalClusterError as e:
                    self._stop_tasks()
                    if _ADDRESS_IN_USE not in e.log_tail.encode() or attempt + 1 == attempts:
                        raise
        except BaseException:
            self.stop()
            raise

    @staticmethod
    def server_binary():
        """The tensorflux-server that LocalCluster starts by default: $TX_BIN_DIR's when that is
        set, else the build tree's this package was imported from (build/bin next to
        build/python), else the first on PATH; None when that one is not an executable."""
        for path in _candidates():
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
        return None

    # ------------------------------------------------------------------ accessors

    def tasks(self):
        """[(job, task)] of every task, ps tasks first."""
        return [(job, i) for job, n in self._counts.items() for i in range(n)]

    def cluster_spec(self):
        """The cluster as a tx.train.ClusterSpec (the spec property is the same as a dict)."""
        return ClusterSpec(self.spec)

    def address(self, job, task):
        """"127.0.0.1:PORT" of a task."""
        self._check(job, task)
        return self.spec[job][task]

    def target(self, job="worker", task=0):
        """"grpc://127.0.0.1:PORT": the session target of a task's master."""
        return "grpc://" + self.address(job, task)

    def log_path(self, job, task):
        self._check(job, task)
        return os.path.join(self.log_dir, "%s%d.log" % (job, task))

    def process(self, job, task):
        """The task's subprocess.Popen (its last start); None after stop()."""
        self._check(job, task)
        return self._procs.get((job, task))

    def pids(self):
        """The servers' process ids in tasks() order (empty after stop())."""
        return [self._procs[t].pid for t in self.tasks() if t in self._procs]

    # ------------------------------------------------------------------ control

    def kill(self, job, task, sig=signal.SIGKILL):
        """Sends `sig` to a task's server and waits for it to exit; returns its exit status."""
        proc = self.process(job, task)
        if proc is None:
            raise ValueError("/job:%s/task:%d is not running" % (job, task))
        if proc.poll() is None:
            proc.send_signal(sig)
        return proc.wait()

    def restart(self, job, task):
        """Starts a task again on its address (stopping it first when it still runs) and returns
        its Popen once it listens; retries while its old port is still taken. LocalClusterError
        when it does not start."""
        if self.process(job, task) is not None:
            self._stop_procs([self._procs.pop((job, task))])
        for attempt in range(10):
            try:
                return self._start([(job, task)])
            except LocalClusterError as e:
                if _ADDRESS_IN_USE not in e.log_tail.encode() or attempt == 9:
                    raise
                time.sleep(0.2)

    def stop(self):
        """Stops every server (SIGTERM, SIGKILL after stop_grace s) and reaps it; removes a
        temporary log_dir. Idempotent."""
        self._stop_tasks()
        atexit.unregister(self.stop)
        if self._own_log_dir and os.path.isdir(self.log_dir):
            shutil.rmtree(self.log_dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    # ------------------------------------------------------------------ internals

    def _check(self, job, task):
        if not 0 <= task < self._counts.get(job, 0):
            raise ValueError("no task /job:%s/task:%d in this cluster (jobs: %s)"
                             % (job, task, self._counts))

    def _start(self, tasks):
        """Starts `tasks` and waits until each listens (the part of its log written by this
        start says so); the first that exits or times out raises."""
        flag = ";".join("%s=%s" % (job, ",".join(a)) for job, a in self.spec.items())
        offsets = {}
        for job, task in tasks:
            path = self.log_path(job, task)
            with open(path, "ab") as log:
                offsets[(job, task)] = log.tell()
                env = dict(os.environ)
                env.update(self._env(job, task) or {})
                try:
                    self._procs[(job, task)] = subprocess.Popen(
                        [self._bin, "--cluster", flag, "--job", job, "--task", str(task)]
                        + list(self._args(job, task)),
                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, env=env,
                        start_new_session=True, preexec_fn=lambda p=os.getpid(): _child_setup(p))
                except OSError as e:
                    raise LocalClusterError("cannot start /job:%s/task:%d (%s): %s"
                                            % (job, task, self._bin, e), job, task, path) from None
        deadline = time.monotonic() + self._timeout
        for (job, task), offset in offsets.items():
            proc, path = self._procs[(job, task)], self.log_path(job, task)
            while True:
                # Poll before reading: once the process has exited, the text read after it is
                # all it wrote (read first, a fast crash's message could be missed).
                code = proc.poll()
                with open(path, "rb") as f:
                    f.seek(offset)
                    text = f.read()
                if _LISTENING in text:
                    break
                if code is not None or time.monotonic() > deadline:
                    why = ("exited with status %d" % code if code is not None else
                           "did not listen within %g s" % self._timeout)
                    tail = "\n".join(text.decode(errors="replace").splitlines()[-_TAIL_LINES:])
                    raise LocalClusterError(
                        "tensorflux-server /job:%s/task:%d (%s) %s; the end of %s:\n%s"
                        % (job, task, self._bin, why, path, tail or "(empty)"),
                        job, task, path, tail)
                time.sleep(0.02)
        return self._procs[tasks[-1]] if tasks else None

    def _stop_tasks(self):
        procs, self._procs = list(self._procs.values()), {}
        self._stop_procs(procs)

    def _stop_procs(self, procs):
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self._grace
        for p in procs:
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
