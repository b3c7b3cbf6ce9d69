"""tx.train.ClusterSpec: the jobs of a cluster and the addresses of their tasks (TF 1.x's
tf.train.ClusterSpec), pure Python.

    cluster = tx.train.ClusterSpec({"ps": ["ps0:2222"],
                                    "worker": ["w0:2222", "w1:2222"]})
    cluster.jobs                        # ['ps', 'worker']
    cluster.num_tasks("worker")         # 2
    cluster.task_address("worker", 1)   # 'w1:2222'

A job is a list of addresses (task i at index i) or a dict {task index: address} for a sparse
job (tasks missing from a dict have no address). Bad input is a TypeError or ValueError, as in
TF ("No such job in cluster: 'x'", "No task with index 3 in job 'worker'").
"""


def _job_tasks(job_name, tasks):
    if isinstance(tasks, dict):
        out = {}
        for i, addr in tasks.items():
            try:
                index = int(i)
            except (TypeError, ValueError):
                raise TypeError("Task index for job %r must be an integer, got %r"
                                % (job_name, i)) from None
            if index < 0:
                raise ValueError("Task index for job %r must be non-negative, got %d"
                                 % (job_name, index))
            out[index] = _address(job_name, addr)
        return out
    if isinstance(tasks, (list, tuple)):
        return {i: _address(job_name, addr) for i, addr in enumerate(tasks)}
    raise TypeError("The tasks for job %r must be a list or a dict, got %r" % (job_name, tasks))


def _address(job_name, addr):
    if isinstance(addr, bytes):
        addr = addr.decode()
    if not isinstance(addr, str):
        raise TypeError("Task address for job %r must be a string, got %r" % (job_name, addr))
    return addr


class ClusterSpec:
    """The jobs and task addresses of a cluster (see the module docstring). Built from a dict
    {job: [address, ...] or {index: address}}, another ClusterSpec, or a ClusterDef proto
    (tensorflux.cluster_pb2)."""

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            self._spec = {job: dict(tasks) for job, tasks in cluster._spec.items()}
            self._sparse = set(cluster._sparse)
        elif isinstance(cluster, dict):
            self._spec, self._sparse = {}, set()
            for job, tasks in cluster.items():
                if isinstance(job, bytes):
                    job = job.decode()
                if not isinstance(job, str) or not job:
                    raise TypeError("Job names must be non-empty strings, got %r" % (job,))
                self._spec[job] = _job_tasks(job, tasks)
                if isinstance(tasks, dict):
                    self._sparse.add(job)
        elif hasattr(cluster, "job"):  # a ClusterDef
            self._spec, self._sparse = {}, set()
            for job_def in cluster.job:
                self._spec[job_def.name] = {int(i): a for i, a in job_def.tasks.items()}
                self._sparse.add(job_def.name)
        else:
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to "
                            "lists of network addresses, or a `ClusterDef` protocol buffer")

    # -------------------------------------------------------------- TF's API
    def __bool__(self):
        return bool(self._spec)

    __nonzero__ = __bool__

    def __eq__(self, other):
        return isinstance(other, ClusterSpec) and self._spec == other._spec

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    def __str__(self):
        return "ClusterSpec(%r)" % (self.as_dict(),)

    __repr__ = __str__

    @property
    def jobs(self):
        """The job names, sorted."""
        return sorted(self._spec)

    def _tasks(self, job_name):
        try:
            return self._spec[job_name]
        except KeyError:
            raise ValueError("No such job in cluster: %r" % (job_name,)) from None

    def num_tasks(self, job_name):
        """The number of tasks of the job (those with an address)."""
        return len(self._tasks(job_name))

    def task_indices(self, job_name):
        """The task indices of the job, sorted."""
        return sorted(self._tasks(job_name))

    def task_address(self, job_name, task_index):
        """The address of task `task_index` of the job."""
        tasks = self._tasks(job_name)
        try:
            return tasks[task_index]
        except KeyError:
            raise ValueError("No task with index %r in job %r" % (task_index, job_name)) from None

    def job_tasks(self, job_name):
        """The job's addresses as a list indexed by task (None where a task is missing)."""
        tasks = self._tasks(job_name)
        if not tasks:
            return []
        out = [None] * (max(tasks) + 1)
        for i, addr in tasks.items():
            out[i] = addr
        return out

    def as_dict(self):
        """{job: [addresses]} for dense jobs, {job: {index: address}} for sparse ones."""
        out = {}
        for job in self.jobs:
            tasks = self._spec[job]
            if job in self._sparse or sorted(tasks) != list(range(len(tasks))):
                out[job] = dict(tasks)
            else:
                out[job] = [tasks[i] for i in range(len(tasks))]
        return out

    def as_cluster_def(self):
        """The ClusterDef proto (tensorflux.cluster_pb2, TF's field numbers)."""
        try:
            from tensorflux import cluster_pb2  # pylint: disable=g-import-not-at-top
        except ImportError:
            raise NotImplementedError(
                "as_cluster_def needs proto/tensorflux/cluster.proto (the distributed runtime), "
                "which this build does not have") from None
        cluster_def = cluster_pb2.ClusterDef()
        for job in self.jobs:
            job_def = cluster_def.job.add()
            job_def.name = job
            for i, addr in sorted(self._spec[job].items()):
                job_def.tasks[i] = addr
        return cluster_def
