"""tx.train.replica_device_setter (TF 1.x's tf.train.replica_device_setter): a device function
for between-graph replication that puts variables on parameter-server tasks and everything
else on the worker.

    with tx.device(tx.train.replica_device_setter(ps_tasks=2,
                                                  worker_device="/job:worker/task:0")):
        w = tx.get_variable("w", [784, 10])   # /job:ps/task:0
        b = tx.get_variable("b", [10])        # /job:ps/task:1
        y = tx.matmul(x, w) + b               # /job:worker/task:0

Ops whose type is in `ps_ops` (default: TF's STANDARD_PS_OPS, the variable-creating ops such as
VarHandleOp and VariableV2) go to `ps_device`; when ps_device names a job and the op's own
device does not name another one, `ps_strategy(op)` picks the task. The other ops go to
`worker_device`. With merge_devices (the default) a device the op already has wins field by
field over the one chosen here. A variable's own ops (its initializer's Assign, its reads, its
updates, the optimizer's update of it) follow its handle to the ps: tx.Variable and the
optimizers create them on the handle's device, as TF does; the initial value is computed on the
worker.

Strategies: GreedyLoadBalancingStrategy(num_tasks, load_fn=byte_size_load_fn), the default,
puts each variable on the task with the least load so far, load being the variable's size in
bytes ("greedy by size": a large embedding and many small biases still balance); for variables
of equal size it gives the same tasks as round-robin. TF 1.x's default is round-robin over the
ps tasks in creation order: pass ps_strategy=tx.train.RoundRobinStrategy(ps_tasks) for it.
"""

from tensorflux.framework import device as pydev
from tensorflux.framework import dtypes
from tensorflux.framework import tensor_shape
from tensorflux.training import cluster_spec

# TF's list: the ops that create state a parameter server holds.
STANDARD_PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable",
                   "MutableHashTableV2", "MutableHashTableOfTensors",
                   "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
                   "MutableDenseHashTableV2", "VarHandleOp", "BoostedTreesEnsembleResourceHandleOp",
                   "BoostedTreesQuantileStreamResourceHandleOp")


class RoundRobinStrategy:
    """Task 0, 1, ..., num_tasks - 1, 0, ... in the order ops are placed."""

    def __init__(self, num_tasks):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op):
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


def byte_size_load_fn(op):
    """The size in bytes of the variable `op` creates (from its `shape` and `dtype` attrs, or
    its output's static shape); 0 when the shape is not fully known."""
    node_def = op.node_def
    shape = None
    if "shape" in node_def.attr:
        shape = tensor_shape.TensorShape(node_def.attr["shape"].shape)
    elif op.outputs:
        shape = op.outputs[0].get_shape()
    if shape is None or not shape.is_fully_defined():
        return 0
    if "dtype" in node_def.attr:
        dtype = dtypes.as_dtype(node_def.attr["dtype"].type).base_dtype
    else:
        dtype = op.outputs[0].dtype.base_dtype
    return shape.num_elements() * dtype.size


class GreedyLoadBalancingStrategy:
    """Each op goes to the ps task with the least load so far (ties: the lowest task); its
    load_fn(op) (default byte_size_load_fn) is then added to that task's load."""

    def __init__(self, num_tasks, load_fn=byte_size_load_fn):
        if num_tasks <= 0:
            raise ValueError("num_tasks must be positive, got %r" % (num_tasks,))
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = [0] * num_tasks

    def __call__(self, op):
        task = min(range(self._num_tasks), key=lambda i: (self._ps_loads[i], i))
        self._ps_loads[task] += self._load_fn(op)
        return task


class _ReplicaDeviceChooser:
    def __init__(self, ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = frozenset(ps_ops)
        self._ps_strategy = ps_strategy

    def device_function(self, op):
        if not self._merge_devices and op.device:
            return op.device
        current = pydev.DeviceSpec.from_string(op.device or "")
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            ps_device = pydev.DeviceSpec.from_string(self._ps_device)
            if ps_device.job and (not current.job or current.job == ps_device.job):
                ps_device.task = self._ps_strategy(op)
            return ps_device.make_merged_spec(current).to_string()
        worker = pydev.DeviceSpec.from_string(self._worker_device or "")
        return worker.make_merged_spec(current).to_string()


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for tx.device (see the module docstring), or None when there are no
    ps tasks (no ps job in `cluster`, ps_tasks 0). `cluster` (a ClusterSpec or its dict) sets
    ps_tasks to the number of tasks of ps_device's job. TypeError when ps_strategy is not
    callable."""
    if cluster is not None:
        spec = cluster if isinstance(cluster, cluster_spec.ClusterSpec) else (
            cluster_spec.ClusterSpec(cluster))
        ps_job = pydev.DeviceSpec.from_string(ps_device or "").job or "ps"
        if ps_job not in spec.jobs or not spec.num_tasks(ps_job):
            return None
        ps_tasks = spec.num_tasks(ps_job)
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if ps_strategy is None:
        ps_strategy = GreedyLoadBalancingStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    return _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices, ps_ops,
                                 ps_strategy).device_function
