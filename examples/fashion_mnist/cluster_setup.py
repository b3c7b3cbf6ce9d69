"""Where train.py runs its towers: resolve(--cluster, ...) gives a Cluster (the session target,
one device per tower, the device of the shared ops and variables, the session config). The
default "local" cluster is a tx.train.LocalCluster of 1 ps + --workers tensorflux-server
processes (no orphans: see its docstring); TX_SERVER_ARGS (in the environment) adds
tensorflux-server flags to them, e.g. "--intra_op_threads 1".
"""

import json
import os

import tensorflux as tx

from report import count


class ClusterError(RuntimeError):
    pass


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
                         "cluster at %s: %s, %s" % (target, count(len(tasks.get("ps", ())), "ps"),
                                                    count(len(tasks["worker"]), "worker")))


def resolve(flag, workers, server_bin, log_dir):
    """The Cluster for --cluster `flag` (None: TF_CONFIG when set, else "local"); server_bin
    None: the one tx.train.LocalCluster finds."""
    if flag is None:
        flag = "tf_config" if os.environ.get("TF_CONFIG") else "local"
    if flag == "tf_config":
        return _from_tf_config(os.environ["TF_CONFIG"])
    if flag == "none":
        config = tx.ConfigProto(device_count={"CPU": workers})
        return Cluster("", ["/device:CPU:%d" % i for i in range(workers)], "/device:CPU:0",
                       config, "in process, %s" % count(workers, "CPU tower"))
    if flag == "local":
        logs = os.path.join(log_dir, "server_logs")
        os.makedirs(logs, exist_ok=True)
        try:
            servers = tx.train.LocalCluster(
                num_workers=workers, num_ps=1, server_bin=server_bin, log_dir=logs,
                server_args=os.environ.get("TX_SERVER_ARGS", "").split())
        except tx.train.LocalClusterError as e:
            raise ClusterError(str(e)) from None
        return _from_spec(servers.spec, servers.spec["worker"][0],
                          "local cluster of tensorflux-server processes: 1 ps + %s"
                          % count(workers, "worker"), servers)
    if flag.startswith("grpc://"):
        return _from_master(flag)
    raise ClusterError("--cluster must be local, none or grpc://HOST:PORT, got %r" % flag)
