"""tensorflux-server child processes on free loopback ports, for the integration tests and the
distributed benchmarks (bench/dist_train_bench.py imports this file too).

    with LocalClusterProcesses({"ps": 1, "worker": 2}, log_dir) as cluster:
        sess = tx.Session(cluster.target("worker", 0))

Each server's stderr goes to <log_dir>/<job><task>.log; start_server returns once the server has
logged "listening on" (RuntimeError with the log when it exits or does not get there in 60 s).
"""

import os
import signal
import socket
import subprocess
import time

import tensorflux as tx


def server_binary():
    """build/bin/tensorflux-server next to the imported package (or $TX_BIN_DIR's)."""
    bin_dir = os.environ.get("TX_BIN_DIR") or os.path.join(os.path.dirname(tx.__file__), "..",
                                                           "..", "bin")
    return os.path.abspath(os.path.join(bin_dir, "tensorflux-server"))


def free_port():
    """A loopback port that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(spec, job, task, log_dir, args=(), env=None):
    """Starts `tensorflux-server --cluster spec --job job --task task [args]` with `env` added to
    this process's environment; returns its Popen once it listens."""
    path = os.path.join(log_dir, "%s%d.log" % (job, task))
    full_env = dict(os.environ)
    full_env.update(env or {})
    with open(path, "ab") as log:
        p = subprocess.Popen([server_binary(), "--cluster", spec, "--job", job, "--task",
                              str(task)] + list(args),
                             stdout=subprocess.DEVNULL, stderr=log, env=full_env)
    deadline = time.time() + 60
    while time.time() < deadline:
        with open(path, "rb") as f:
            if b"listening on" in f.read():
                return p
        if p.poll() is not None:
            raise RuntimeError(open(path).read())
        time.sleep(0.05)
    p.kill()
    p.wait()
    raise RuntimeError("server did not start: " + open(path).read())


class LocalClusterProcesses:
    """One tensorflux-server process per task of `jobs` ({job name: number of tasks}) on free
    loopback ports. args_for(job, task) and env_for(job, task), when given, return the extra
    flags and environment of a task. Stopped with SIGTERM (SIGKILL after 10 s) on exit."""

    def __init__(self, jobs, log_dir, args_for=None, env_for=None):
        self.addresses = {job: ["127.0.0.1:%d" % free_port() for _ in range(n)]
                          for job, n in jobs.items()}
        self.spec = ";".join("%s=%s" % (job, ",".join(a)) for job, a in self.addresses.items())
        self._log_dir = log_dir
        self._args_for = args_for or (lambda job, task: ())
        self._env_for = env_for or (lambda job, task: None)
        self.procs = {}

    def __enter__(self):
        try:
            for job, addresses in self.addresses.items():
                for task in range(len(addresses)):
                    self.start(job, task)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self, job, task):
        """(Re)starts one task on its address."""
        self.procs[(job, task)] = start_server(self.spec, job, task, self._log_dir,
                                               self._args_for(job, task),
                                               self._env_for(job, task))
        return self.procs[(job, task)]

    def target(self, job, task):
        return "grpc://" + self.addresses[job][task]

    def stop(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
