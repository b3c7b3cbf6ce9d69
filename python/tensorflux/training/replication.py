"""In-graph replication: one client builds a tower per device (or per worker task), each
computing the loss and gradients of its shard of the batch with shared variables; the
gradients are averaged and applied once per step. This is TF 1.x's multi-tower pattern
(tensorflow/models, tutorials/image/cifar10/cifar10_multi_gpu_train.py: tower_loss under
tf.device + tf.name_scope('tower_i') with variable reuse, average_gradients on the CPU,
apply_gradients once):

    opt = tx.train.GradientDescentOptimizer(0.1)
    tower_grads = []
    for i in tx.train.towers(["/device:CPU:0", "/device:CPU:1"]):
        loss = model_loss(shards[i])                # variables created by tower 0, reused after
        tower_grads.append(opt.compute_gradients(loss))
    train_op = opt.apply_gradients(tx.train.average_gradients(tower_grads), global_step=step)

With device strings such as "/job:worker/task:1" the towers run on the cluster's workers, and
the variables go where their own device scope (e.g. tx.train.replica_device_setter or
"/job:ps/task:0") puts them. Batch normalization synchronized across the towers of a step:
tx.nn.sync_batch_normalization (ops/sync_batch_norm.py).
"""

from tensorflux.framework import ops
from tensorflux.ops import math_ops2
from tensorflux.ops import variable_scope


def towers(devices, name="tower"):
    """Yields 0, 1, ... len(devices) - 1; while the loop body builds tower i, ops go to
    devices[i] under the name scope "<name>_<i>", and tx.get_variable reuses the variables
    tower 0 created (TF's reuse_variables() after the first tower)."""
    devices = list(devices)
    if not devices:
        raise ValueError("towers needs at least one device")
    with variable_scope.variable_scope(variable_scope.get_variable_scope()):
        for i, device in enumerate(devices):
            with ops.device(device), ops.name_scope("%s_%d" % (name, i)):
                yield i
            variable_scope.get_variable_scope().reuse_variables()


def average_gradients(tower_grads):
    """[(mean gradient, variable)] from tower_grads, one [(gradient, variable)] list per tower
    (the same variables in the same order, as compute_gradients gives them). A variable whose
    gradient is None in every tower keeps None; ValueError when the towers' lists differ."""
    tower_grads = [list(g) for g in tower_grads]
    if not tower_grads:
        raise ValueError("average_gradients needs the gradients of at least one tower")
    n = len(tower_grads[0])
    if any(len(g) != n for g in tower_grads):
        raise ValueError("average_gradients: the towers have different numbers of gradients: %s"
                         % [len(g) for g in tower_grads])
    out = []
    for pairs in zip(*tower_grads):
        var = pairs[0][1]
        if any(v is not var for _, v in pairs):
            raise ValueError("average_gradients: the towers list different variables at one "
                             "position: %s" % [v.name for _, v in pairs])
        grads = [g for g, _ in pairs if g is not None]
        if not grads:
            out.append((None, var))
            continue
        if len(grads) != len(pairs):
            raise ValueError("average_gradients: %s has a gradient in some towers only"
                             % var.name)
        with ops.name_scope("average_gradients"):
            total = math_ops2.add_n(grads) if len(grads) > 1 else grads[0]
            out.append((total * (1.0 / len(grads)), var))
    return out
