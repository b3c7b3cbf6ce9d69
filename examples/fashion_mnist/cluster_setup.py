"""Where train.py runs its towers: resolve(--cluster, ...) gives a Cluster (the session target,
one device per tower, the device of the shared ops and variables, the session config), and
LocalCluster starts the servers of the default "local" cluster.

    with LocalCluster(server_bin, num_ps=1, num_workers=2, log_dir=out) as servers:
        servers.spec        # {"ps": ["127.0.0.1:P0"], "worker": ["127.0.0.1:P1", ...]}
        servers.target      # "grpc://<worker 0>"

No orphans: each server is started in its own process group (so a Ctrl-C in the terminal
reaches only this process, which can still save a checkpoint through the servers before it stops
them) with PR_SET_PDEATHSIG = SIGTERM (Linux), so the kernel stops it if this process dies
without running its clean-up (SIGKILL). stop() (also at exit, on an error, and from __exit__)
sends SIGTERM, waits up to `grace` seconds, then SIGKILLs what is left. TX_SERVER_ARGS (in the
environment) adds tensorflux-server flags to the local servers, e.g. "--intra_op_threads 1".
"""

import atexit
import ctypes
import json
import os
import signal
import socket
import subprocess
import time

import tensorflux as tx

_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    # Runs in the child between fork and exec.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def free_ports(n):
    """n distinct loopback ports free right now (bound then released: a server started soon after
    gets them unless another process races for the same port; LocalCluster retries then)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class ClusterError(RuntimeError):
    pass


class LocalCluster:
    """num_ps ps tasks and num_workers worker tasks as child tensorflux-server processes; logs in
    log_dir/<job><task>.log. Raises ClusterError when a server does not start."""

    def __init__(self, server_bin, num_ps=1, num_workers=2, log_dir=".", start_timeout=60.0,
                 attempts=3, server_args=()):
        if not os.access(server_bin, os.X_OK):
            raise ClusterError("%s not found: build it with `make build`" % server_bin)
        self._bin = server_bin
        self._args = list(server_args)
        self._log_dir = log_dir
        self.procs = {}
        atexit.register(self.stop)
        for attempt in range(attempts):
            ports = free_ports(num_ps + num_workers)
            addrs = ["127.0.0.1:%d" % p for p in ports]
            self.spec = {"ps": addrs[:num_ps], "worker": addrs[num_ps:]}
            try:
                self._start_all(start_timeout)
                return
            except ClusterError:
                self.stop()
                if attempt + 1 == attempts:
                    raise

    @property
    def target(self):
        return "grpc://" + self.spec["worker"][0]

    def _start_all(self, timeout):
        flag = ";".join("%s=%s" % (job, ",".join(a)) for job, a in self.spec.items())
        logs = {}
        for job, addrs in self.spec.items():
            for task in range(len(addrs)):
                path = os.path.join(self._log_dir, "%s%d.log" % (job, task))
                with open(path, "wb") as log:
                    self.procs[(job, task)] = subprocess.Popen(
                        [self._bin, "--cluster", flag, "--job", job, "--task", str(task)]
                        + self._args,
                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                        start_new_session=True, preexec_fn=_die_with_parent)
                logs[(job, task)] = path
        deadline = time.time() + timeout
        for key, path in logs.items():
            while True:
                with open(path, "rb") as f:
                    text = f.read()
                if b"listening on" in text:
                    break
                if self.procs[key].poll() is not None or time.time() > deadline:
                    raise ClusterError("tensorflux-server %s:%d did not start: %s" % (
                        key[0], key[1], text.decode(errors="replace").strip()[-500:]))
                time.sleep(0.05)

    def stop(self, grace=5.0):
        """Stops every server (SIGTERM, then SIGKILL after `grace` s); idempotent."""
        procs, self.procs = self.procs, {}
        for p in procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.time() + grace
        for p in procs.values():
            try:
                p.wait(max(0.0, deadline - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def pids(self):
        return [p.pid for p in self.procs.values()]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Cluster:
    """target: the session target ('' in process); tower_devices: one device (a string or a
    device function) per tower; shared_device: where the global step, the averaged gradients and
    the update run (variables go to the ps through it); config: the tx.ConfigProto of the
    session; description: one line for the log."""

    def __init__(self, target, tower_devices, shared_device, config, description, servers=None):
        self.target = target
        self.tower_devices = tower_devices
        self.shared_device = shared_device
        self.config = config
        self.description = description
        self._servers = servers

    def close(self):
        if self._servers is not None:
            self._servers.stop()

    def server_pids(self):
        return self._servers.pids() if self._servers is not None else []


def _grpc_cluster(target, ps_tasks, worker_tasks, description, servers=None):
    """Towers on /job:worker/task:i (i in worker_tasks), variables on the ps tasks (round robin;
    on worker 0 when there is no ps)."""
    def device_fn(task):
        worker = "/job:worker/task:%d" % task
        if ps_tasks:
            return tx.train.replica_device_setter(ps_tasks=ps_tasks, worker_device=worker)
        return worker
    # A distributed step's ops wait at most this long for a task (a dead server fails the step
    # instead of hanging the run).
    config = tx.ConfigProto(operation_timeout_in_ms=120000)
    return Cluster(target, [device_fn(t) for t in worker_tasks], device_fn(worker_tasks[0]),
                   config, description, servers)


def _from_spec(spec, master, description, servers=None):
    if not spec.get("worker"):
        raise ClusterError("the cluster has no worker job: %s" % (spec,))
    return _grpc_cluster("grpc://" + master, len(spec.get("ps", [])),
                         list(range(len(spec["worker"]))), description, servers)


def _from_tf_config(text):
    try:
        conf = json.loads(text)
        spec = conf["cluster"]
        task = conf.get("task", {"type": "worker", "index": 0})
        master = spec[task.get("type", "worker")][int(task.get("index", 0))]
    except (ValueError, KeyError, IndexError, TypeError) as e:
        raise ClusterError("TF_CONFIG is not a usable cluster: %s (%r)" % (e, text)) from None
    return _from_spec(spec, master, "TF_CONFIG cluster %s, master %s" % (spec, master))


def _from_master(target):
    """The ps and worker tasks of a running cluster, read from its master's device list."""
    tasks = {}
    try:
        with tx.Graph().as_default(), tx.Session(target) as sess:
            for d in sess.list_devices():
                spec = tx.DeviceSpec.from_string(d.name)
                if spec.job:
                    tasks.setdefault(spec.job, set()).add(spec.task or 0)
    except tx.errors.OpError as e:
        raise ClusterError("cannot reach the cluster at %s: %s" % (target, e.message)) from None
    if "worker" not in tasks:
        raise ClusterError("the cluster at %s has no worker job (jobs: %s)"
                           % (target, sorted(tasks)))
    return _grpc_cluster(target, len(tasks.get("ps", ())), sorted(tasks["worker"]),
                         "cluster at %s: %d ps, %d workers" % (
                             target, len(tasks.get("ps", ())), len(tasks["worker"])))


def resolve(flag, workers, server_bin, log_dir):
    """The Cluster for --cluster `flag` (None: TF_CONFIG when set, else "local")."""
    if flag is None:
        flag = "tf_config" if os.environ.get("TF_CONFIG") else "local"
    if flag == "tf_config":
        return _from_tf_config(os.environ["TF_CONFIG"])
    if flag == "none":
        config = tx.ConfigProto(device_count={"CPU": workers})
        return Cluster("", ["/device:CPU:%d" % i for i in range(workers)], "/device:CPU:0",
                       config, "in process, %d CPU towers" % workers)
    if flag == "local":
        logs = os.path.join(log_dir, "server_logs")
        os.makedirs(logs, exist_ok=True)
        servers = LocalCluster(server_bin, num_ps=1, num_workers=workers, log_dir=logs,
                               server_args=os.environ.get("TX_SERVER_ARGS", "").split())
        return _from_spec(servers.spec, servers.spec["worker"][0],
                          "local cluster of tensorflux-server processes: 1 ps + %d workers"
                          % workers, servers)
    if flag.startswith("grpc://"):
        return _from_master(flag)
    raise ClusterError("--cluster must be local, none or grpc://HOST:PORT, got %r" % flag)
