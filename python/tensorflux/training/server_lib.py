"""tx.train.Server: one task of a cluster (master + worker services) in this process, as TF 1.x's
tf.train.Server. Its `target` ("grpc://host:port") is what tx.Session takes to run graphs on the
cluster through this task's master."""

from tensorflux import _pywrap_tensorflux as _pywrap
from tensorflux import cluster_pb2
from tensorflux import config_pb2
from tensorflux.training.cluster_spec import ClusterSpec


def _cluster_def(cluster):
    """A ClusterDef from a ClusterDef, a dict {job: [addresses] or {index: address}} or a
    tx.train.ClusterSpec."""
    if isinstance(cluster, cluster_pb2.ClusterDef):
        return cluster
    return ClusterSpec(cluster).as_cluster_def()


class Server:
    """A tensorflux server for one task of `server_or_cluster_def`.

    Args:
      server_or_cluster_def: a ServerDef, or the cluster (ClusterDef, dict, tx.train.ClusterSpec).
      job_name, task_index: this task (default: the cluster's only job, task 0).
      protocol: "grpc" (the only one).
      config: a tx.ConfigProto: the default of sessions on this server's master
        (device_count for this task's devices).
      start: serve from construction on (default); with False, from start() on (as TF).
      bind_host: the address to listen on (default 127.0.0.1; a non-loopback one is refused
        without TLS and a token, see docs/DISTRIBUTED.md).
      token_file: a shared token every call must carry.
    """

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True, bind_host="127.0.0.1", token_file=""):
        if isinstance(server_or_cluster_def, cluster_pb2.ServerDef):
            server_def = cluster_pb2.ServerDef()
            server_def.CopyFrom(server_or_cluster_def)
        else:
            server_def = cluster_pb2.ServerDef()
            server_def.cluster.CopyFrom(_cluster_def(server_or_cluster_def))
        if job_name is not None:
            server_def.job_name = job_name
        if not server_def.job_name:
            if len(server_def.cluster.job) != 1:
                raise ValueError("job_name must be given for a cluster of several jobs")
            server_def.job_name = server_def.cluster.job[0].name
        if task_index is not None:
            server_def.task_index = task_index
        server_def.protocol = protocol or server_def.protocol or "grpc"
        if config is not None:
            if not isinstance(config, config_pb2.ConfigProto):
                raise TypeError("config must be a tx.ConfigProto")
            server_def.default_session_config.CopyFrom(config)
        self._server_def = server_def
        self._bind_host = bind_host
        self._token_file = token_file
        self._server = None
        if start:
            self.start()

    @property
    def target(self):
        """"grpc://host:port": pass it to tx.Session (known before start(), as TF)."""
        if self._server is not None:
            return self._server.target
        for job in self._server_def.cluster.job:
            if job.name == self._server_def.job_name and \
                    self._server_def.task_index in job.tasks:
                return "grpc://" + job.tasks[self._server_def.task_index]
        raise ValueError("task %d of job %r is not in the cluster"
                         % (self._server_def.task_index, self._server_def.job_name))

    @property
    def server_def(self):
        return self._server_def

    def start(self):
        """Starts serving (a no-op when serving already, as after Server(start=True))."""
        if self._server is None:
            self._server = _pywrap.Server(self._server_def.SerializeToString(), self._bind_host,
                                          self._token_file)

    def join(self):
        """Blocks until the server is stopped."""
        if self._server is None:
            raise RuntimeError("join() on a server that was not started (start=False): call "
                               "start() first")
        self._server.join()

    def stop(self):
        """Stops serving and closes the sessions of this server's master."""
        if self._server is not None:
            self._server.stop()

    @staticmethod
    def create_local_server(config=None, start=True):
        """A single-task cluster on a free loopback port (TF's create_local_server)."""
        import socket  # pylint: disable=g-import-not-at-top
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        return Server({"localhost": ["127.0.0.1:%d" % port]}, job_name="localhost",
                      task_index=0, config=config, start=start)
